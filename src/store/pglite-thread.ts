import { type MessagePort, parentPort, workerData } from 'node:worker_threads';
import { openPGlite, prepareEngine, useSmallBufferPool } from './pglite.js';
import { type Queryable, type Store, StoreError } from './store.js';
import { type Call, fromWire, type Reply, type ThreadOptions, toWire } from './pglite-wire.js';

/**
 * The embedded store's own thread: PGlite runs here, so that its WebAssembly and the service's
 * JavaScript (HTTP, bodies read and checked, answers) use two cores, as the PostgreSQL store's
 * server and service do. The proxy (pglite-remote.ts) sends statements; this thread runs them on a
 * PGliteStore exactly as the service would in one thread (its recovery after faults, the ANALYZE
 * after writes settle, the free-space check before every transaction).
 */

/** An open transaction: its statements' Queryable, and how the proxy's `end` finishes it. */
interface OpenTx {
  q: Queryable;
  finish: (error: Error | null) => void;
  done: Promise<void>;
}

class Thread {
  private txs = new Map<number, OpenTx>();
  private nextTx = 1;

  constructor(
    private readonly port: MessagePort,
    private readonly store: Store,
  ) {}

  private reply(id: number, work: () => Promise<unknown>): void {
    // a throw of `work` itself (a transaction that has ended) answers this call, as a rejection does
    Promise.resolve()
      .then(work)
      .then(
        (value) => this.port.postMessage({ id, ok: true, value } satisfies Reply),
        (err: unknown) => this.port.postMessage({ id, ok: false, error: toWire(err) } satisfies Reply),
      );
  }

  /** An open transaction; what PGlite answers a statement of one that has ended when there is none. */
  private open(tx: number): OpenTx {
    const open = this.txs.get(tx);
    if (!open) throw new StoreError('XX000', 'Transaction is closed');
    return open;
  }

  /** The statements' target: an open transaction, or the store itself. */
  private on(tx: number | null): Queryable {
    return tx === null ? this.store : this.open(tx).q;
  }

  handle(call: Call): void {
    switch (call.op) {
      case 'wrote':
        return this.store.wrote?.(call.table, call.rows);
      case 'query':
        return this.reply(call.id, () => this.on(call.tx).query(call.sql, call.params));
      case 'copyIn':
        return this.reply(call.id, () => this.on(call.tx).copyCsv!(call.target, call.columns, call.csv));
      case 'copyOut':
        return this.reply(call.id, () => this.copyOut(call.tx, call.select));
      case 'begin':
        return this.begin(call.id);
      case 'end':
        return this.reply(call.id, () => this.end(call.tx, call.error ? fromWire(call.error) : null));
      case 'close':
        return this.reply(call.id, () => this.store.close());
    }
  }

  /** PGlite makes a COPY's output whole; its pieces go across in one message. */
  private async copyOut(tx: number | null, select: string): Promise<{ chunks: Uint8Array[]; rows: number }> {
    const chunks: Uint8Array[] = [];
    const rows = await this.on(tx).copyCsvOut!(select, async (chunk) => void chunks.push(chunk));
    return { chunks, rows };
  }

  /** Begins a transaction and answers with its number once it is open (or with why it could not begin). */
  private begin(id: number): void {
    const n = this.nextTx++;
    let opened = false;
    const done = this.store.transaction(
      (q) =>
        new Promise<void>((resolve, reject) => {
          opened = true;
          this.txs.set(n, { q, finish: (error) => (error ? reject(error) : resolve()), done });
          this.port.postMessage({ id, ok: true, value: n } satisfies Reply);
        }),
    );
    done.catch((err: unknown) => {
      if (!opened) this.port.postMessage({ id, ok: false, error: toWire(err) } satisfies Reply);
    });
  }

  /** Commits (no error) or rolls back a transaction; resolves once PGlite has, rejects with a commit's failure. */
  private async end(tx: number, error: Error | null): Promise<void> {
    const open = this.open(tx);
    this.txs.delete(tx);
    open.finish(error);
    try {
      await open.done;
    } catch (err) {
      // a rollback the proxy asked for is not a failure of `end`: the proxy throws its own error
      if (!error) throw err;
    }
  }
}

async function main(port: MessagePort, opts: ThreadOptions): Promise<void> {
  useSmallBufferPool(opts.smallPool);
  void prepareEngine(opts.module);
  let store: Store;
  try {
    store = await openPGlite({ dataDir: opts.dataDir });
  } catch (err) {
    port.postMessage({ op: 'failed', error: toWire(err) } satisfies Reply);
    return;
  }
  const thread = new Thread(port, store);
  void store.died?.then((err) => port.postMessage({ op: 'died', error: toWire(err) } satisfies Reply));
  port.on('message', (call: Call) => thread.handle(call));
  port.postMessage({ op: 'opened' } satisfies Reply);
}

if (parentPort) void main(parentPort, workerData as ThreadOptions);
