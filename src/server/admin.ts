import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Store } from '../store/store.js';
import { processFigures, type ProcessFigures } from './process-metrics.js';

/** Upper bounds (seconds) of the request latency histogram's buckets. */
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Longest a readiness check waits for the database. */
const READY_TIMEOUT_MS = 2_000;

/** The pool's figures: open, idle and waiting connections, and the most it may open. */
export interface PoolFigures {
  total: number;
  idle: number;
  waiting: number;
  max: number;
}

/**
 * What one process has counted, as plain data: what a worker sends its primary, which adds the
 * workers' figures up (`mergeSnapshots`) so a scrape reads the whole service.
 */
export interface MetricsSnapshot {
  /** Requests answered, by `method="…",status="…"` labels. */
  requests: Record<string, number>;
  buckets: number[];
  count: number;
  sum: number;
  /** Schema description loads (start, SIGUSR1), as PostgREST counts them. */
  schemaLoads: { success: number; fail: number };
  pool: PoolFigures | null;
  process: ProcessFigures;
  /** Processes that served (1, or the live workers). */
  workers: number;
}

/** What the service counts for `/metrics`: requests by method and status, their latency, schema loads. */
export class Metrics {
  private readonly requests = new Map<string, number>();
  private readonly buckets = new Array<number>(BUCKETS.length).fill(0);
  private count = 0;
  private sum = 0;
  private readonly schemaLoads = { success: 0, fail: 0 };

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

  /** A load of the schema description (at start, on SIGUSR1). */
  schemaLoaded(ok: boolean): void {
    this.schemaLoads[ok ? 'success' : 'fail']++;
  }

  /** This process's figures now. */
  snapshot(store: Store): MetricsSnapshot {
    const pool = (store as { pool?: { totalCount: number; idleCount: number; waitingCount: number; options?: { max?: number } } }).pool;
    return {
      requests: Object.fromEntries(this.requests),
      buckets: [...this.buckets],
      count: this.count,
      sum: this.sum,
      schemaLoads: { ...this.schemaLoads },
      pool: pool ? { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, max: pool.options?.max ?? 0 } : null,
      process: processFigures(),
      workers: 1,
    };
  }
}

/** Several processes' figures as one: counters, gauges and process figures added up (the start time is the earliest). */
export function mergeSnapshots(list: readonly MetricsSnapshot[]): MetricsSnapshot {
  const out: MetricsSnapshot = {
    requests: {},
    buckets: new Array<number>(BUCKETS.length).fill(0),
    count: 0,
    sum: 0,
    schemaLoads: { success: 0, fail: 0 },
    pool: null,
    process: { cpuSeconds: 0, residentBytes: 0, virtualBytes: 0, heapBytes: 0, openFds: 0, maxFds: 0, startTimeSeconds: Infinity },
    workers: 0,
  };
  for (const s of list) {
    for (const [k, n] of Object.entries(s.requests)) out.requests[k] = (out.requests[k] ?? 0) + n;
    s.buckets.forEach((n, i) => (out.buckets[i] += n));
    out.count += s.count;
    out.sum += s.sum;
    out.schemaLoads.success += s.schemaLoads.success;
    out.schemaLoads.fail += s.schemaLoads.fail;
    if (s.pool) {
      const p = (out.pool ??= { total: 0, idle: 0, waiting: 0, max: 0 });
      p.total += s.pool.total;
      p.idle += s.pool.idle;
      p.waiting += s.pool.waiting;
      p.max += s.pool.max;
    }
    const [a, b] = [out.process, s.process];
    a.cpuSeconds += b.cpuSeconds;
    a.residentBytes += b.residentBytes;
    a.virtualBytes += b.virtualBytes;
    a.heapBytes += b.heapBytes;
    a.openFds += b.openFds;
    a.maxFds = Math.max(a.maxFds, b.maxFds);
    a.startTimeSeconds = Math.min(a.startTimeSeconds, b.startTimeSeconds);
    out.workers += s.workers;
  }
  return out;
}

