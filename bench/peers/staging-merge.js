#!/usr/bin/env node
/**
 * The strongest DBA route for a keyed re-import (issue 35): one connection, one transaction; the
 * file COPYed into a temporary staging table, then one
 * `MERGE INTO tracks USING staging ON isrc_code … WHEN MATCHED AND (…) IS DISTINCT FROM (…) THEN
 * UPDATE … WHEN NOT MATCHED THEN INSERT …`. Unlike `INSERT … ON CONFLICT` (staging-upsert.js) it
 * needs no unique index and does not try an insert first, so rows that did not change pay no
 * BEFORE INSERT trigger. Prints `{"ms":…,"inserted_or_updated":…}`.
 *
 *   node bench/peers/staging-merge.js --url postgres://… --file tracks-keyed.csv
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
  await client.query('analyze staging');
  const others = cols.filter((c) => c !== 'isrc_code');
  const res = await client.query(
    `merge into tracks t using staging s on t.isrc_code = s.isrc_code ` +
      `when matched and (${others.map((c) => `t.${c}`).join(', ')}) is distinct from (${others.map((c) => `s.${c}`).join(', ')}) ` +
      `then update set ${others.map((c) => `${c} = s.${c}`).join(', ')}, updated = now() ` +
      `when not matched then insert (${list}) values (${cols.map((c) => `s.${c}`).join(', ')})`,
  );
  await client.query('commit');
  process.stdout.write(`${JSON.stringify({ ms: Math.round(performance.now() - started), inserted_or_updated: res.rowCount })}\n`);
} finally {
  await client.end();
}
