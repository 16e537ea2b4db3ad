/**
 * Issue 36: loading tracks at the database's own speed with every link still guarded, on both
 * stores, side by side in one run:
 * - plain tracks (the tracks file without its credit columns): `catalog tracks import` against
 *   `psql \copy` into `tracks_plain`, a copy of the table with its indexes and without triggers
 *   (the physical limit), and `\copy` into `tracks` itself (what an outside writer pays);
 * - tracks with credits (the bench's tracks file: two to four credits a track, by artist id and
 *   name, and writers by name only): the same three on PostgreSQL, and `catalog tracks import` on
 *   the embedded store (a fresh catalog directory), in the command's own process and through the
 *   background holder as a user's default runs it.
 * Keys: `links.<kind>.<side>.<n>` in ms, kind plain|credits, side pg.plain|pg.tracks|pg.catalog|pglite.catalog|pglite.holder.
 * Run alone (prints one JSON line per run):
 *
 *   node bench/scenarios/links.js --rows 100000 --kind credits [--stores postgres,pglite] [--runs 1]
 */
import { createReadStream, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withoutColumns } from '../lib/columns.js';
import { ARTIST_COLUMNS, artistsCsv, ensureTracksFile, GENERATOR_VERSION } from '../lib/generate.js';
import { countTracks, createScratchDatabase, dropScratchDatabase, truncateTracks, withClient } from '../lib/postgres.js';
import { assertOk, runTimed } from '../lib/proc.js';
import { CATALOG_BIN, ROOT, startCatalog } from '../lib/service.js';

const CREDITS = new Set(['primary_artists', 'featuring_artists', 'remix_artists', 'writer_artists', 'performer_artists', 'engineer_artists']);

/** The tracks file without its credit columns (cached beside it). */
export function plainFile(tracksFile) {
  return withoutColumns(tracksFile, 'plain', CREDITS);
}

async function headerOf(file) {
  const head = await new Promise((resolve) => createReadStream(file, { encoding: 'utf8', end: 4096 }).on('data', resolve));
  return head.split('\n')[0].trim();
}

