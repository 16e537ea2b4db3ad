#!/usr/bin/env node
/**
 * The DBA's keyed upsert the issue 26 bench compares a keyed re-import with: the file in a
 * staging table (staging.js), then one
 * `INSERT … SELECT … ON CONFLICT (isrc_code) DO UPDATE … WHERE (…) IS DISTINCT FROM (…)`, so rows
 * that did not change are not written. Needs a unique index on tracks(isrc_code) (the bench makes
 * one for the comparison). Prints `{"ms":…,"inserted_or_updated":…}`.
 *
 *   node bench/peers/staging-upsert.js --url postgres://… --file tracks-keyed.csv
 */
import { runStagedPeer } from './staging.js';

await runStagedPeer(async (client, cols) => {
  const list = cols.join(', ');
  const set = cols.filter((c) => c !== 'isrc_code').map((c) => `${c} = excluded.${c}`).join(', ');
  const res = await client.query(
    `insert into tracks (${list}) select ${list} from staging on conflict (isrc_code) do update set ${set}, updated = now() ` +
      `where (${cols.map((c) => `tracks.${c}`).join(', ')}) is distinct from (${cols.map((c) => `excluded.${c}`).join(', ')})`,
  );
  return res.rowCount;
});
