#!/usr/bin/env node
/**
 * The strongest DBA route for a keyed re-import (issue 35): the file in a staging table
 * (staging.js), then one `MERGE INTO tracks USING staging ON isrc_code … WHEN MATCHED AND (…) IS
 * DISTINCT FROM (…) THEN UPDATE … WHEN NOT MATCHED THEN INSERT …`. Unlike `INSERT … ON CONFLICT`
 * (staging-upsert.js) it needs no unique index and does not try an insert first, so rows that did
 * not change pay no BEFORE INSERT trigger. Prints `{"ms":…,"inserted_or_updated":…}`.
 *
 *   node bench/peers/staging-merge.js --url postgres://… --file tracks-keyed.csv
 */
import { runStagedPeer } from './staging.js';

await runStagedPeer(async (client, cols) => {
  await client.query('analyze staging');
  const others = cols.filter((c) => c !== 'isrc_code');
  const res = await client.query(
    `merge into tracks t using staging s on t.isrc_code = s.isrc_code ` +
      `when matched and (${others.map((c) => `t.${c}`).join(', ')}) is distinct from (${others.map((c) => `s.${c}`).join(', ')}) ` +
      `then update set ${others.map((c) => `${c} = s.${c}`).join(', ')}, updated = now() ` +
      `when not matched then insert (${cols.join(', ')}) values (${cols.map((c) => `s.${c}`).join(', ')})`,
  );
  return res.rowCount;
});