const psql = (url, command) => runTimed('psql', ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', url, '-c', command]);
const cli = (args, env) => runTimed(process.execPath, [CATALOG_BIN, ...args], { cwd: ROOT, env: { NO_COLOR: '1', ...env } });

function removeSidecars(file) {
  for (const side of ['.rejects.csv', '.rejects.ndjson', '.checkpoint.json']) rmSync(`${file}${side}`, { force: true });
}

/**
 * Each timed load starts from a clean slate: the WAL and dirty pages of the load before it written
 * out first (a CHECKPOINT), or whichever step came third paid for the first two.
 */
let unsettled = false;
const settled = (pgUrl) =>
  withClient(pgUrl, (c) => c.query('checkpoint')).catch((err) => {
    // CHECKPOINT needs a superuser (or pg_checkpoint): without one the loads still run, less evenly
    if (err.code !== '42501') throw err;
    if (!unsettled) process.stderr.write('links: this role may not CHECKPOINT; each load starts as the one before left the server\n');
    unsettled = true;
  });

/** PostgreSQL: \copy into the trigger-less copy, \copy into tracks, catalog import; ms each. */
export async function linksPostgres(pgUrl, n, file) {
  const header = await headerOf(file);
  await withClient(pgUrl, (c) => c.query('create table if not exists tracks_plain (like tracks including defaults including indexes)'));
  await withClient(pgUrl, (c) => c.query('truncate tracks_plain'));
  await settled(pgUrl);
  const plain = assertOk(await psql(pgUrl, `\\copy tracks_plain(${header}) from '${file}' csv header`), 'psql \\copy into tracks_plain');
  await withClient(pgUrl, (c) => c.query('truncate tracks_plain'));
  await truncateTracks(pgUrl);
  await settled(pgUrl);
  const tracks = assertOk(await psql(pgUrl, `\\copy tracks(${header}) from '${file}' csv header`), 'psql \\copy into tracks');
  await truncateTracks(pgUrl);
  await withClient(pgUrl, (c) => c.query('analyze tracks'));
  const service = await startCatalog({ databaseUrl: pgUrl });
  try {
    await settled(pgUrl);
    const ours = assertOk(await cli(['tracks', 'import', file, '--quiet', '--url', service.url]), 'catalog tracks import');
    const got = await countTracks(pgUrl);
    if (got !== n) throw new Error(`catalog tracks import left ${got} rows, expected ${n}`);
    return { plainMs: Math.round(plain.ms), tracksMs: Math.round(tracks.ms), catalogMs: Math.round(ours.ms) };
  } finally {
    await service.stop();
    removeSidecars(file);
  }
}

/**
 * The embedded store, a new catalog directory with the artists, then the import: in the command's
 * own process (`CATALOG_KEEP_WARM=0`, `catalogMs`: issue 36's figure) and through the background
 * holder the first command starts, the path a user's default takes (`holderMs`; kept warm 30 s,
 * then stopped). The holder runs with a lighter engine (src/store/pglite-engine.ts holderEngine).
 */
export async function linksPglite(n, file, artistsFile) {
  const here = await embeddedImport(n, file, artistsFile, '0');
  const held = await embeddedImport(n, file, artistsFile, '30');
  return { catalogMs: here.ms, holderMs: held.ms, peakKb: here.peakKb };
}

async function embeddedImport(n, file, artistsFile, keepWarm) {
  const home = mkdtempSync(join(tmpdir(), 'bench-links-'));
  const data = join(home, 'data');
  const env = { CATALOG_DATA: data, XDG_CACHE_HOME: join(home, 'cache'), XDG_CONFIG_HOME: join(home, 'config'), CATALOG_KEEP_WARM: keepWarm };
  try {
    assertOk(await cli(['artists', 'import', artistsFile, '--quiet'], env), 'catalog artists import (embedded)');
    const ours = assertOk(await cli(['tracks', 'import', file, '--quiet'], env), 'catalog tracks import (embedded)');
    const count = assertOk(await cli(['tracks', 'count'], env), 'catalog tracks count');
    const got = Number(count.stdout.trim().replace(/,/g, ''));
    if (got !== n) throw new Error(`embedded import left ${count.stdout.trim()} rows, expected ${n}`);
    return { ms: Math.round(ours.ms), peakKb: ours.peakKb ?? null };
  } finally {
    await stopHolder(data);
    removeSidecars(file);
    rmSync(home, { recursive: true, force: true });
  }
}

/** Stops the background holder of `data` (its pid is in the directory's lock), if one runs, and waits for it to go. */
async function stopHolder(data) {
  let pid;
  try {
    pid = JSON.parse(readFileSync(join(data, 'catalog-serve.json'), 'utf8')).pid;
    process.kill(pid, 'SIGTERM');
  } catch {
    return; // none
  }
  for (let i = 0; i < 200; i++) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The sizes each kind runs at in a full bench (plain at 300k, as issue 36 measured it). */
export function linkSizes(rows) {
  return { plain: rows.map((n) => (n === 100_000 ? 300_000 : n)).filter((n) => n <= 300_000), credits: rows };
}

/** For bench/run.js: every kind and size, PostgreSQL when there is a scratch database, PGlite for credits. */
export async function linksSize(ctx, kind, n) {
  const tracks = await ensureTracksFile(ctx.tracksFile(n), n);
  const file = kind === 'plain' ? await plainFile(tracks) : tracks;
  const k = (side) => `links.${kind}.${side}.${n}`;
  if (ctx.pgUrl && ctx.o.stores.includes('postgres')) {
    await ctx.R.attempt([k('pg.plain'), k('pg.tracks'), k('pg.catalog')], async () => {
      const r = await linksPostgres(ctx.pgUrl, n, file);
      ctx.R.add(k('pg.plain'), r.plainMs);
      ctx.R.add(k('pg.tracks'), r.tracksMs);
      ctx.R.add(k('pg.catalog'), r.catalogMs);
    });
  }
  if (kind === 'credits' && ctx.o.stores.includes('pglite')) {
    await ctx.R.attempt([k('pglite.catalog'), k('pglite.holder')], async () => {
      const r = await linksPglite(n, file, ctx.artistsFile);
      ctx.R.add(k('pglite.catalog'), r.catalogMs);
      ctx.R.add(k('pglite.holder'), r.holderMs);
    });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const arg = (name, dflt) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : dflt);
  const n = Number(arg('--rows', '100000'));
  const kind = arg('--kind', 'credits');
  const stores = arg('--stores', 'postgres,pglite').split(',');
  const admin = arg('--pg', 'postgres://postgres@127.0.0.1:5432/postgres');
  const name = `catalog_links_${process.pid}`;
  const dir = mkdtempSync(join(tmpdir(), 'bench-links-'));
  const tracks = await ensureTracksFile(join(ROOT, '.bench', 'data', `tracks-${n}-v${GENERATOR_VERSION}.csv`), n);
  const file = kind === 'plain' ? await plainFile(tracks) : tracks;
  const artists = join(dir, 'artists.csv');
  writeFileSync(artists, artistsCsv());
  const url = stores.includes('postgres') ? await createScratchDatabase(admin, name) : null;
  try {
    if (url) assertOk(await psql(url, `\\copy artists(${ARTIST_COLUMNS.join(', ')}) from '${artists}' csv header`), 'psql \\copy artists');
    for (let run = 0; run < Number(arg('--runs', '1')); run++) {
      const out = { rows: n, kind };
      if (url) Object.assign(out, { pg: await linksPostgres(url, n, file) });
      if (stores.includes('pglite') && kind === 'credits') Object.assign(out, { pglite: await linksPglite(n, file, artists) });
      if (out.pg) out.pg.ratio = +(out.pg.plainMs / out.pg.catalogMs).toFixed(2);
      process.stdout.write(`${JSON.stringify(out)}\n`);
    }
  } finally {
    if (url) await dropScratchDatabase(admin, name);
    rmSync(dir, { recursive: true, force: true });
  }
}
