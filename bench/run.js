#!/usr/bin/env node
/**
 * `npm run bench`: the catalog side by side with the tools a user could pick instead, on
 * PostgreSQL (a scratch database it creates and drops) and on PGlite (a scratch data directory),
 * in one run. Prints one table of medians with ratios and targets, and writes the same table to
 * BENCHMARKS.md (or --out). See bench/README.md for what each figure measures.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { artistsCsv, ensureTracksFile, GENERATOR_VERSION, labelsCsv, releasesCsv } from './lib/generate.js';
import { machine } from './lib/machine.js';
import { parseOptions, STANDALONE, USAGE } from './lib/options.js';
import { createScratchDatabase, dropScratchDatabase, seedLabelsReleases, serverVersion } from './lib/postgres.js';
import { buildRows, markdownTable, textTable } from './lib/report.js';
import { Results } from './lib/results.js';
import { fmtRows } from './lib/stats.js';
import { ROOT } from './lib/service.js';
import { coldStart } from './scenarios/coldstart.js';
import { pgliteService, pgliteSetup, pgliteSize } from './scenarios/pglite.js';
import { postgresService, postgresSize } from './scenarios/postgres.js';

const started = Date.now();
// Set on this machine for the sandbox's proxy; it costs every node start ≈80 ms, which users do
// not pay, so child processes run without it (noted in BENCHMARKS.md).
const extraCaCerts = Boolean(process.env.NODE_EXTRA_CA_CERTS);
delete process.env.NODE_EXTRA_CA_CERTS;
let o;
try {
  o = parseOptions(process.argv.slice(2));
} catch (err) {
  process.stderr.write(`${err.message}\n`);
  process.exit(2);
}
if (o.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}

const log = (line) => process.stderr.write(`[bench ${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${line}\n`);
const R = new Results();
const scratch = mkdtempSync(join(tmpdir(), 'catalog-bench-'));
const dbName = `catalog_bench_${process.pid}`;
const dataDir = join(ROOT, '.bench', 'data');
const big = o.rows[o.rows.length - 1];
const ctx = {
  o,
  R,
  log,
  scratch,
  pgUrl: null,
  pgliteDir: join(scratch, 'pglite'),
  labelsFile: join(scratch, 'labels.csv'),
  artistsFile: join(scratch, 'artists.csv'),
  releasesFile: join(scratch, 'releases.csv'),
  tracksFile: (n) => join(dataDir, `tracks-${n}-v${GENERATOR_VERSION}.csv`),
};

let cleaning = null;
async function cleanup() {
  cleaning ??= (async () => {
    if (o.keep) {
      log(`kept scratch ${scratch}${ctx.pgUrl ? ` and database ${dbName}` : ''}`);
      return;
    }
    if (ctx.pgUrl) await dropScratchDatabase(o.pgUrl, dbName).catch((err) => log(`could not drop ${dbName}: ${err.message}`));
    rmSync(scratch, { recursive: true, force: true });
  })();
  return cleaning;
}
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.once(sig, () => {
    log(`${sig}: cleaning up`);
    void cleanup().finally(() => process.exit(130));
  });
}

const dist = join(ROOT, 'dist', 'store', 'pglite.js');
if (!existsSync(dist)) {
  process.stderr.write('dist/ is missing: run `npm run build` first (npm install does it).\n');
  process.exit(2);
}

let pgVersion = null;
// only standalone scenarios (startup): no tracks files, no scratch stores
const needsData = o.only.some((s) => !STANDALONE.includes(s));
try {
  log(`scratch ${scratch}; rows ${o.rows.map(fmtRows).join(', ')}; ${o.runs} run(s); scenarios ${o.only.join(', ')}`);
  for (const n of needsData ? o.rows : []) {
    const t = Date.now();
    const file = await ensureTracksFile(ctx.tracksFile(n), n);
    log(`data: ${file} (${(statSync(file).size / 2 ** 20).toFixed(0)} MB${Date.now() - t > 500 ? `, generated in ${((Date.now() - t) / 1000).toFixed(1)} s` : ', cached'})`);
  }
  writeFileSync(ctx.labelsFile, labelsCsv());
  writeFileSync(ctx.artistsFile, artistsCsv());
  writeFileSync(ctx.releasesFile, releasesCsv(Math.max(1000, Math.floor(big / 10))));

  if (needsData && o.stores.includes('postgres')) {
    try {
      ctx.pgUrl = await createScratchDatabase(o.pgUrl, dbName);
      pgVersion = await serverVersion(ctx.pgUrl);
      await seedLabelsReleases(ctx.pgUrl, ctx.labelsFile, ctx.releasesFile, ctx.artistsFile);
      log(`PostgreSQL: scratch database ${dbName} (${pgVersion})`);
    } catch (err) {
      log(`PostgreSQL unavailable: ${err.message}`);
      ctx.pgUrl = null;
      R.fail('pg.unavailable', err.message);
    }
  }
  if (ctx.pgUrl) {
    for (const n of o.rows) await postgresSize(ctx, n);
    await postgresService(ctx, big);
  }

  if (needsData && o.stores.includes('pglite')) {
    const ok = await R.attempt('pglite.unavailable', async () => {
      await pgliteSetup(ctx);
      return true;
    });
    if (ok) {
      for (const n of o.rows) await pgliteSize(ctx, n);
      await pgliteService(ctx, big);
    }
  }

  if (o.only.includes('coldstart')) await coldStart(ctx);
  if (o.only.includes('startup')) {
    const { startup } = await import('./scenarios/startup.js');
    await startup(ctx);
  }
  if (o.only.includes('xlsx')) {
    const { xlsxSize } = await import('./scenarios/xlsx.js');
    for (const n of o.rows.filter((x) => x <= 100_000)) await xlsxSize(ctx, n);
  }
  if (o.only.includes('check')) {
    const { checkSize } = await import('./scenarios/check.js');
    for (const n of o.rows.filter((x) => x <= 1_000_000)) await checkSize(ctx, n);
  }
  if (o.only.includes('keyed') && ctx.pgUrl) {
    const { keyedSize } = await import('./scenarios/keyed.js');
    for (const n of o.rows) for (let run = 0; run < o.runs; run++) await keyedSize(ctx, n);
  }
  if (o.only.includes('links')) {
    const { linksSize, linkSizes } = await import('./scenarios/links.js');
    const sizes = linkSizes(o.rows);
    for (const kind of ['plain', 'credits']) for (const n of sizes[kind]) for (let run = 0; run < o.runs; run++) await linksSize(ctx, kind, n);
  }
  if (o.only.includes('hostile')) {
    const { hostile } = await import('./scenarios/hostile.js');
    await hostile(ctx);
  }
  if (o.only.includes('orphans')) {
    const { orphans } = await import('./scenarios/orphans.js');
    await orphans(ctx, ctx.tracksFile(o.rows[0]));
  }
} catch (err) {
  log(`bench aborted: ${err.stack ?? err.message}`);
  process.exitCode = 1;
} finally {
  await cleanup();
}

// Keys that never got a figure because a whole store was missing.
const pgDown = R.get('pg.unavailable');
const pgliteDown = R.get('pglite.unavailable');
for (const [down, prefix] of [[pgDown, 'pg.'], [pgliteDown, 'pglite.']]) {
  if (down?.na) R.failures.set(`${prefix}*`, down.na);
}
const rows = buildRows(withStoreFallback(R), o);
const m = machine();
const header = [
  `machine: ${m.cores} cores (${m.cpu}), ${m.ramGb} GB RAM, ${m.os}; node ${m.node}; ${pgVersion ?? 'PostgreSQL n/a'}; PGlite ${m.pglite}; hyperfine ${m.hyperfine ?? 'not installed'}`,
  `run: ${m.date}, rows ${o.rows.map(fmtRows).join(' and ')}, ${o.runs} run(s) per figure${o.bigRuns ? ` (${o.bigRuns} for import/export at ≥ 1M rows)` : ''} (medians), ${((Date.now() - started) / 60000).toFixed(1)} min`,
];
process.stdout.write(`\n${header.join('\n')}\n\n${textTable(rows)}\n`);

const md = `# Benchmarks

Produced by \`npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}\` (see [bench/README.md](bench/README.md) for what each figure measures and how).

- **Machine:** ${m.cores} cores (${m.cpu}), ${m.ramGb} GB RAM, ${m.os}
- **Software:** node ${m.node}, ${pgVersion ?? 'PostgreSQL n/a'} (server on 127.0.0.1), PGlite ${m.pglite}, ${m.psql ?? 'psql n/a'}, hyperfine ${m.hyperfine ?? 'not installed'}
- **Date:** ${m.date}; rows ${o.rows.map(fmtRows).join(' and ')}; ${o.runs} run(s) per figure${o.bigRuns ? ` (${o.bigRuns} for import/export at ≥ 1M rows)` : ''}, medians shown${extraCaCerts ? '\n- NODE_EXTRA_CA_CERTS was set here and is removed for every child process (it adds ≈80 ms to each node start)' : ''}

Ratios: for imports, exports and throughput, the catalog's speed as a multiple of the peer's
(higher is better); for start-up, the catalog's time as a multiple of \`node -e 0\` (lower is
better). ✓/✗ compare with the targets of issue 7.

${markdownTable(rows)}
`;
const outFile = resolve(ROOT, o.out);
mkdirSync(dirname(outFile), { recursive: true });
// Hand-written analysis below the marker survives a re-run of the bench.
const MARKER = '<!-- notes below this line are kept when the bench rewrites this file -->';
const kept = existsSync(outFile) ? readFileSync(outFile, 'utf8').split(MARKER)[1] : undefined;
writeFileSync(outFile, `${md}\n${MARKER}${kept ?? '\n'}`);
mkdirSync(join(ROOT, '.bench'), { recursive: true });
writeFileSync(join(ROOT, '.bench', `results-${o.quick ? 'quick' : 'full'}.json`), JSON.stringify({ options: o, machine: m, pgVersion, results: R }, null, 2));
log(`wrote ${o.out}`);
// Keep-alive sockets and load-test timers must not keep the bench alive once the table is out.
process.exit(process.exitCode ?? 0);

/** When a whole store was unavailable, every key of that store reads as n/a with its reason. */
function withStoreFallback(results) {
  const get = results.get.bind(results);
  results.get = (key) => {
    const r = get(key);
    if (r) return r;
    for (const prefix of ['pg.', 'pglite.']) {
      if (key.startsWith(prefix) && results.failures.has(`${prefix}*`)) return { na: `store unavailable: ${results.failures.get(`${prefix}*`)}` };
    }
    return null;
  };
  return results;
}
