import type { Worker } from 'node:cluster';
import { startServer, type RunningServer, type StartOptions } from './listen.js';

export interface ClusterHandle {
  url: string;
  workers: number;
  close(): Promise<void>;
}

/**
 * `catalog serve --workers N`: N processes sharing one listening socket over one PostgreSQL
 * (node:cluster hands connections to the workers). Must be called in the primary; the forked
 * workers re-run the same command line and call `startServer` themselves (see `isClusterWorker`).
 * The primary migrates first, so the workers start on a ready schema.
 */
export async function startCluster(opts: StartOptions, workers: number): Promise<ClusterHandle> {
  if (!opts.databaseUrl) throw new Error('--workers needs --database-url: the embedded catalog (PGlite) is held by one process');
  const cluster = (await import('node:cluster')).default;
  const { openPostgres } = await import('../store/postgres.js');
  const store = await openPostgres({ url: opts.databaseUrl, schema: opts.schema, max: 1 });
  await store.close();

  const forked: Worker[] = [];
  const urls = await Promise.all(
    Array.from({ length: workers }, () => {
      const w = cluster.fork({ CATALOG_CLUSTER_WORKER: '1' });
      forked.push(w);
      return new Promise<string>((resolve, reject) => {
        w.on('message', (m: { type?: string; url?: string; error?: string }) => {
          if (m?.type === 'listening' && m.url) resolve(m.url);
          if (m?.type === 'failed') reject(new Error(m.error));
        });
        w.once('exit', (code) => reject(new Error(`worker exited with code ${code} before listening`)));
      });
    }),
  );
  let closing: Promise<void> | null = null;
  return {
    url: urls[0],
    workers,
    close() {
      closing ??= Promise.all(
        forked.map(
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
