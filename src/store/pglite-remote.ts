import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { bufferPool } from './pglite-engine.js';
import { type Call, fromWire, type Reply, type ThreadOptions, toWire } from './pglite-wire.js';
import { type LocalSettings, type Queryable, type QueryResult, type Store, settingFirst, StoreError, toStoreError } from './store.js';

/**
 * The embedded store with PGlite on a thread of its own (pglite-thread.ts): what `catalog serve
 * --data` and the background holder open. PGlite's calls are synchronous WebAssembly; in the
 * service's thread they stopped everything else, so a bulk load used one core where the
 * PostgreSQL store uses two. Here the service reads, checks and answers the next request while
 * PGlite runs the last one's statements. Statements go one message each way (~0.1 ms); PGlite's
 * own lock orders them as in one thread. A command that opens the catalog for a moment keeps it in
 * its own thread (openPGlite): starting a thread would cost more than it saves.
 */

/** A call as the proxy makes it: the link numbers it. */
type Ask = Exclude<Call, { op: 'wrote' }> extends infer C ? (C extends { id: number } ? Omit<C, 'id'> : never) : never;

/** Sends calls to the store's thread and settles each with its answer. */
class Link {
  private nextId = 1;
  private pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private lost: Error | null = null;

  constructor(private readonly worker: Worker) {}

  call<T>(call: Ask): Promise<T> {
    if (this.lost) return Promise.reject(this.lost);
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      try {
        this.worker.postMessage({ ...call, id });
      } catch (err) {
        // a value structured clone cannot copy: this call fails, the thread never saw it
        this.pending.delete(id);
        reject(toStoreError(err));
      }
    });
  }

  tell(call: Extract<Call, { op: 'wrote' }>): void {
    if (!this.lost) this.worker.postMessage(call);
  }

  answer(reply: Extract<Reply, { id: number }>): void {
    const p = this.pending.get(reply.id);
    if (!p) return;
    this.pending.delete(reply.id);
    if (reply.ok) p.resolve(reply.value);
    else p.reject(fromWire(reply.error));
  }

  /** Whether the thread is gone (it died, stopped, or was closed). */
  get gone(): boolean {
    return this.lost !== null;
  }

  /** The thread is gone: every call waiting, and every later one, fails with `err`. */
  lose(err: Error): void {
    this.lost ??= err;
    for (const p of this.pending.values()) p.reject(this.lost);
    this.pending.clear();
  }
}

/** A body as its own bytes: structured clone copies a view's whole buffer, which may be far larger than the view. */
function own(csv: string | Uint8Array): string | Uint8Array {
  return typeof csv === 'string' || (csv.byteOffset === 0 && csv.byteLength === csv.buffer.byteLength) ? csv : csv.slice();
}

/** The statements of one transaction (or of none: `tx` null), sent to the thread. */
function queryable(link: Link, tx: number | null): Queryable {
  return {
    query: <R>(sql: string, params?: unknown[]) => link.call<QueryResult<R>>({ op: 'query', tx, sql, params }),
    copyCsvOut: async (select, write) => {
      const out = await link.call<{ chunks: Uint8Array[]; rows: number }>({ op: 'copyOut', tx, select });
      for (const chunk of out.chunks) await write(chunk);
      return out.rows;
    },
    ...(tx === null ? {} : { copyCsv: (target: string, columns: string[], csv: string | Uint8Array) => link.call<number>({ op: 'copyIn', tx, target, columns, csv: own(csv) }) }),
  };
}

/** The proxy the service uses: a Store whose statements run on the thread. */
class RemotePGliteStore implements Store {
  readonly kind = 'pglite' as const;
  readonly schema = 'public';
  readonly died: Promise<Error>;
  private readonly q: Queryable;

  constructor(
    private readonly link: Link,
    private readonly worker: Worker,
    died: Promise<Error>,
  ) {
    this.died = died;
    this.q = queryable(link, null);
  }

