/** Rows and count of one statement. */
export interface QueryResult<R> {
  rows: R[];
  rowCount: number;
}

/** Anything that runs one SQL statement with bound parameters. */
export interface Queryable {
  /** `signal`: the request's client went away; the statement is cancelled where the store can. */
  query<R = Record<string, unknown>>(sql: string, params?: unknown[], signal?: AbortSignal): Promise<QueryResult<R>>;
  /**
   * Loads CSV text with COPY (`FORMAT csv`, its first line a header that is skipped) into
   * `target(columns)`: the fastest bulk path each store has. `target` and `columns` must be quoted
   * identifiers built by the caller from trusted names. Present on transactions.
   */
  copyCsv?(target: string, columns: string[], csv: string | Uint8Array): Promise<number>;
  /**
   * Runs `COPY (<select>) TO STDOUT (FORMAT csv, HEADER true)` and hands its output to `write` as it
   * comes, awaiting each call (backpressure): PostgreSQL streams it, PGlite makes it whole first.
   * `select` must be built by the caller with every value inlined as a literal (COPY takes no bound
   * parameters). Resolves with the number of rows; a `write` that throws stops the COPY.
   */
  copyCsvOut?(select: string, write: (chunk: Uint8Array) => Promise<void>): Promise<number>;
}

/** Transaction-local settings, name and value (Store.transaction's `local`). */
export type LocalSettings = ReadonlyArray<readonly [string, string]>;

/** `fn`, after `local` is set in its transaction (one statement each): the stores whose BEGIN cannot carry them. */
export function settingFirst<T>(fn: (tx: Queryable) => Promise<T>, local: LocalSettings | undefined): (tx: Queryable) => Promise<T> {
  if (!local?.length) return fn;
  return async (tx) => {
    for (const [name, value] of local) await tx.query('SELECT set_config($1, $2, true)', [name, value]);
    return fn(tx);
  };
}

/**
 * A catalog database: the embedded PGlite or a PostgreSQL server. Values come back as PostgreSQL
 * prints them (dates and timestamps as text); response bodies are built as JSON text inside the
 * database, so rows rarely become JS objects at all.
 */
export interface Store extends Queryable {
  readonly kind: 'pglite' | 'postgres';
  /** Schema that holds the catalog tables (`public` unless a test made its own). */
  readonly schema: string;
  /**
   * Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. When
   * `signal` aborts (the request's client went away), PostgreSQL cancels the running statement and
   * the transaction is rolled back; PGlite cannot stop a statement and finishes it. `local`:
   * transaction-local settings (`set_config(name, value, true)`) made before `fn` runs
   * (PostgreSQL sends them with its BEGIN, in one round trip).
   */
  transaction<T>(fn: (tx: Queryable) => Promise<T>, signal?: AbortSignal, local?: LocalSettings): Promise<T>;
  /**
   * Told the rows a committed write changed in a table. The embedded store has no autovacuum: it
   * re-analyzes a table once writes settle, so planned counts and plans follow a bulk load.
   */
  wrote?(table: string, rows: number): void;
  close(): Promise<void>;
  /**
   * Settles with the reason when the store can answer nothing any more (PGlite aborted after a
   * fault it could not recover from): a holder then stops, so the next command opens it afresh.
   */
  readonly died?: Promise<Error>;
}

/**
 * What went wrong with the connection itself, when it did (PostgREST's three answers, reference
 * §9.2): `unreachable` — no connection could be made (PGRST000); `lost` — the connection a
 * statement was running on went away (terminated, the server restarted: PGRST001); `pool-timeout`
 * — every pooled connection stayed busy (PGRST003).
 */
export type ConnectionFault = 'unreachable' | 'lost' | 'pool-timeout';

/** A database error, normalised across pg and PGlite: SQLSTATE plus PostgreSQL's texts. */
export class StoreError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly detail: string | null = null,
    readonly hint: string | null = null,
    readonly connection: ConnectionFault | null = null,
  ) {
    super(message);
    this.name = 'StoreError';
  }
}

interface DbErrorLike {
  code?: unknown;
  message?: unknown;
  detail?: unknown;
  hint?: unknown;
}

const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH']);
/** The connection ended under a statement: pg's own texts for a socket that closed. */
const LOST_TEXT = /Connection terminated|connection.*(closed|ended)|Client has encountered a connection error/i;
/**
 * SQLSTATEs PostgreSQL ends a session with (FATAL): `pg_terminate_backend` (57P01), a crash or
 * immediate shutdown (57P02), a server not accepting connections yet (57P03).
 */
const SESSION_ENDED = /^57P0[123]$/;

/** True for errors a driver raised (SQLSTATE or connection failures), as opposed to errors of our own code. */
export function isDatabaseError(err: unknown): boolean {
  if (err instanceof StoreError) return true;
  const e = (err ?? {}) as DbErrorLike;
  const code = typeof e.code === 'string' ? e.code : '';
  if (/^[0-9A-Z]{5}$/.test(code) || CONNECTION_CODES.has(code)) return true;
  const name = (err as { name?: unknown })?.name;
  return name === 'DatabaseError' || LOST_TEXT.test(String(e.message ?? ''));
}

/**
 * Turns whatever a driver threw into a StoreError. `phase` says where it happened: while getting a
 * connection (every failure is then `unreachable`, or `pool-timeout`), or while using one (a socket
 * that closed, or a session PostgreSQL ended, is `lost`). Connection failures carry SQLSTATE 08006.
 */
export function toStoreError(err: unknown, phase: 'connect' | 'use' = 'use'): StoreError {
  if (err instanceof StoreError) return err;
  const e = (err ?? {}) as DbErrorLike;
  const code = typeof e.code === 'string' ? e.code : '';
  const message = typeof e.message === 'string' ? e.message : String(err);
  // pg's pool gave up waiting for a free connection: the database is there but every connection is busy.
  if (/timeout exceeded when trying to connect/i.test(message)) {
    return new StoreError('53300', 'Timed out acquiring a connection from the pool: every connection is busy.', null, 'Retry the request; a server under this load may need a larger pool.', 'pool-timeout');
  }
  const sqlState = /^[0-9A-Z]{5}$/.test(code);
  const detail = typeof e.detail === 'string' ? e.detail : null;
  const hint = typeof e.hint === 'string' ? e.hint : null;
  if (phase === 'connect') return new StoreError(sqlState ? code : '08006', message, detail, hint, 'unreachable');
  if (sqlState) return new StoreError(code, message, detail, hint, SESSION_ENDED.test(code) ? 'lost' : null);
  if (CONNECTION_CODES.has(code) || LOST_TEXT.test(message)) return new StoreError('08006', message, null, null, 'lost');
  return new StoreError('XX000', message);
}
