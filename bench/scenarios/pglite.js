/**
 * PGlite scenarios. One process at a time can hold a PGlite data directory, so each run has a
 * peer phase (bench/peers/pglite-peer.js: COPY, the direct-SQL upsert, COPY TO) and then a
 * service phase (`catalog serve --data DIR`: import, re-import, export).
 */
import { join } from 'node:path';
import { catalogExport, catalogImport, countViaService } from '../lib/catalog.js';
import { load, sequentialLatency } from '../lib/http.js';
import { runsFor } from '../lib/options.js';
import { assertOk, runTimed, treePeakRssKb } from '../lib/proc.js';
import { ROOT, startCatalog, startMinimal } from '../lib/service.js';
import { LIST_QUERIES } from '../lib/report.js';
import { PAGE_PATH } from '../lib/page.js';
import { listPaths } from './postgres.js';

/**
 * Runs pglite-peer.js with `steps` = [[op, resultKey|null], ...]; records each timed op under its
 * key. Returns the peer's JSON (e.g. { count }).
 */
export async function pglitePeer(ctx, steps, extra = []) {
  const args = [join(ROOT, 'bench/peers/pglite-peer.js'), '--dir', ctx.pgliteDir, '--ops', steps.map(([op]) => op).join(','), ...extra];
  const res = assertOk(await runTimed(process.execPath, args, { cwd: ROOT }), 'pglite peer');
  const out = JSON.parse(res.stdout.trim().split('\n').pop());
  steps.forEach(([op, key], i) => {
    if (key && out[`${i}:${op}`] !== undefined) ctx.R.add(key, out[`${i}:${op}`]);
  });
  return out;
}

/** Creates the PGlite catalog (from the migrated template) and seeds labels and releases. */
export async function pgliteSetup(ctx) {
  await pglitePeer(ctx, [['seed', null]], ['--labels', ctx.labelsFile, '--releases', ctx.releasesFile, '--artists', ctx.artistsFile]);
}

async function ensureLoaded(ctx, n) {
  const { count } = await pglitePeer(ctx, [['count', null]]);
  if (count === n) return;
  await pglitePeer(ctx, [['truncate', null], ['copy', null], ['analyze', null]], ['--file', ctx.tracksFile(n)]);
}

/** One size: every run of import, re-import and export on PGlite. */
export async function pgliteSize(ctx, n) {
  const { R, o } = ctx;
  const file = ctx.tracksFile(n);
  const doImport = o.only.includes('import');
  const doExport = o.only.includes('export');
  if (!doImport && !doExport) return;
  const peerOut = join(ctx.scratch, 'export-pglite-copy.csv');
  const runs = runsFor(o, n);
  for (let run = 1; run <= runs; run++) {
    ctx.log(`PGlite ${n} rows, run ${run}/${runs}`);
    const steps = [];
    if (doImport || doExport) steps.push(['truncate', null], ['copy', doImport ? `pglite.import.copy.${n}` : null]);
    if (doExport) steps.push(['export', `pglite.export.copy.${n}`]);
    if (doImport) steps.push(['truncate', null], ['upsert', `pglite.import.direct.${n}`], ['upsert', `pglite.merge.direct.${n}`], ['truncate', null], ['analyze', null]);
    await R.attempt(
      [`pglite.import.copy.${n}`, `pglite.export.copy.${n}`, `pglite.import.direct.${n}`, `pglite.merge.direct.${n}`],
      () => pglitePeer(ctx, steps, ['--file', file, '--out', peerOut]),
    );

    const catalogKeys = [`pglite.import.catalog.${n}`, `pglite.import.catalog.peak.${n}`, `pglite.merge.catalog.${n}`, `pglite.export.catalog.${n}`, `pglite.export.catalog.peak.${n}`];
    const service = await R.attempt(catalogKeys, () => startCatalog({ dataDir: ctx.pgliteDir }));
    if (!service) continue;
    try {
      if (doImport) {
        await R.attempt([`pglite.import.catalog.${n}`, `pglite.import.catalog.peak.${n}`, `pglite.merge.catalog.${n}`], async () => {
          const first = await catalogImport(file, service.url, ctx.scratch);
          const got = await countViaService(service.url);
          if (got !== n) throw new Error(`imported ${got} of ${n} rows`);
          R.add(`pglite.import.catalog.${n}`, first.ms);
          if (first.via === 'engine') R.note('via.import', 'engine');
          R.add(`pglite.import.catalog.peak.${n}`, first.peakKb);
          const again = await catalogImport(file, service.url, ctx.scratch);
          const after = await countViaService(service.url);
          if (after !== n) throw new Error(`re-import left ${after} rows, expected ${n}`);
          R.add(`pglite.merge.catalog.${n}`, again.ms);
          R.add(`pglite.import.service.peak.${n}`, treePeakRssKb(service.pid));
        });
      }
      if (doExport) {
        await R.attempt([`pglite.export.catalog.${n}`, `pglite.export.catalog.peak.${n}`], async () => {
          // After a failed import the table may be empty; export only what is comparable.
          const got = await countViaService(service.url);
          if (got !== n) throw new Error(`table holds ${got} rows, not ${n} (import did not complete)`);
          const res = await catalogExport(join(ctx.scratch, 'export-catalog.csv'), service.url);
          R.add(`pglite.export.catalog.${n}`, res.ms);
          if (res.via === 'engine') R.note('via.export', 'engine');
          R.add(`pglite.export.catalog.peak.${n}`, res.peakKb);
        });
      }
    } finally {
      await service.stop();
    }
  }
}

