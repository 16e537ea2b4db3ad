/**
 * Issue 26: a tracks file from another system (no ids: rows keyed by ISRC) on the PostgreSQL
 * store, side by side in one run:
 * - first import into an empty table: `catalog tracks import` vs `psql \copy` of the same file;
 * - a re-run with nothing changed: `catalog tracks import` again (every row matched by its ISRC,
 *   nothing written) vs `peers/staging-upsert.js` (COPY into a staging table, one INSERT … ON
 *   CONFLICT (isrc_code) … WHERE … IS DISTINCT FROM; it needs a unique index on isrc_code, made
 *   for it and dropped after) and `peers/staging-merge.js` (the same staging table, one MERGE …
 *   WHEN MATCHED AND … IS DISTINCT FROM … WHEN NOT MATCHED: issue 35's strongest DBA route);
 * - the peak RSS of both catalog runs (target ≤ 200 MB at 1M rows).
 * The keyed file is the bench's tracks file without id, created and updated. Run alone:
 *
 *   node bench/scenarios/keyed.js --rows 100000 [--pg postgres://postgres@127.0.0.1:5432/postgres]
 */
import { createReadStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withoutColumns } from '../lib/columns.js';
import { ARTIST_COLUMNS, artistsCsv, ensureTracksFile, GENERATOR_VERSION } from '../lib/generate.js';
import { analyzeTracks, countTracks, createScratchDatabase, dropScratchDatabase, truncateTracks, withClient } from '../lib/postgres.js';
import { assertOk, runTimed } from '../lib/proc.js';
import { CATALOG_BIN, ROOT, startCatalog } from '../lib/service.js';

const DROPPED = new Set(['id', 'created', 'updated']);

/** The tracks file without our ids and timestamps (cached beside it). */
export function keyedFile(tracksFile) {
  return withoutColumns(tracksFile, 'keyed', DROPPED);
}

