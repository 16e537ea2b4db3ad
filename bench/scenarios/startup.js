/**
 * Issue 34's two start-up figures, side by side in one run, on an existing (seeded) embedded catalog:
 *
 * - `node -e 0`, and a later `catalog labels list` (its background holder warm: bin/catalog.js hands
 *   the command to it through its command door, src/holder/door.ts), run alternately so that a
 *   change of load hits both alike: target ≤ 1.5× `node -e 0`;
 * - the first `catalog labels list` after the holder stopped (it starts the holder again, which
 *   opens the catalog, then answers): target ≤ 0.8 s.
 *
 * The catalog and the CLI's cache directory ($XDG_CACHE_HOME: the V8 code cache) are the run's
 * own; one command before the timed ones writes the code cache, as a user's first command does.
 * Output goes to a pipe, as in a script. Also runnable alone: `node bench/scenarios/startup.js`.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fmtMs, median } from '../lib/stats.js';
import { tail } from '../lib/proc.js';
import { CATALOG_BIN, ROOT } from '../lib/service.js';

/** The targets of issue 34, item 4. */
export const STARTUP_TARGETS = { warmTimesNode: 1.5, coldMs: 800 };

/**
 * CPU time (ms, user + system) of this process's children that were waited for, from
 * /proc/self/stat (10 ms ticks: a mean over many runs), or null without /proc.
 */
function childrenCpuMs() {
  try {
    const f = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
    return (Number(f[13]) + Number(f[14])) * 10;
  } catch {
    return null;
  }
}

/** CPU time (ms, user + system) process `pid` has used so far, from /proc (10 ms ticks), or null. */
function processCpuMs(pid) {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(f[11]) + Number(f[12])) * 10;
  } catch {
    return null;
  }
}

/** The pid of the holder of `dataDir`, from its lock, or null. */
function holderPid(dataDir) {
  try {
    return JSON.parse(readFileSync(join(dataDir, 'catalog-serve.json'), 'utf8')).pid;
  } catch {
    return null;
  }
}

/** Wall time (ms) of one run of `argv` and the CPU it used; throws with its stderr when it fails. */
function timed(argv, env) {
  const cpu = childrenCpuMs();
  const t = process.hrtime.bigint();
  const r = spawnSync(argv[0], argv.slice(1), { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 24, timeout: 120_000 });
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  if (r.status !== 0) throw new Error(`${argv.slice(1, 4).join(' ')} exited ${r.status}: ${tail(String(r.stderr || r.stdout))}`);
  return { ms, cpu: cpu === null ? null : childrenCpuMs() - cpu, stdout: String(r.stdout) };
}

/** The labels `labels list` printed (JSON on a pipe): a wrong answer is no figure. */
function checkLabels(stdout) {
  const rows = JSON.parse(stdout);
  if (!Array.isArray(rows) || rows.length === 0) throw new Error(`labels list printed no labels: ${stdout.slice(0, 200)}`);
}

const alive = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Stops the background holder of `dataDir` (SIGTERM, as its idle exit) and waits until its lock is gone. */
function stopHolder(dataDir) {
  const lock = join(dataDir, 'catalog-serve.json');
  let pid = null;
  try {
    pid = JSON.parse(readFileSync(lock, 'utf8')).pid;
  } catch {
    return;
  }
  if (alive(pid)) process.kill(pid, 'SIGTERM');
  const end = Date.now() + 15_000;
  while ((alive(pid) || existsSync(lock)) && Date.now() < end) spawnSync('sleep', ['0.02']);
  if (alive(pid)) throw new Error(`the holder (process ${pid}) did not stop`);
}

/**
 * Runs the scenario: `warmRuns` pairs of `node -e 0` and a warm `labels list`, then `coldRuns`
 * first commands after the holder stopped. Returns the samples (ms) of each.
 */