/** List latency and throughput on PGlite, on the largest size. */
export async function pgliteService(ctx, n) {
  const { R, o } = ctx;
  const wants = (s) => o.only.includes(s);
  if (!wants('list') && !wants('load')) return;
  await R.attempt('pglite.load.catalog', () => ensureLoaded(ctx, n));
  // the releases list their tracks for the link queries (releases → tracks, an artist's tracks)
  if (wants('list')) await R.attempt('pglite.link', () => pglitePeer(ctx, [['link', null]]));
  const listKeys = LIST_QUERIES.flatMap(([q]) => [`pglite.list.${q}.p50`, `pglite.list.${q}.p95`]);
  const service = await R.attempt([...listKeys, 'pglite.load.catalog'], () => startCatalog({ dataDir: ctx.pgliteDir }));
  if (service) {
    try {
      if (wants('list')) {
        ctx.log(`PGlite list latency on ${n} tracks`);
        for (const [q, path] of Object.entries(listPaths(n))) {
          await R.attempt([`pglite.list.${q}.p50`, `pglite.list.${q}.p95`], async () => {
            for (let run = 1; run <= o.runs; run++) {
              const r = await sequentialLatency(service.url, path, { n: o.listRequests });
              R.add(`pglite.list.${q}.p50`, r.p50);
              R.add(`pglite.list.${q}.p95`, r.p95);
              if (r.rows !== null) R.note(`pglite.list.${q}`, `${r.rows} row${r.rows === 1 ? '' : 's'}`);
            }
          });
        }
      }
      if (wants('load')) {
        ctx.log('PGlite throughput: catalog serve');
        await R.attempt('pglite.load.catalog', async () => {
          for (let run = 1; run <= o.runs; run++) R.add('pglite.load.catalog', (await load(service.url + PAGE_PATH, { seconds: o.loadSeconds })).rps);
        });
      }
    } finally {
      await service.stop();
    }
  }
  if (wants('load')) {
    ctx.log('PGlite throughput: minimal handler');
    await R.attempt('pglite.load.minimal', async () => {
      const minimal = await startMinimal({ dataDir: ctx.pgliteDir });
      try {
        for (let run = 1; run <= o.runs; run++) R.add('pglite.load.minimal', (await load(minimal.url + PAGE_PATH, { seconds: o.loadSeconds })).rps);
      } finally {
        await minimal.stop();
      }
    });
  }
}
