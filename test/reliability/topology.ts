import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { tempDir } from '../support/stores.js';
import { eventually, freePort } from './support.js';

/**
 * The machine's PgBouncer and HAProxy (Debian's packages, installed by .ci/run), started on loopback
 * ports for a test and stopped by it: the pooler and the load balancer of a deployment of several
 * `catalog serve` instances (docs/deploy.md).
 */
export const PGBOUNCER = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer'].find((p) => existsSync(p));
export const HAPROXY = ['/usr/sbin/haproxy', '/usr/bin/haproxy'].find((p) => existsSync(p));

/** A process this test started, and how to reach it. */
export interface Started {
  url: string;
  stop(): Promise<void>;
}

/** Sends SIGTERM to a child this test started (by its pid) and waits for it to go. */
function stopper(child: ChildProcess): () => Promise<void> {
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
}

/**
 * PgBouncer in transaction mode in front of the PostgreSQL of `target` (a postgres:// URL); `url` is
 * the same database through the pooler. `poolSize` server connections per database and user.
 */
export async function startPgBouncer(target: string, poolSize = 8): Promise<Started> {
  if (!PGBOUNCER) throw new Error('pgbouncer is not installed');
  const to = new URL(target);
  const port = await freePort();
  const dir = tempDir('pgbouncer-');
  chmodSync(dir, 0o755);
  const ini = join(dir, 'pgbouncer.ini');
  writeFileSync(
    ini,
    `[databases]\n* = host=${to.hostname} port=${to.port || 5432} user=${decodeURIComponent(to.username || 'postgres')}\n\n` +
      `[pgbouncer]\nlisten_addr = 127.0.0.1\nlisten_port = ${port}\nunix_socket_dir =\nauth_type = any\npool_mode = transaction\n` +
      `max_client_conn = 200\ndefault_pool_size = ${poolSize}\nlogfile =\npidfile =\n`,
  );
  chmodSync(ini, 0o644);
  // PgBouncer will not run as root
  const child = spawn(PGBOUNCER, [...(process.getuid?.() === 0 ? ['-u', 'nobody'] : []), ini], { stdio: 'ignore' });
  const url = `postgres://${to.username || 'postgres'}@127.0.0.1:${port}${to.pathname}`;
  const up = await eventually(async () => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    await c.end();
    return true;
  });
  const stop = stopper(child);
  if (!up) {
    await stop();
    throw new Error(`PgBouncer did not accept connections on 127.0.0.1:${port}`);
  }
  return { url, stop };
}

/** A server behind the load balancer: where it serves, and the admin port its health check asks `/ready`. */
export interface Backend {
  name: string;
  port: number;
  adminPort: number;
}

export interface LoadBalancer extends Started {
  /** Each server's state as HAProxy's statistics report it (`UP`, `DOWN`, `UP 1/2` while going down, …). */
  states(): Promise<Record<string, string>>;
}

/** The HAProxy configuration for `backends`, balanced round-robin, each checked on its admin port's `/ready` (docs/deploy.md shows the same). */
export function haproxyConfig(backends: Backend[], port: number, statsPort: number): string {
  return [
    'global',
    '  maxconn 512',
    'defaults',
    '  mode http',
    '  timeout connect 2s',
    '  timeout client 30s',
    '  timeout server 30s',
    '  timeout check 2s',
    // a refused connection (an instance that is gone, not yet marked down) is tried on another server
    '  retries 2',
    '  option redispatch 1',
    'frontend catalog',
    `  bind 127.0.0.1:${port}`,
    '  default_backend catalog',
    'backend catalog',
    '  balance roundrobin',
    '  option httpchk GET /ready',
    '  http-check expect status 200',
    '  default-server check inter 200ms fall 2 rise 1',
    ...backends.map((b) => `  server ${b.name} 127.0.0.1:${b.port} port ${b.adminPort}`),
    'listen stats',
    `  bind 127.0.0.1:${statsPort}`,
    '  stats enable',
    '  stats uri /stats',
    '',
  ].join('\n');
}

/** HAProxy in the foreground, balancing `backends` round-robin with health checks (see haproxyConfig). */
export async function startHaproxy(backends: Backend[]): Promise<LoadBalancer> {
  if (!HAPROXY) throw new Error('haproxy is not installed');
  const [port, statsPort] = [await freePort(), await freePort()];
  const cfg = join(tempDir('haproxy-'), 'haproxy.cfg');
  writeFileSync(cfg, haproxyConfig(backends, port, statsPort));
  const child = spawn(HAPROXY, ['-db', '-f', cfg], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (c) => (stderr += c));
  const states = async (): Promise<Record<string, string>> => {
    const csv = await (await fetch(`http://127.0.0.1:${statsPort}/stats;csv`)).text();
    const [header, ...rows] = csv.trim().split('\n').map((l) => l.split(','));
    const at = (name: string) => header.indexOf(name === 'pxname' ? '# pxname' : name);
    const out: Record<string, string> = {};
    for (const r of rows) if (r[at('pxname')] === 'catalog' && !['FRONTEND', 'BACKEND'].includes(r[at('svname')])) out[r[at('svname')]] = r[at('status')];
    return out;
  };
  const stop = stopper(child);
  if (!(await eventually(async () => Object.keys(await states()).length === backends.length))) {
    await stop();
    throw new Error(`HAProxy did not start: ${stderr}`);
  }
  return { url: `http://127.0.0.1:${port}`, states, stop };
}
