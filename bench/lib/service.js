/**
 * Services under test, started as child processes: `catalog serve` (PostgreSQL by URL or PGlite
 * in a data directory, optionally with --workers) and the minimal handler peer.
 */
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { request } from 'undici';
import { startProcess, tail } from './proc.js';

export const ROOT = new URL('../../', import.meta.url).pathname;
export const CATALOG_BIN = join(ROOT, 'bin', 'catalog.js');

/** A free TCP port on loopback. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** Resolves when `url` answers any HTTP status; rejects when the process died or time ran out. */
export async function waitForHttp(url, proc, timeoutMs = 120_000) {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (proc.exited) throw new Error(`exited before listening: ${tail(proc.output(), 2) || 'no output'}`);
    try {
      const res = await request(url, { method: 'GET', headersTimeout: 2000, bodyTimeout: 2000 });
      await res.body.dump();
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`did not answer within ${timeoutMs / 1000} s: ${tail(proc.output(), 2)}`);
}

/**
 * Starts `node ...args` (which listens on `port`) and waits until it answers HTTP.
 * Returns { url, pid, proc, stop() }; throws, naming `label` and the reason, when it cannot start.
 */
async function startListening(label, args, port, env) {
  const proc = startProcess(process.execPath, args, { cwd: ROOT, env });
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitForHttp(`${url}/`, proc);
  } catch (err) {
    await proc.stop();
    throw new Error(`${label} ${err.message}`);
  }
  return { url, pid: proc.pid, proc, stop: () => proc.stop() };
}

/**
 * Starts `catalog serve` on a free port: `{ databaseUrl }` or `{ dataDir }`, optional `workers` and `extraArgs`.
 * Returns { url, pid, proc, stop() }; throws (with the reason) when it cannot start.
 */
export async function startCatalog({ databaseUrl, dataDir, workers, env, extraArgs = [] } = {}) {
  if (!existsSync(CATALOG_BIN)) throw new Error('bin/catalog.js not built yet');
  const port = await freePort();
  const args = [CATALOG_BIN, 'serve', '--port', String(port), '--host', '127.0.0.1'];
  if (databaseUrl) args.push('--database-url', databaseUrl);
  else args.push('--data', dataDir);
  if (workers !== undefined) args.push('--workers', String(workers));
  args.push(...extraArgs);
  return startListening('catalog serve', args, port, env);
}

/** Starts the minimal node:http + SQL handler (bench/peers/minimal-handler.js). */
export async function startMinimal({ databaseUrl, dataDir, tx = false }) {
  const port = await freePort();
  const args = [join(ROOT, 'bench', 'peers', 'minimal-handler.js'), '--port', String(port)];
  if (tx) args.push('--tx');
  if (databaseUrl) args.push('--url', databaseUrl);
  else args.push('--dir', dataDir);
  return startListening('minimal handler', args, port);
}

/** Starts bench/peers/cluster-driver.js (the lead's cluster module) with `workers` workers. */
export async function startClusterDriver({ databaseUrl, workers }) {
  const port = await freePort();
  const args = [join(ROOT, 'bench', 'peers', 'cluster-driver.js'), '--port', String(port), '--database-url', databaseUrl, '--workers', String(workers)];
  return startListening('cluster driver', args, port);
}

/** Whether the CLI's help mentions a flag for a subcommand (e.g. serve --workers). */
export async function cliHasFlag(subcommand, flag) {
  const { spawnSync } = await import('node:child_process');
  if (!existsSync(CATALOG_BIN)) return false;
  const r = spawnSync(process.execPath, [CATALOG_BIN, subcommand, '--help'], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });
  return `${r.stdout}${r.stderr}`.includes(flag);
}
