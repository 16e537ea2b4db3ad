#!/usr/bin/env node
/**
 * The DBA's keyed upsert the issue 26 bench compares a keyed re-import with: one connection, one
 * transaction; the file COPYed into a temporary staging table, then one
 * `INSERT … SELECT … ON CONFLICT (isrc_code) DO UPDATE … WHERE (…) IS DISTINCT FROM (…)`, so rows
 * that did not change are not written. Needs a unique index on tracks(isrc_code) (the bench makes
 * one for the comparison). Prints `{"ms":…,"inserted_or_updated":…}`.
 *
 *   node bench/peers/staging-upsert.js --url postgres://… --file tracks-keyed.csv
 */
import { createReadStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import copyStreams from 'pg-copy-streams';

const arg = (name) => process.argv[process.argv.indexOf(name) + 1];
const url = arg('--url');
const file = arg('--file');
const started = performance.now();
const client = new pg.Client({ connectionString: url });
await client.connect();
try {
  const header = await new Promise((resolve, reject) => {
    let text = '';
    createReadStream(file, { encoding: 'utf8', end: 64 * 1024 })
      .on('data', (d) => (text += d))
      .on('end', () => resolve(text.split('\n')[0].trim()))
      .on('error', reject);
  });
  const cols = header.split(',');
  const list = cols.join(', ');
  await client.query('begin');
  await client.query(`create temp table staging on commit drop as select ${list} from tracks with no data`);
  await pipeline(createReadStream(file), client.query(copyStreams.from(`copy staging (${list}) from stdin with (format csv, header true)`)));
  const set = cols.filter((c) => c !== 'isrc_code').map((c) => `${c} = excluded.${c}`).join(', ');
  const res = await client.query(
    `insert into tracks (${list}) select ${list} from staging on conflict (isrc_code) do update set ${set}, updated = now() ` +
      `where (${cols.map((c) => `tracks.${c}`).join(', ')}) is distinct from (${cols.map((c) => `excluded.${c}`).join(', ')})`,
  );
  await client.query('commit');
  process.stdout.write(`${JSON.stringify({ ms: Math.round(performance.now() - started), inserted_or_updated: res.rowCount })}\n`);
} finally {
  await client.end();
}