export function measureStartup({ warmRuns = 21, coldRuns = 7, log = () => {}, scratch } = {}) {
  // bin/catalog.js runs dist/cli/ instead of the bundle while a tsc is newer: not what users run
  const mtime = (rel) => statSync(join(ROOT, rel), { throwIfNoEntry: false })?.mtimeMs ?? -1;
  if (mtime('dist/bundle/catalog.js') < mtime('dist/cli/main.js')) throw new Error('dist/bundle/ is older than dist/cli/ (a tsc ran since): run npm run build first');
  // its own directory under the bench's scratch, or a new one when run alone (removed afterwards)
  const dir = scratch ? join(scratch, 'startup') : mkdtempSync(join(tmpdir(), 'catalog-startup-'));
  const dataDir = join(dir, 'catalog');
  const env = { ...process.env, CATALOG_DATA: dataDir, XDG_CACHE_HOME: join(dir, 'cache'), CATALOG_KEEP_WARM: '300', NO_COLOR: '1' };
  delete env.CATALOG_URL;
  delete env.CATALOG_PROFILE;
  delete env.NODE_EXTRA_CA_CERTS;
  const node = [process.execPath, '-e', '0'];
  const list = [process.execPath, CATALOG_BIN, 'labels', 'list'];
  // wall times, and the CPU time of each run (its own process; the holder's is not in it), and the
  // holder's CPU time per warm command (its whole CPU time over the warm runs, divided)
  const out = { node: [], warm: [], cold: [], nodeCpu: [], warmCpu: [], holderCpu: null };
  try {
    log('start-up: seeding an embedded catalog (catalog seed)');
    timed([process.execPath, CATALOG_BIN, 'seed'], env);
    // the first command of a user writes the code cache; so does this one (not timed)
    checkLabels(timed(list, env).stdout);
    // later commands are handed to the holder through its command door (src/holder/door.ts), which it opens once it serves
    const door = join(dataDir, 'catalog-cli.sock');
    for (let i = 0; i < 200 && !existsSync(door); i++) spawnSync('sleep', ['0.01']);
    if (!existsSync(door)) log('start-up: the holder opened no command door: later commands run the whole CLI');
    log(`start-up: node -e 0 and a warm labels list, alternately, ${warmRuns} times`);
    const holder = holderPid(dataDir);
    const holderBefore = holder === null ? null : processCpuMs(holder);
    for (let i = 0; i < warmRuns; i++) {
      const bare = timed(node, env);
      out.node.push(bare.ms);
      const warm = timed(list, env);
      checkLabels(warm.stdout);
      out.warm.push(warm.ms);
      if (bare.cpu !== null && warm.cpu !== null) {
        out.nodeCpu.push(bare.cpu);
        out.warmCpu.push(warm.cpu);
      }
    }
    const holderAfter = holder === null || holderPid(dataDir) !== holder ? null : processCpuMs(holder);
    if (holderBefore !== null && holderAfter !== null) out.holderCpu = (holderAfter - holderBefore) / warmRuns;
    log(`start-up: the first labels list after the holder stopped, ${coldRuns} times`);
    for (let i = 0; i < coldRuns; i++) {
      stopHolder(dataDir);
      // as after the holder's idle exit: nothing else running
      spawnSync('sleep', ['0.3']);
      const cold = timed(list, env);
      checkLabels(cold.stdout);
      out.cold.push(cold.ms);
    }
  } finally {
    try {
      stopHolder(dataDir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return out;
}

const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;

/** What the scenario prints: each figure against its target (and the CPU time, steadier on a busy machine). */
export function startupSummary({ node, warm, cold, nodeCpu = [], warmCpu = [], holderCpu = null }) {
  const n = median(node);
  const w = median(warm);
  const c = median(cold);
  const ratio = w / n;
  const mark = (ok) => (ok ? '✓' : '✗');
  return [
    `node -e 0: ${fmtMs(n)} (median of ${node.length})`,
    `later labels list, holder warm: ${fmtMs(w)} = ${ratio.toFixed(2)}× node -e 0 (target ≤ ${STARTUP_TARGETS.warmTimesNode}×) ${mark(ratio <= STARTUP_TARGETS.warmTimesNode)}`,
    `first labels list after the holder stopped: ${fmtMs(c)} (median of ${cold.length}; target ≤ ${fmtMs(STARTUP_TARGETS.coldMs)}) ${mark(c <= STARTUP_TARGETS.coldMs)}`,
    ...(warmCpu.length ? [`CPU time (user + system, mean): node -e 0 ${fmtMs(mean(nodeCpu))}, later labels list ${fmtMs(mean(warmCpu))} = ${(mean(warmCpu) / mean(nodeCpu)).toFixed(2)}× (load average ${loadavg()[0].toFixed(1)})`] : []),
    ...(holderCpu !== null ? [`the holder's CPU time per later labels list (mean): ${fmtMs(holderCpu)}`] : []),
  ];
}

/** The scenario inside `npm run bench` (`--only startup`). */
export async function startup(ctx) {
  const { R, o } = ctx;
  const keys = ['startup.node', 'startup.warm', 'startup.cold'];
  await R.attempt(keys, async () => {
    const out = measureStartup({ warmRuns: o.quick ? 7 : 21, coldRuns: o.quick ? 3 : 7, log: ctx.log, scratch: ctx.scratch });
    for (const v of out.node) R.add('startup.node', v);
    for (const v of out.warm) R.add('startup.warm', v);
    for (const v of out.cold) R.add('startup.cold', v);
    // per-run CPU comes in 10 ms ticks: its mean is the figure
    if (out.warmCpu.length) {
      R.add('startup.node.cpu', mean(out.nodeCpu));
      R.add('startup.warm.cpu', mean(out.warmCpu));
    }
    if (out.holderCpu !== null) R.add('startup.holder.cpu', out.holderCpu);
    for (const line of startupSummary(out)) ctx.log(`start-up: ${line}`);
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  delete process.env.NODE_EXTRA_CA_CERTS;
  const runs = Number(process.argv[2] ?? 21);
  const out = measureStartup({ warmRuns: runs, coldRuns: Math.max(3, Math.round(runs / 3)), log: (l) => process.stderr.write(`${l}\n`) });
  process.stdout.write(`${startupSummary(out).join('\n')}\n`);
}