/** Lines of one metric family: its HELP, TYPE and samples (`[labels, value]`). */
function family(name: string, type: 'counter' | 'gauge', help: string, samples: Array<[string, number]>): string[] {
  return [`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, ...samples.map(([labels, v]) => `${name}${labels ? `{${labels}}` : ''} ${v}`)];
}

/**
 * Prometheus text format 0.0.4. Pool gauges and schema loads use PostgREST 12.2's names
 * (`pgrst_db_pool_*`, `pgrst_schema_cache_loads_total`); request counts and latency are ours
 * (PostgREST has none); process figures are the standard `process_*` ones.
 */
export function renderMetrics(m: MetricsSnapshot): string {
  const lines = family('catalog_http_requests_total', 'counter', 'Requests answered, by method and status.', Object.entries(m.requests).sort());
  lines.push('# HELP catalog_http_request_duration_seconds Time from a request to its last byte.', '# TYPE catalog_http_request_duration_seconds histogram');
  BUCKETS.forEach((b, i) => lines.push(`catalog_http_request_duration_seconds_bucket{le="${b}"} ${m.buckets[i]}`));
  lines.push(`catalog_http_request_duration_seconds_bucket{le="+Inf"} ${m.count}`);
  lines.push(`catalog_http_request_duration_seconds_sum ${m.sum}`, `catalog_http_request_duration_seconds_count ${m.count}`);
  lines.push(...family('pgrst_schema_cache_loads_total', 'counter', 'Loads of the schema description (start, SIGUSR1).', [['status="SUCCESS"', m.schemaLoads.success], ['status="FAIL"', m.schemaLoads.fail]]));
  lines.push(...family('catalog_workers', 'gauge', 'Processes serving requests.', [['', m.workers]]));
  if (m.pool) {
    lines.push(...family('pgrst_db_pool_available', 'gauge', 'Idle connections in the pool.', [['', m.pool.idle]]));
    lines.push(...family('pgrst_db_pool_waiting', 'gauge', 'Requests waiting for a connection.', [['', m.pool.waiting]]));
    lines.push(...family('pgrst_db_pool_max', 'gauge', 'Largest the pool may grow (all workers together).', [['', m.pool.max]]));
    lines.push(...family('catalog_db_pool_in_use', 'gauge', 'Connections running a request.', [['', m.pool.total - m.pool.idle]]));
  }
  const p = m.process;
  lines.push(...family('process_cpu_seconds_total', 'counter', 'User and system CPU time spent, in seconds (all processes of the service).', [['', p.cpuSeconds]]));
  lines.push(...family('process_resident_memory_bytes', 'gauge', 'Resident memory size in bytes (all processes).', [['', p.residentBytes]]));
  if (p.virtualBytes) lines.push(...family('process_virtual_memory_bytes', 'gauge', 'Virtual memory size in bytes (all processes).', [['', p.virtualBytes]]));
  lines.push(...family('process_heap_bytes', 'gauge', 'JavaScript heap in use, in bytes (all processes).', [['', p.heapBytes]]));
  if (p.maxFds) {
    lines.push(...family('process_open_fds', 'gauge', 'Open file descriptors (all processes).', [['', p.openFds]]));
    lines.push(...family('process_max_fds', 'gauge', 'Most file descriptors one process may open.', [['', p.maxFds]]));
  }
  lines.push(...family('process_start_time_seconds', 'gauge', 'Start time of the service since the Unix epoch, in seconds.', [['', p.startTimeSeconds]]));
  return `${lines.join('\n')}\n`;
}

/** Whether the database answers `select 1` within READY_TIMEOUT_MS. */
export async function storeReady(store: Store): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((r) => (timer = setTimeout(() => r(false), READY_TIMEOUT_MS)));
  try {
    return await Promise.race([store.query('select 1').then(() => true, () => false), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Where the admin port's answers come from: one process's own figures, or a cluster primary asking its workers. */
export interface AdminSource {
  metrics(): Promise<MetricsSnapshot>;
  ready(): Promise<boolean>;
  /** Whether the instance is closing (draining its requests): then not ready, whatever the database says. */
  draining?(): boolean;
}

/**
 * The admin port (`--admin-port`, PostgREST's `admin-server-port`): `/live` 200 while the process
 * serves, `/ready` 200 when the database answers (503 while it is unreachable, and while the
 * instance drains its requests on the way out, so a load balancer stops sending it new ones),
 * `/metrics` in Prometheus text. Nothing else, and never the catalog's data.
 */
export async function startAdmin(port: number, host: string, source: AdminSource): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const answer = (status: number, type: string, body: string) => res.writeHead(status, { 'Content-Type': type }).end(req.method === 'HEAD' ? undefined : body);
    const failed = () => answer(500, 'text/plain; charset=utf-8', 'the figures could not be gathered\n');
    if (path === '/live') return answer(200, 'text/plain; charset=utf-8', 'live\n');
    if (path === '/ready' && source.draining?.()) return answer(503, 'text/plain; charset=utf-8', 'shutting down: finishing the requests in flight\n');
    if (path === '/ready') return void source.ready().then((ok) => answer(ok ? 200 : 503, 'text/plain; charset=utf-8', ok ? 'ready\n' : 'the database does not answer\n'), failed);
    if (path === '/metrics') return void source.metrics().then((m) => answer(200, 'text/plain; version=0.0.4; charset=utf-8', renderMetrics(m)), failed);
    answer(404, 'text/plain; charset=utf-8', 'not found: /live, /ready and /metrics are served here\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const addr = server.address() as AddressInfo;
  return { url: `http://${addr.family === 'IPv6' ? `[${addr.address}]` : addr.address}:${addr.port}`, server };
}
