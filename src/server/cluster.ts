import type { Worker } from 'node:cluster';
import { startServer, type RunningServer, type StartOptions } from './listen.js';

export interface ClusterHandle {
  url: string;
  workers: number;
  close(): Promise<void>;
}

/** The longest pause before starting a worker again after workers kept dying before they listened. */
const MAX_RESPAWN_DELAY_MS = 30_000;

/**
 * `catalog serve --workers N`: N processes sharing one listening socket over one PostgreSQL
 * (node:cluster hands connections to the workers). Must be called in the primary; the forked
 * workers re-run the same command line and call `startServer` themselves (see `isClusterWorker`).
 * The primary migrates first, so the workers start on a ready schema. A worker that dies is
 * replaced and `report`ed; one that dies before listening is replaced after a pause that doubles
 * each time (a crash loop, e.g. a database that refuses every connection, does not spin).
 */
export async function startCluster(opts: StartOptions, workers: number, report: (line: string) => void = () => {}): Promise<ClusterHandle> {
  if (!opts.databaseUrl) throw new Error('--workers needs --database-url: the embedded catalog (PGlite) is held by one process');
  const cluster = (await import('node:cluster')).default;
  const { openPostgres } = await import('../store/postgres.js');
  const store = await openPostgres({ url: opts.databaseUrl, schema: opts.schema, max: 1 });
  await store.close();

  const live = new Set<Worker>();
  let closing: Promise<void> | null = null;
  let delay = 0;
  /** Forks a worker; resolves with its URL once it listens. */
  const fork = (): Promise<string> => {
    const w = cluster.fork({ CATALOG_CLUSTER_WORKER: '1' });
    live.add(w);
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
        live.delete(w);
        reject(new Error(`worker exited with code ${code} before listening`));
        if (closing || !started) return;
        delay = listening ? 0 : Math.min(Math.max(delay * 2, 500), MAX_RESPAWN_DELAY_MS);
        const why = signal ? `signal ${signal}` : `exit code ${code}`;
        report(`worker ${w.process.pid} stopped (${why}); starting another${delay ? ` in ${delay / 1000} s` : ''}`);
        setTimeout(() => {
          if (!closing) fork().catch(() => {});
        }, delay).unref();
      });
    });
  };
  let started = false;
  const urls = await Promise.all(Array.from({ length: workers }, fork));
  started = true;
  return {
    url: urls[0],
    workers,
    close() {
      closing ??= Promise.all(
        [...live].map(
          (w) =>
            new Promise<void>((resolve) => {
              if (w.isDead()) return resolve();
              w.once('exit', () => resolve());
              w.kill('SIGTERM');
            }),
        ),
      ).then(() => undefined);
      return closing;
    },
  };
}

/** True in a process forked by `startCluster`. */
export function isClusterWorker(): boolean {
  return process.env.CATALOG_CLUSTER_WORKER === '1' && typeof process.send === 'function';
}

/** The worker side: start one server, tell the primary, stop on SIGTERM/SIGINT. */
export async function runClusterWorker(opts: StartOptions): Promise<RunningServer> {
  try {
    const running = await startServer(opts);
    process.send?.({ type: 'listening', url: running.url });
    const stop = () => void running.close().then(() => process.exit(0));
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
    return running;
  } catch (err) {
    process.send?.({ type: 'failed', error: err instanceof Error ? err.message : String(err) });
    throw err;
  }
}
