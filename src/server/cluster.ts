import type { Worker } from 'node:cluster';
import { startServer, type RunningServer, type StartOptions } from './listen.js';
import type { MetricsSnapshot } from './admin.js';

export interface ClusterHandle {
  url: string;
  /** The admin port's URL (the primary serves it for all workers), when `adminPort` was given. */
  adminUrl?: string;
  workers: number;
  /** Sends a signal to every live worker (SIGUSR1, SIGUSR2, SIGHUP: each reloads as one process would). */
  relay(signal: NodeJS.Signals): number;
  close(): Promise<void>;
}

/** The longest pause before starting a worker again after workers kept dying before they listened. */
const MAX_RESPAWN_DELAY_MS = 30_000;
/** How long the primary waits for a worker's figures before using the last it sent. */
const ASK_TIMEOUT_MS = 2_000;

/**
 * `db-pool` shared out among the workers: every worker a share, the remainder to the first ones,
 * so together they open at most `pool` connections (PostgREST's db-pool is the service's).
 * @example poolShares(10, 3) // [4, 3, 3]
 */
export function poolShares(pool: number, workers: number): number[] {
  return Array.from({ length: workers }, (_, i) => Math.floor(pool / workers) + (i < pool % workers ? 1 : 0));
}

/** One worker as the primary keeps it: its pool share, and the figures it last sent. */
interface Slot {
  worker: Worker;
  share: number;
  last: MetricsSnapshot | null;
}

let asked = 0;

/** Asks a worker a question over IPC (`metrics` or `ready`); null when it does not answer in time. */
function ask<T>(w: Worker, type: 'catalog-metrics' | 'catalog-ready'): Promise<T | null> {
  const id = ++asked;
  return new Promise((resolve) => {
    const timer = setTimeout(() => done(null), ASK_TIMEOUT_MS);
    const onMessage = (m: { type?: string; id?: number; value?: T }) => {
      if (m?.type === type && m.id === id) done(m.value ?? null);
    };
    const done = (v: T | null) => {
      clearTimeout(timer);
      w.off('message', onMessage);
      resolve(v);
    };
    w.on('message', onMessage);
    try {
      w.send({ type, id }, (err: Error | null) => err && done(null));
    } catch {
      done(null);
    }
  });
}

/**
 * The primary's `/metrics`: every live worker's figures added up, with what workers that stopped
 * had counted when last asked (so a counter never goes down when one is replaced), and the
 * primary's own process figures.
 */
function clusterMetrics(slots: Set<Slot>, retired: MetricsSnapshot[], own: () => MetricsSnapshot['process']) {
  return async (): Promise<MetricsSnapshot> => {
    const { mergeSnapshots } = await import('./admin.js');
    const live = await Promise.all(
      [...slots].map(async (s) => {
        const now = await ask<MetricsSnapshot>(s.worker, 'catalog-metrics');
        if (now) s.last = now;
        return s.last;
      }),
    );
    const current = live.filter((m): m is MetricsSnapshot => m !== null);
    // stopped workers: their counters, not their gauges or processes
    const gone = retired.map((m) => ({ ...m, pool: null, workers: 0, process: { ...m.process, residentBytes: 0, virtualBytes: 0, heapBytes: 0, openFds: 0, maxFds: 0 } }));
    const primary = mergeSnapshots([]);
    primary.process = own();
    return mergeSnapshots([...current, ...gone, primary]);
  };
}

/** Forks one worker with its pool share; resolves with its URL once it listens. */
type Fork = (share: number) => Promise<string>;

/**
 * `catalog serve --workers N`: N processes sharing one listening socket over one PostgreSQL
 * (node:cluster hands connections to the workers). Must be called in the primary; the forked
 * workers re-run the same command line and call `startServer` themselves (see `isClusterWorker`).
 * The primary migrates first, so the workers start on a ready schema. A worker that dies is
 * replaced and `report`ed; one that dies before listening is replaced after a pause that doubles
 * each time (a crash loop, e.g. a database that refuses every connection, does not spin). The
 * primary serves the admin port itself, adding up the workers' figures, so a scrape reads the
 * whole service whichever worker would have answered.
 */
