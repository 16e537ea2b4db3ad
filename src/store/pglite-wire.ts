import { type ConnectionFault, StoreError } from './store.js';

/**
 * What the embedded store's thread (pglite-thread.ts) and its proxy (pglite-remote.ts) say to each
 * other over the worker's port. Every call but `wrote` is answered once, by id. A transaction is
 * opened by `begin`, which answers with its number once PGlite has begun it; the statements of it
 * carry that number; `end` commits it (or rolls it back, carrying the error that made the caller
 * give up, so the thread's store sees the fault as it would in one thread) and answers once that is done.
 */
export type Call =
  | { id: number; op: 'query'; tx: number | null; sql: string; params?: unknown[] }
  | { id: number; op: 'copyIn'; tx: number; target: string; columns: string[]; csv: string | Uint8Array }
  | { id: number; op: 'copyOut'; tx: number | null; select: string }
  | { id: number; op: 'begin' }
  | { id: number; op: 'end'; tx: number; error: WireError | null }
  | { id: number; op: 'close' }
  | { op: 'wrote'; table: string; rows: number };

/** A call's answer, the store's death (PGlite aborted: it answers nothing more), or the thread's first word. */
export type Reply =
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; error: WireError }
  | { op: 'died'; error: WireError }
  | { op: 'opened' }
  | { op: 'failed'; error: WireError };

/** What the thread is started with (its workerData). */
export interface ThreadOptions {
  dataDir: string;
  /** The 16 MB buffer pool (pglite-engine.ts useSmallBufferPool), as the opening process chose. */
  smallPool: boolean;
  /** PostgreSQL's WebAssembly, compiled by the opening thread (pglite.ts prepareEngine), when it could be. */
  module?: WebAssembly.Module;
}

/** An error as it crosses the port: a StoreError's fields, or another error's name and message. */
export interface WireError {
  store: boolean;
  name: string;
  message: string;
  code?: string;
  detail?: string | null;
  hint?: string | null;
  connection?: ConnectionFault | null;
}

/** An error in the form that crosses the port. */
export function toWire(err: unknown): WireError {
  if (err instanceof StoreError) return { store: true, name: err.name, message: err.message, code: err.code, detail: err.detail, hint: err.hint, connection: err.connection };
  const e = err instanceof Error ? err : new Error(String(err));
  const code = (e as NodeJS.ErrnoException).code;
  return { store: false, name: e.name, message: e.message, ...(typeof code === 'string' ? { code } : {}) };
}

/** The error again on this side: a StoreError with the same fields, or an Error with the same name, message and code. */
export function fromWire(w: WireError): Error {
  if (w.store) return new StoreError(w.code ?? 'XX000', w.message, w.detail ?? null, w.hint ?? null, w.connection ?? null);
  const err = new Error(w.message);
  err.name = w.name;
  if (w.code !== undefined) (err as NodeJS.ErrnoException).code = w.code;
  return err;
}
