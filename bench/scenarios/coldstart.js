/**
 * Start-up cost: `node -e 0`, `catalog --help`, `catalog labels list --url` against a running
 * service, and the embedded default (CATALOG_DATA in a fresh directory: first command, then later
 * ones). hyperfine (no shell, warm-ups) when installed, else repeated spawns timed here.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { median } from '../lib/stats.js';
import { tail, which } from '../lib/proc.js';
import { CATALOG_BIN, ROOT, startCatalog } from '../lib/service.js';

/**
 * Median wall time (ms) of `argv` over `runs` runs after `warmup` runs; `prepare` (argv) runs
 * before each timed run. Throws with the command's stderr when it fails.
 */
export function timeCommand(argv, { runs = 20, warmup = 3, env = {}, prepare = null } = {}) {
  const fullEnv = { ...process.env, NO_COLOR: '1', ...env };
  if (which('hyperfine')) {
    const json = join(mkdtempSync('/tmp/bench-hf-'), 'out.json');
    const quote = (a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, "'\\''")}'`);
    const args = ['-N', '--style', 'none', '--runs', String(runs), '--warmup', String(warmup), '--export-json', json];
    if (prepare) args.push('--prepare', prepare.map(quote).join(' '));
    args.push(argv.map(quote).join(' '));
    const r = spawnSync('hyperfine', args, { cwd: ROOT, env: fullEnv, encoding: 'utf8', timeout: 600_000 });
    if (r.status !== 0) throw new Error(`${argv.slice(1, 4).join(' ')} failed: ${tail(r.stderr || r.stdout, 2)}`);
    const out = JSON.parse(readFileSync(json, 'utf8'));
    rmSync(json, { force: true });
    return out.results[0].median * 1000;
  }
  const times = [];
  for (let i = 0; i < warmup + runs; i++) {
    if (prepare) spawnSync(prepare[0], prepare.slice(1));
    const t = process.hrtime.bigint();
    const r = spawnSync(argv[0], argv.slice(1), { cwd: ROOT, env: fullEnv, encoding: 'utf8', timeout: 120_000 });
    const ms = Number(process.hrtime.bigint() - t) / 1e6;
    if (r.status !== 0) throw new Error(`${argv.slice(1, 4).join(' ')} exited ${r.status}: ${tail(r.stderr || r.stdout)}`);
    if (i >= warmup) times.push(ms);
  }
  return median(times);
}

/** The start-up scenario (needs the PostgreSQL scratch database for `labels list --url`). */
export async function coldStart(ctx) {
  const { R, o } = ctx;
  const node = process.execPath;
  const runs = o.quick ? 10 : 30;
  ctx.log('start-up: node -e 0, catalog --help, catalog labels list');
  await R.attempt('cold.node', async () => R.add('cold.node', timeCommand([node, '-e', '0'], { runs })));
  await R.attempt('cold.help', async () => R.add('cold.help', timeCommand([node, CATALOG_BIN, '--help'], { runs })));
  if (ctx.pgUrl) {
    await R.attempt('cold.labels', async () => {
      const service = await startCatalog({ databaseUrl: ctx.pgUrl });
      try {
        R.add('cold.labels', timeCommand([node, CATALOG_BIN, 'labels', 'list', '--url', service.url], { runs }));
      } finally {
        await service.stop();
      }
    });
  } else R.fail('cold.labels', 'needs the PostgreSQL store');

  ctx.log('start-up: embedded catalog (CATALOG_DATA in a fresh directory)');
  const dir = join(ctx.scratch, 'embedded');
  const env = { CATALOG_DATA: dir };
  // The first command leaves a background holder (CATALOG_KEEP_WARM): stop it before starting over.
  const stop = `f='${dir}/catalog-serve.json'; [ -f "$f" ] && kill $(sed -E 's/.*"pid":([0-9]+).*/\\1/' "$f") 2>/dev/null; sleep 0.5`;
  await R.attempt('cold.embedded.first', async () => {
    R.add('cold.embedded.first', timeCommand([node, CATALOG_BIN, 'labels', 'list'], { runs: o.quick ? 3 : 7, warmup: 1, env, prepare: ['sh', '-c', `${stop}; rm -rf '${dir}'`] }));
  });
  await R.attempt('cold.embedded.later', async () => {
    R.add('cold.embedded.later', timeCommand([node, CATALOG_BIN, 'labels', 'list'], { runs: o.quick ? 5 : 15, warmup: 2, env }));
  });
  // the same without a holder: each command opens the catalog itself (CATALOG_KEEP_WARM=0)
  spawnSync('sh', ['-c', stop]);
  await R.attempt('cold.embedded.inprocess', async () => {
    R.add('cold.embedded.inprocess', timeCommand([node, CATALOG_BIN, 'labels', 'list'], { runs: o.quick ? 5 : 15, warmup: 2, env: { ...env, CATALOG_KEEP_WARM: '0' } }));
  });
  spawnSync('sh', ['-c', stop]);
  rmSync(dir, { recursive: true, force: true });
}