export async function startCluster(opts: StartOptions, workers: number, report: (line: string) => void = () => {}): Promise<ClusterHandle> {
  if (!opts.databaseUrl) throw new Error('--workers needs --database-url: the embedded catalog (PGlite) is held by one process');
  const cluster = (await import('node:cluster')).default;
  const { openPostgres } = await import('../store/postgres.js');
  const store = await openPostgres({ url: opts.databaseUrl, schema: opts.schema, max: 1 });
  await store.close();

  const slots = new Set<Slot>();
  const retired: MetricsSnapshot[] = [];
  let closing: Promise<void> | null = null;
  let delay = 0;
  let started = false;
  const fork: Fork = (share) => {
    const w = cluster.fork({ CATALOG_CLUSTER_WORKER: '1', CATALOG_WORKER_POOL: String(share) });
    w.on('error', () => {}); // a message to a worker that is going away: its exit is handled below
    const slot: Slot = { worker: w, share, last: null };
    slots.add(slot);
    let listening = false;
    return new Promise<string>((resolve, reject) => {
      w.on('message', (m: { type?: string; url?: string; error?: string }) => {
        if (m?.type === 'listening' && m.url) {
          listening = true;
          delay = 0;
          if (started) report(`worker ${w.process.pid} serving in its place`);
          resolve(m.url);
        }
        if (m?.type === 'failed') reject(new Error(m.error));
      });
      w.once('exit', (code, signal) => {
        slots.delete(slot);
        if (slot.last) retired.push(slot.last);
        reject(new Error(`worker exited with code ${code} before listening`));
        if (closing || !started) return;
        delay = listening ? 0 : Math.min(Math.max(delay * 2, 500), MAX_RESPAWN_DELAY_MS);
        const why = signal ? `signal ${signal}` : `exit code ${code}`;
        report(`worker ${w.process.pid} stopped (${why}); starting another${delay ? ` in ${delay / 1000} s` : ''}`);
        setTimeout(() => {
          if (!closing) fork(share).catch(() => {});
        }, delay).unref();
      });
    });
  };
  const shares = poolShares(opts.dbPool ?? 10, workers);
  const urls = await Promise.all(shares.map(fork));
  started = true;
  const admin = await startClusterAdmin(opts, slots, retired);
  return {
    url: urls[0],
    ...(admin ? { adminUrl: admin.url } : {}),
    workers,
    relay(signal) {
      for (const s of slots) s.worker.process.kill(signal);
      return slots.size;
    },
    close() {
      closing ??= (async () => {
        if (admin) await new Promise((r) => (admin.server.close(r), admin.server.closeAllConnections()));
        await Promise.all([...slots].map((s) => stopWorker(s.worker)));
      })();
      return closing;
    },
  };
}

/** SIGTERM to a worker; resolves when it has exited. */
function stopWorker(w: Worker): Promise<void> {
  return new Promise<void>((resolve) => {
    if (w.isDead()) return resolve();
    w.once('exit', () => resolve());
    w.kill('SIGTERM');
  });
}

/** The primary's admin port (`/ready`: every live worker's database answers), or null without `adminPort`. */
async function startClusterAdmin(opts: StartOptions, slots: Set<Slot>, retired: MetricsSnapshot[]) {
  if (opts.adminPort === undefined) return null;
  const [{ startAdmin }, { processFigures }] = await Promise.all([import('./admin.js'), import('./process-metrics.js')]);
  const ready = async () => slots.size > 0 && (await Promise.all([...slots].map((s) => ask<boolean>(s.worker, 'catalog-ready')))).every((ok) => ok === true);
  return startAdmin(opts.adminPort, opts.host ?? '127.0.0.1', { metrics: clusterMetrics(slots, retired, processFigures), ready });
}

/** This worker's process id (for its log lines). */
export function workerPid(): number {
  return process.pid;
}

/** True in a process forked by `startCluster`. */
export function isClusterWorker(): boolean {
  return process.env.CATALOG_CLUSTER_WORKER === '1' && typeof process.send === 'function';
}

/**
 * The worker side: start one server with this worker's share of the pool and no admin port (the
 * primary serves it), tell the primary, answer its questions for `/metrics` and `/ready`, stop on
 * SIGTERM/SIGINT.
 */
export async function runClusterWorker(opts: StartOptions): Promise<RunningServer> {
  try {
    const share = Number(process.env.CATALOG_WORKER_POOL);
    const running = await startServer({ ...opts, adminPort: undefined, ...(share > 0 ? { dbPool: share } : {}) });
    process.send?.({ type: 'listening', url: running.url });
    process.on('message', (m: { type?: string; id?: number }) => {
      if (m?.type === 'catalog-metrics') process.send?.({ type: m.type, id: m.id, value: running.metrics() });
      if (m?.type === 'catalog-ready') {
        void import('./admin.js').then(({ storeReady }) => storeReady(running.store)).then((value) => process.send?.({ type: m.type, id: m.id, value }));
      }
    });
    const stop = () => void running.close().then(() => process.exit(0));
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
    return running;
  } catch (err) {
    process.send?.({ type: 'failed', error: err instanceof Error ? err.message : String(err) });
    throw err;
  }
}
