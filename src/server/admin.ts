import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Store } from '../store/store.js';

/** Upper bounds (seconds) of the request latency histogram's buckets. */
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Longest a readiness check waits for the database. */
const READY_TIMEOUT_MS = 2_000;

/** What the service counts for `/metrics`: requests by method and status, and their latency. */
export class Metrics {
  private readonly requests = new Map<string, number>();
  private readonly buckets = new Array<number>(BUCKETS.length).fill(0);
  private count = 0;
  private sum = 0;

  /** One answered request (`ms` from its arrival to its last byte). */
  record(method: string, status: number, ms: number): void {
    const key = `method="${method.replace(/[^A-Z]/gi, '')}",status="${status}"`;
    this.requests.set(key, (this.requests.get(key) ?? 0) + 1);
    const s = ms / 1000;
    this.count++;
    this.sum += s;
    BUCKETS.forEach((b, i) => {
      if (s <= b) this.buckets[i]++;
    });
  }

  /**
   * Prometheus text format 0.0.4. Pool gauges use PostgREST 12.2's names (`pgrst_db_pool_*`);
   * request counts and latency are ours (PostgREST has none).
   */
  render(store: Store): string {
    const lines = ['# HELP catalog_http_requests_total Requests answered, by method and status.', '# TYPE catalog_http_requests_total counter'];
    for (const [labels, n] of [...this.requests].sort()) lines.push(`catalog_http_requests_total{${labels}} ${n}`);
    lines.push('# HELP catalog_http_request_duration_seconds Time from a request to its last byte.', '# TYPE catalog_http_request_duration_seconds histogram');
    BUCKETS.forEach((b, i) => lines.push(`catalog_http_request_duration_seconds_bucket{le="${b}"} ${this.buckets[i]}`));
    lines.push(`catalog_http_request_duration_seconds_bucket{le="+Inf"} ${this.count}`);
    lines.push(`catalog_http_request_duration_seconds_sum ${this.sum}`, `catalog_http_request_duration_seconds_count ${this.count}`);
    const pool = (store as { pool?: { totalCount: number; idleCount: number; waitingCount: number; options?: { max?: number } } }).pool;
    if (pool) {
      const gauges: Array<[string, string, number]> = [
        ['pgrst_db_pool_available', 'Idle connections in the pool.', pool.idleCount],
        ['pgrst_db_pool_waiting', 'Requests waiting for a connection.', pool.waitingCount],
        ['pgrst_db_pool_max', 'Largest the pool may grow.', pool.options?.max ?? 0],
        ['catalog_db_pool_in_use', 'Connections running a request.', pool.totalCount - pool.idleCount],
      ];
      for (const [name, help, v] of gauges) lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} gauge`, `${name} ${v}`);
    }
    return `${lines.join('\n')}\n`;
  }
}

/** Whether the database answers `select 1` within READY_TIMEOUT_MS. */
async function ready(store: Store): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((r) => (timer = setTimeout(() => r(false), READY_TIMEOUT_MS)));
  try {
    return await Promise.race([store.query('select 1').then(() => true, () => false), late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The admin port (`--admin-port`, PostgREST's `admin-server-port`): `/live` 200 while the process
 * serves, `/ready` 200 when the database answers (503 while it is unreachable), `/metrics` in
 * Prometheus text. Nothing else, and never the catalog's data.
 */
export async function startAdmin(port: number, host: string, store: Store, metrics: Metrics): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const answer = (status: number, type: string, body: string) => res.writeHead(status, { 'Content-Type': type }).end(req.method === 'HEAD' ? undefined : body);
    if (path === '/live') return answer(200, 'text/plain; charset=utf-8', 'live\n');
    if (path === '/ready') return void ready(store).then((ok) => answer(ok ? 200 : 503, 'text/plain; charset=utf-8', ok ? 'ready\n' : 'the database does not answer\n'));
    if (path === '/metrics') return answer(200, 'text/plain; version=0.0.4; charset=utf-8', metrics.render(store));
    answer(404, 'text/plain; charset=utf-8', 'not found: /live, /ready and /metrics are served here\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const addr = server.address() as AddressInfo;
  return { url: `http://${addr.family === 'IPv6' ? `[${addr.address}]` : addr.address}:${addr.port}`, server };
}