  query<R = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<QueryResult<R>> {
    return this.q.query<R>(sql, params);
  }

  copyCsvOut(select: string, write: (chunk: Uint8Array) => Promise<void>): Promise<number> {
    return this.q.copyCsvOut!(select, write);
  }

  async transaction<T>(fn: (tx: Queryable) => Promise<T>, _signal?: AbortSignal, local?: LocalSettings): Promise<T> {
    const tx = await this.link.call<number>({ op: 'begin' });
    let result: T;
    try {
      result = await settingFirst(fn, local)(queryable(this.link, tx));
    } catch (err) {
      // rolled back in the thread, which sees the fault (a StoreError) as its store would in one thread
      await this.link.call({ op: 'end', tx, error: toWire(err) }).catch(() => {});
      throw err;
    }
    await this.link.call({ op: 'end', tx, error: null });
    return result;
  }

  wrote(table: string, rows: number): void {
    this.link.tell({ op: 'wrote', table, rows });
  }

  private closed: Promise<void> | null = null;

  /** Closes the catalog and ends the thread, once; calls made after it fail (08006) instead of waiting. */
  close(): Promise<void> {
    this.closed ??= (async () => {
      await this.link.call({ op: 'close' }).catch(() => {});
      // the link is lost before the thread ends: its exit is then no death
      this.link.lose(new StoreError('08006', 'the embedded catalog is closed', null, null, 'lost'));
      await this.worker.terminate();
    })();
    return this.closed;
  }
}

/**
 * The thread's script: beside this module (tsc's dist/store/), else the package's bundle of it
 * (dist/bundle/pglite-thread.js, which scripts/bundle.mjs builds with the migrations inside), else
 * the build's (vitest runs this module from src/, and a worker runs JavaScript: the thread then
 * runs what `npm run build` made of the same source). Null where there is none: the store then
 * stays in the caller's thread.
 */
function threadScript(): URL | null {
  const candidates = [new URL('../bundle/pglite-thread.js', import.meta.url), new URL('../../dist/store/pglite-thread.js', import.meta.url)];
  if (import.meta.url.endsWith('.js')) candidates.unshift(new URL('./pglite-thread.js', import.meta.url));
  return candidates.find((url) => existsSync(fileURLToPath(url))) ?? null;
}

/**
 * Opens (creating and migrating when new) the embedded catalog in `dataDir` with PGlite on its own
 * thread; in this thread (openPGlite) where the thread's script is not there.
 */
export async function openPGliteThread(dataDir: string): Promise<Store> {
  const script = threadScript();
  const pglite = await import('./pglite.js');
  if (!script) return pglite.openPGlite({ dataDir });
  // compiled once, here (the opener may have started it already), and handed over
  const { pgliteWasmModule: module } = await pglite.prepareEngine();
  const worker = new Worker(script, { workerData: { dataDir, smallPool: bufferPool() !== null, ...(module ? { module } : {}) } satisfies ThreadOptions });
  const link = new Link(worker);
  let die: (err: Error) => void = () => {};
  const died = new Promise<Error>((resolve) => (die = resolve));
  const opened = new Promise<void>((resolve, reject) => {
    worker.on('message', (reply: Reply) => {
      if ('id' in reply) return link.answer(reply);
      if (reply.op === 'opened') return resolve();
      const err = fromWire(reply.error);
      if (reply.op === 'failed') return reject(err);
      link.lose(err);
      die(err);
    });
    const gone = (err: Error) => {
      // closed (or already dead): nothing more to tell
      if (link.gone) return;
      const lost = new StoreError('08006', `the embedded catalog's thread stopped: ${err.message}`, null, null, 'lost');
      link.lose(lost);
      die(lost);
      reject(err);
    };
    worker.on('error', gone);
    worker.on('exit', (code) => gone(new Error(`exit code ${code}`)));
  });
  try {
    await opened;
  } catch (err) {
    await worker.terminate();
    throw err;
  }
  return new RemotePGliteStore(link, worker, died);
}
