/**
 * PostgreSQL scenarios: import / re-import / export against psql \copy, the direct-SQL script
 * and csvsql; list latency; service throughput against the minimal handler; --workers 1 vs 2.
 * Every scenario records "n/a (reason)" instead of aborting the run.
 */
import { join } from 'node:path';
import { catalogExport, catalogImport } from '../lib/catalog.js';
import { artistId, isrcFor, labelId } from '../lib/generate.js';
import { load, sequentialLatency } from '../lib/http.js';
import { runsFor } from '../lib/options.js';
import { analyzeTracks, countTracks, linkReleases, psqlCopyIn, psqlCopyOut, truncateTracks } from '../lib/postgres.js';
import { assertOk, runTimed, treePeakRssKb, which } from '../lib/proc.js';
import { cpuDuring, postmasterPid } from '../lib/cpu.js';
import { cliHasFlag, ROOT, startCatalog, startClusterDriver, startMinimal } from '../lib/service.js';
import { LIST_QUERIES } from '../lib/report.js';
import { PAGE_PATH } from '../lib/page.js';

/** The A&R queries of the list scenario, as service paths, for a table of `rows` tracks. */
export function listPaths(rows) {
  const label = labelId(0);
  const page = (p) => `/releases?select=*,labels(*)&label_id=eq.${label}&order=release_date.desc&limit=50&offset=${(p - 1) * 50}`;
  return {
    title: '/tracks?track_title=ilike.*love*&limit=50',
    isrc: `/tracks?isrc_code=eq.${isrcFor(Math.floor(rows / 2))}`,
    label1: page(1),
    label50: page(50),
    labeltracks: `/releases?select=release_title,release_date,tracks(track_title,isrc_code)&label_id=eq.${label}&order=release_date.desc&limit=50`,
    artisttracks: `/artists?select=stage_name,tracks(track_title,isrc_code)&id=eq.${artistId(7)}`,
  };
}

async function directSql(url, file) {
  const res = assertOk(await runTimed(process.execPath, [join(ROOT, 'bench/peers/direct-sql.js'), '--url', url, '--file', file]), 'direct-SQL script');
  return res.ms;
}

/** Makes sure tracks holds exactly `n` rows (psql \copy when it does not). */
async function ensureLoaded(ctx, n) {
  if ((await countTracks(ctx.pgUrl)) === n) return;
  await truncateTracks(ctx.pgUrl);
  await psqlCopyIn(ctx.pgUrl, ctx.tracksFile(n));
  await analyzeTracks(ctx.pgUrl);
}

/** Records CPU figures `{ side: ms }` as `${prefix}.${side}.${n}` (missing ones are skipped). */
function addCpu(R, prefix, n, sides) {
  for (const [side, v] of Object.entries(sides)) if (v !== null && v !== undefined) R.add(`${prefix}.${side}.${n}`, v);
}

/** csvsql (csvkit) is compared up to this many rows. */
const CSVSQL_MAX_ROWS = 100_000;