const psql = (url, command) => runTimed('psql', ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', url, '-c', command]);

/** One run of the three comparisons on the scratch database at `pgUrl`. */
export async function keyedRun(pgUrl, n, tracksFile) {
  const file = await keyedFile(tracksFile);
  const header = (await new Promise((resolve) => createReadStream(file, { encoding: 'utf8', end: 4096 }).on('data', resolve))).split('\n')[0].trim();
  const service = await startCatalog({ databaseUrl: pgUrl });
  const cli = (args) => runTimed(process.execPath, [CATALOG_BIN, '--url', service.url, ...args], { cwd: ROOT });
  try {
    await truncateTracks(pgUrl);
    await analyzeTracks(pgUrl);
    const copy = assertOk(await psql(pgUrl, `\\copy tracks(${header}) from '${file}' csv header`), 'psql \\copy');
    // the DBA's re-run on the table COPY loaded (as COPY stores empty cells: nulls), nothing changed
    await withClient(pgUrl, (c) => c.query('create unique index if not exists tracks_isrc_bench on tracks (isrc_code)'));
    let peer;
    try {
      peer = assertOk(await runTimed(process.execPath, [join(ROOT, 'bench/peers/staging-upsert.js'), '--url', pgUrl, '--file', file]), 'staging-table upsert');
      if (JSON.parse(peer.stdout).inserted_or_updated !== 0) throw new Error(`the staging upsert wrote rows of an unchanged file: ${peer.stdout.trim()}`);
    } finally {
      await withClient(pgUrl, (c) => c.query('drop index if exists tracks_isrc_bench'));
    }
    // the strongest DBA route (issue 35): MERGE from a staging table, no unique index, no insert tried first
    const merge = assertOk(await runTimed(process.execPath, [join(ROOT, 'bench/peers/staging-merge.js'), '--url', pgUrl, '--file', file]), 'staging-table MERGE');
    if (JSON.parse(merge.stdout).inserted_or_updated !== 0) throw new Error(`the staging MERGE wrote rows of an unchanged file: ${merge.stdout.trim()}`);
    await truncateTracks(pgUrl);
    await analyzeTracks(pgUrl);
    const first = assertOk(await cli(['tracks', 'import', file, '--quiet']), 'catalog tracks import (keyed, first)');
    if ((await countTracks(pgUrl)) !== n) throw new Error(`first keyed import did not leave ${n} rows`);
    const again = assertOk(await cli(['tracks', 'import', file]), 'catalog tracks import (keyed, re-run)');
    if (!/0 inserted, 0 updated, [\d,]+ unchanged/.test(again.stderr)) throw new Error(`the re-run changed something: ${again.stderr.trim().split('\n')[0]}`);
    // the same re-run comparing every row (--recheck): what it costs when something else wrote meanwhile
    const full = assertOk(await cli(['tracks', 'import', file, '--recheck']), 'catalog tracks import (keyed, --recheck)');
    if (!/0 inserted, 0 updated, [\d,]+ unchanged/.test(full.stderr) || /nothing was sent/.test(full.stderr)) throw new Error(`the --recheck re-run did not compare: ${full.stderr.trim()}`);
    const mb = (r) => (r.peakKb ? Math.round(r.peakKb / 1024) : null);
    return { rows: n, copyMs: Math.round(copy.ms), firstMs: Math.round(first.ms), firstRssMb: mb(first), rerunMs: Math.round(again.ms), rerunRssMb: mb(again), recheckMs: Math.round(full.ms), recheckRssMb: mb(full), peerMs: Math.round(peer.ms), mergeMs: Math.round(merge.ms) };
  } finally {
    await service.stop();
    for (const side of ['.rejects.csv', '.checkpoint.json']) rmSync(`${file}${side}`, { force: true });
  }
}

/** For bench/run.js: `keyed.{copy,first,rerun,peer}.N` (ms) and `keyed.{first,rerun}.rss.N` (MB). */
export async function keyedSize(ctx, n) {
  const keys = ['copy', 'first', 'rerun', 'recheck', 'peer', 'merge'].map((k) => `keyed.${k}.${n}`);
  await ctx.R.attempt([...keys, `keyed.first.rss.${n}`, `keyed.rerun.rss.${n}`, `keyed.recheck.rss.${n}`], async () => {
    const r = await keyedRun(ctx.pgUrl, n, ctx.tracksFile(n));
    ctx.R.add(`keyed.copy.${n}`, r.copyMs);
    ctx.R.add(`keyed.first.${n}`, r.firstMs);
    ctx.R.add(`keyed.rerun.${n}`, r.rerunMs);
    ctx.R.add(`keyed.recheck.${n}`, r.recheckMs);
    ctx.R.add(`keyed.recheck.rss.${n}`, r.recheckRssMb);
    ctx.R.add(`keyed.peer.${n}`, r.peerMs);
    ctx.R.add(`keyed.merge.${n}`, r.mergeMs);
    ctx.R.add(`keyed.first.rss.${n}`, r.firstRssMb);
    ctx.R.add(`keyed.rerun.rss.${n}`, r.rerunRssMb);
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const arg = (name, dflt) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : dflt);
  const n = Number(arg('--rows', '100000'));
  const admin = arg('--pg', 'postgres://postgres@127.0.0.1:5432/postgres');
  const name = `catalog_keyed_${process.pid}`;
  const dir = mkdtempSync(join(tmpdir(), 'bench-keyed-'));
  const tracks = await ensureTracksFile(join(ROOT, '.bench', 'data', `tracks-${n}-v${GENERATOR_VERSION}.csv`), n);
  const url = await createScratchDatabase(admin, name);
  try {
    // the tracks credit the bench's artists by id: they must exist
    writeFileSync(join(dir, 'artists.csv'), artistsCsv());
    await withClient(url, (c) => c.query('select 1'));
    assertOk(await runTimed('psql', ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', url, '-c', `\\copy artists(${ARTIST_COLUMNS.join(', ')}) from '${join(dir, 'artists.csv')}' csv header`]), 'psql \\copy artists');
    for (let run = 0; run < Number(arg('--runs', '1')); run++) process.stdout.write(`${JSON.stringify(await keyedRun(url, n, tracks))}\n`);
  } finally {
    await dropScratchDatabase(admin, name);
    rmSync(dir, { recursive: true, force: true });
  }
}
