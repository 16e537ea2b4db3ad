#!/usr/bin/env node
/**
 * PGlite's own fast paths, run in one process over a catalog data directory (so the service must
 * not hold it): the limit each catalog command on PGlite is measured against.
 *   node bench/peers/pglite-peer.js --dir DIR --file tracks.csv --ops truncate,copy,export,upsert,...
 * Ops: truncate | copy (COPY FROM '/dev/blob') | export (COPY (select *) TO '/dev/blob', written to
 * --out) | upsert (the direct-SQL json_to_recordset script) | count | seed (labels+releases CSVs
 * from --labels/--releases, artists from --artists) | link (releases list their tracks). Prints one JSON object: { op: ms, ... } — time after the data directory
 * is open, because the service it is compared with already has it open.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { ARTIST_COLUMNS, LINK_RELEASES_SQL, TRACK_COLUMNS, LABEL_COLUMNS, RELEASE_COLUMNS } from '../lib/generate.js';
import { upsertFile } from './direct-sql.js';

const args = Object.fromEntries(process.argv.slice(2).reduce((acc, a, i, all) => (a.startsWith('--') ? [...acc, [a.slice(2), all[i + 1]]] : acc), []));
const { openPGlite } = await import('../../dist/store/pglite.js');
const store = await openPGlite({ dataDir: args.dir });
const db = store.db;
const out = {};
const cols = TRACK_COLUMNS.map(([c]) => c).join(', ');
try {
  for (const [n, op] of (args.ops ?? '').split(',').filter(Boolean).entries()) {
    const t = performance.now();
    if (op === 'truncate') await db.exec('truncate tracks');
    else if (op === 'copy') {
      const blob = new Blob([readFileSync(args.file)]);
      await db.query(`copy tracks (${cols}) from '/dev/blob' with (format csv, header true)`, [], { blob });
    } else if (op === 'export') {
      const res = await db.query(`copy (select * from tracks) to '/dev/blob' with (format csv, header true)`);
      writeFileSync(args.out, new Uint8Array(await res.blob.arrayBuffer()));
    } else if (op === 'upsert') {
      await upsertFile((sql, params) => db.query(sql, params), args.file, Number(args.batch ?? 1000));
    } else if (op === 'count') {
      out.count = Number((await db.query('select count(*)::int as n from tracks')).rows[0].n);
      continue;
    } else if (op === 'seed') {
      await db.exec('truncate releases, labels, artists cascade');
      if (args.artists) await db.query(`copy artists (${ARTIST_COLUMNS.join(', ')}) from '/dev/blob' with (format csv, header true)`, [], { blob: new Blob([readFileSync(args.artists)]) });
      await db.query(`copy labels (${LABEL_COLUMNS.join(', ')}) from '/dev/blob' with (format csv, header true)`, [], { blob: new Blob([readFileSync(args.labels)]) });
      await db.query(`copy releases (${RELEASE_COLUMNS.join(', ')}) from '/dev/blob' with (format csv, header true)`, [], { blob: new Blob([readFileSync(args.releases)]) });
      await db.exec('analyze labels; analyze releases; analyze artists');
    } else if (op === 'link') {
      await db.exec(LINK_RELEASES_SQL);
      await db.exec('analyze releases');
    } else if (op === 'analyze') await db.exec('analyze tracks');
    else throw new Error(`unknown op ${op}`);
    out[`${n}:${op}`] = performance.now() - t;
  }
} finally {
  await store.close();
}
process.stdout.write(`${JSON.stringify(out)}\n`);