/** One size: every run of import, re-import and export. */
export async function postgresSize(ctx, n) {
  const { R, o, pgUrl } = ctx;
  const file = ctx.tracksFile(n);
  const csvsql = which('csvsql');
  let service = null;
  const needService = o.only.includes('import') || o.only.includes('export');
  if (needService) service = await R.attempt([`pg.import.catalog.${n}`, `pg.merge.catalog.${n}`, `pg.export.catalog.${n}`, `pg.import.catalog.peak.${n}`, `pg.export.catalog.peak.${n}`], () => startCatalog({ databaseUrl: pgUrl }));
  try {
    const runs = runsFor(o, n);
    for (let run = 1; run <= runs; run++) {
      ctx.log(`PostgreSQL ${n} rows, run ${run}/${runs}`);
      if (o.only.includes('import')) {
        await truncateTracks(pgUrl);
        await R.attempt(`pg.import.psql.${n}`, async () => {
          const { result, cpu } = await cpuDuring({ db: postmasterPid() }, () => psqlCopyIn(pgUrl, file));
          R.add(`pg.import.psql.${n}`, result.ms);
          addCpu(R, `pg.import.psql.cpu`, n, { client: result.cpuMs, db: cpu.db });
        });

        await truncateTracks(pgUrl);
        await R.attempt([`pg.import.direct.${n}`, `pg.merge.direct.${n}`], async () => {
          R.add(`pg.import.direct.${n}`, await directSql(pgUrl, file));
          R.add(`pg.merge.direct.${n}`, await directSql(pgUrl, file));
        });

        if (!csvsql) R.fail(`pg.import.csvsql.${n}`, 'csvsql not installed');
        // agate reads the whole file into Python objects first: at 1M rows that is minutes and GBs
        else if (n > CSVSQL_MAX_ROWS) R.fail(`pg.import.csvsql.${n}`, `not run above ${CSVSQL_MAX_ROWS.toLocaleString('en-US')} rows (csvsql loads the whole file into memory)`);
        else {
          await truncateTracks(pgUrl);
          await R.attempt(`pg.import.csvsql.${n}`, async () => {
            const res = assertOk(await runTimed(csvsql, ['--db', pgUrl.replace(/^postgres:/, 'postgresql:'), '--insert', '--no-create', '--tables', 'tracks', '--no-inference', file]), 'csvsql');
            R.add(`pg.import.csvsql.${n}`, res.ms);
          });
        }

        await truncateTracks(pgUrl);
        await analyzeTracks(pgUrl);
        if (service) {
          await R.attempt([`pg.import.catalog.${n}`, `pg.import.catalog.peak.${n}`, `pg.merge.catalog.${n}`], async () => {
            const { result: first, cpu } = await cpuDuring({ service: service.pid, db: postmasterPid() }, () => catalogImport(file, service.url, ctx.scratch));
            addCpu(R, 'pg.import.cpu', n, { client: first.cpuMs, service: cpu.service, db: cpu.db });
            const got = await countTracks(pgUrl);
            if (got !== n) throw new Error(`imported ${got} of ${n} rows`);
            R.add(`pg.import.catalog.${n}`, first.ms);
          if (first.via === 'engine') R.note('via.import', 'engine');
            R.add(`pg.import.catalog.peak.${n}`, first.peakKb);
            const again = await catalogImport(file, service.url, ctx.scratch);
            const after = await countTracks(pgUrl);
            if (after !== n) throw new Error(`re-import left ${after} rows, expected ${n}`);
            R.add(`pg.merge.catalog.${n}`, again.ms);
            R.add(`pg.import.service.peak.${n}`, treePeakRssKb(service.pid));
          });
        }
      }
      if (o.only.includes('export')) {
        await ensureLoaded(ctx, n);
        const out = join(ctx.scratch, 'export-catalog.csv');
        if (service) {
          await R.attempt([`pg.export.catalog.${n}`, `pg.export.catalog.peak.${n}`], async () => {
            const { result: res, cpu } = await cpuDuring({ service: service.pid, db: postmasterPid() }, () => catalogExport(out, service.url));
            addCpu(R, 'pg.export.cpu', n, { client: res.cpuMs, service: cpu.service, db: cpu.db });
            R.add(`pg.export.catalog.${n}`, res.ms);
          if (res.via === 'engine') R.note('via.export', 'engine');
            R.add(`pg.export.catalog.peak.${n}`, res.peakKb);
          });
        }
        await R.attempt([`pg.export.psql.${n}`, `pg.export.psql.${n}.peak`], async () => {
          const { result: res, cpu } = await cpuDuring({ db: postmasterPid() }, () => psqlCopyOut(pgUrl, join(ctx.scratch, 'export-psql.csv')));
          addCpu(R, 'pg.export.psql.cpu', n, { client: res.cpuMs, db: cpu.db });
          R.add(`pg.export.psql.${n}`, res.ms);
          R.add(`pg.export.psql.${n}.peak`, res.peakKb);
        });
      }
    }
  } finally {
    await service?.stop();
  }
}

/** List latency, service throughput and workers on the largest size already loaded. */
export async function postgresService(ctx, n) {
  const { R, o, pgUrl } = ctx;
  const wants = (s) => o.only.includes(s);
  if (!wants('list') && !wants('load') && !wants('workers')) return;
  await ensureLoaded(ctx, n);
  await analyzeTracks(pgUrl);
  // the releases list their tracks for the link queries (releases → tracks, an artist's tracks)
  if (wants('list')) await R.attempt('pg.link', () => linkReleases(pgUrl));

  const listKeys = LIST_QUERIES.flatMap(([q]) => [`pg.list.${q}.p50`, `pg.list.${q}.p95`]);
  const service = await R.attempt([...listKeys, 'pg.load.catalog'], () => startCatalog({ databaseUrl: pgUrl }));
  if (service) {
    try {
      if (wants('list')) {
        ctx.log(`PostgreSQL list latency on ${n} tracks`);
        for (const [q, path] of Object.entries(listPaths(n))) {
          await R.attempt([`pg.list.${q}.p50`, `pg.list.${q}.p95`], async () => {
            for (let run = 1; run <= o.runs; run++) {
              const r = await sequentialLatency(service.url, path, { n: o.listRequests });
              R.add(`pg.list.${q}.p50`, r.p50);
              R.add(`pg.list.${q}.p95`, r.p95);
              if (r.rows !== null) R.note(`pg.list.${q}`, `${r.rows} row${r.rows === 1 ? '' : 's'}`);
            }
          });
        }
      }
      if (wants('load')) {
        ctx.log('PostgreSQL throughput: catalog serve');
        await R.attempt('pg.load.catalog', async () => {
          for (let run = 1; run <= o.runs; run++) R.add('pg.load.catalog', (await load(service.url + PAGE_PATH, { seconds: o.loadSeconds })).rps);
        });
      }
    } finally {
      await service.stop();
    }
  }
  if (wants('load')) {
    // The second variant wraps the query in BEGIN/COMMIT, as a transaction per request does:
    // it shows how much of any gap those two extra round trips explain.
    for (const [key, tx] of [['pg.load.minimal', false], ['pg.load.minimal_tx', true]]) {
      ctx.log(`PostgreSQL throughput: minimal handler${tx ? ' with BEGIN/COMMIT' : ''}`);
      await R.attempt(key, async () => {
        const minimal = await startMinimal({ databaseUrl: pgUrl, tx });
        try {
          for (let run = 1; run <= o.runs; run++) R.add(key, (await load(minimal.url + PAGE_PATH, { seconds: o.loadSeconds })).rps);
        } finally {
          await minimal.stop();
        }
      });
    }
  }
  if (wants('workers')) {
    // Until `catalog serve` exposes --workers, the lead's cluster module is driven directly.
    const viaCli = await cliHasFlag('serve', '--workers');
    if (!viaCli) R.note('via.workers', 'cluster');
    for (const w of [1, 2]) {
      ctx.log(`PostgreSQL throughput: ${viaCli ? 'catalog serve' : 'cluster driver'} --workers ${w}`);
      await R.attempt(`pg.load.workers${w}`, async () => {
        const svc = viaCli ? await startCatalog({ databaseUrl: pgUrl, workers: w }) : await startClusterDriver({ databaseUrl: pgUrl, workers: w });
        try {
          for (let run = 1; run <= o.runs; run++) {
            const { result, cpu } = await cpuDuring({ service: svc.pid, db: postmasterPid() }, () => load(svc.url + PAGE_PATH, { seconds: o.loadSeconds }));
            R.add(`pg.load.workers${w}`, result.rps);
            // cores kept busy over the load window (the probe request and set-up are noise here)
            const per = o.loadSeconds * 1000;
            addCpu(R, `pg.load.workers${w}.cores`, 'x', { service: cpu.service / per, db: cpu.db / per, bench: cpu.bench / per });
          }
        } finally {
          await svc.stop();
        }
      });
    }
  }
}

