import type { Pool, PoolClient, QueryConfig, QueryResult as PgResult } from 'pg';
import { migrate } from './migrate.js';
import { isDatabaseError, type LocalSettings, type Queryable, type QueryResult, type Store, settingFirst, StoreError, toStoreError } from './store.js';

/** SQLSTATEs after which a whole transaction may simply run again: deadlock detected, serialization failure. */
const RETRYABLE = new Set(['40P01', '40001']);

/**
 * `client.query` with a callback, as pool.query calls it. The promise form of a client's query keeps
 * its results reachable for longer: 10 loops of 50-row pages through `pool.connect()` +
 * `await client.query()` promoted ≈3 MB to the old generation a scavenge (a full mark-compact every
 * few hundred queries), the callback form ≈8 KB.
 */
function send(client: PoolClient, config: QueryConfig): Promise<PgResult> {
  return new Promise((resolve, reject) => {
    client.query(config, (err: Error, res: PgResult) => (err ? reject(err) : resolve(res)));
  });
}

/**
 * A connection from the pool; a failure to get one is `unreachable` (or `pool-timeout`), so the
 * answer tells it apart from a connection lost under a statement.
 */
async function checkout(pool: Pool): Promise<PoolClient> {
  try {
    return await pool.connect();
  } catch (err) {
    throw toStoreError(err, 'connect');
  }
}

type PgModule = (typeof import('pg'))['default'];
let pgModule: PgModule | null = null;

/**
 * Stops the statement `client` runs when `signal` aborts (the request's client went away): a
 * CancelRequest on a connection of its own, as psql's Ctrl-C sends, so no pooled connection is
 * needed. `fired()` says whether it did: that session is then dropped, never handed to another
 * request (a cancel arriving late would stop that request's statement instead).
 */
function cancelOnAbort(client: PoolClient, signal: AbortSignal | undefined): { fired: () => boolean; dispose: () => void } {
  if (!signal || !pgModule) return { fired: () => false, dispose: () => {} };
  let fired = false;
  const c = client as PoolClient & { processID?: number; secretKey?: number; connectionParameters?: { ssl?: unknown } };
  const cancel = () => {
    fired = true;
    if (c.processID === undefined || c.secretKey === undefined) return;
    const con = new pgModule!.Connection({ ssl: c.connectionParameters?.ssl } as never) as unknown as {
      on(e: string, f: (...a: unknown[]) => void): void;
      connect(port: number | string, host?: string): void;
      cancel(pid: number, key: number): void;
      stream: { destroy(): void };
    };
    con.on('error', () => {});
    // the server closes a cancel connection; closing it first crashed PgBouncer 1.18 ("bad client state")
    con.on('connect', () => {
      con.cancel(c.processID!, c.secretKey!);
      setTimeout(() => con.stream.destroy(), 5_000).unref();
    });
    if (client.host?.startsWith('/')) con.connect(`${client.host}/.s.PGSQL.${client.port}`);
    else con.connect(client.port, client.host);
  };
  // A cancel that reaches the session between two statements is dropped by PostgreSQL, and one
  // sent as a statement starts can arrive first: it is sent again while the statement still runs.
  let again: NodeJS.Timeout | undefined;
  const start = () => {
    cancel();
    again = setInterval(cancel, 500);
  };
  if (signal.aborted) start();
  else signal.addEventListener('abort', start, { once: true });
  return {
    fired: () => fired,
    dispose: () => {
      clearInterval(again);
      signal.removeEventListener('abort', start);
    },
  };
}

/** True when a failure left the connection unusable: it is then dropped, not returned to the pool. */
const unusable = (err: unknown): boolean => !isDatabaseError(err) || (toStoreError(err).connection ?? null) !== null;

type CopyFrom = (sql: string) => NodeJS.WritableStream & { rowCount?: number };
let copyFrom: Promise<CopyFrom> | null = null;

/** `COPY … FROM STDIN` of one text on a checked-out connection (pg-copy-streams, loaded on first use). */
async function copyText(client: PoolClient, sql: string, text: string | Uint8Array): Promise<number> {
  copyFrom ??= import('pg-copy-streams').then((m) => m.from as unknown as CopyFrom);
  const stream = client.query((await copyFrom)(sql) as never) as unknown as NodeJS.WritableStream & { rowCount?: number };
  await new Promise<void>((resolve, reject) => {
    stream.on('error', reject);
    stream.on('finish', () => resolve());
    stream.end(text);
  });
  return stream.rowCount ?? 0;
}

type CopyTo = (sql: string) => NodeJS.ReadableStream & { rowCount?: number };
let copyTo: Promise<CopyTo> | null = null;

/**
 * `COPY (select) TO STDOUT` on a connection of its own, each piece handed to `write` before the
 * next is read (pg-copy-streams pauses the socket meanwhile, so memory stays flat).
 */
async function copyOut(pool: Pool, select: string, write: (chunk: Uint8Array) => Promise<void>, prelude: string | null): Promise<number> {
  copyTo ??= import('pg-copy-streams').then((m) => m.to as unknown as CopyTo);
  const to = await copyTo;
  const client = await checkout(pool);
  // behind a transaction pooler the session's settings hold only inside a transaction
  if (prelude) await send(client, { text: `begin; ${prelude}` }).catch((err: unknown) => (client.release(true), Promise.reject(toStoreError(err))));
  // a COPY the database failed ends cleanly (the connection goes on to the next query); one stopped
  // because `write` failed (the client went away) is still sending: that connection is dropped
  let stopped = false;
  let failed = false;
  try {
    const stream = client.query(to(`COPY (${select}) TO STDOUT WITH (FORMAT csv, HEADER true)`) as never) as unknown as NodeJS.ReadableStream & { rowCount?: number };
    for await (const chunk of stream) {
      try {
        await write(chunk as Uint8Array);
      } catch (err) {
        stopped = true;
        throw err;
      }
    }
    if (prelude) await send(client, { text: 'commit' });
    return stream.rowCount ?? 0;
  } catch (err) {
    failed = true;
    if (!isDatabaseError(err)) stopped = true;
    throw stopped ? err : toStoreError(err);
  } finally {
    // behind a pooler, a failed transaction's session is dropped rather than rolled back
    client.release(stopped || (prelude !== null && failed));
  }
}

/** One statement on whichever pooled connection is free (what `pool.query` does, with the failure's phase kept). */
async function pooled(pool: Pool, config: QueryConfig, signal?: AbortSignal): Promise<PgResult> {
  signal?.throwIfAborted();
  const client = await checkout(pool);
  const cancel = cancelOnAbort(client, signal);
  let failed: unknown = null;
  try {
    return await send(client, config);
  } catch (err) {
    failed = err;
    throw err;
  } finally {
    cancel.dispose();
    client.release(cancel.fired() || (failed !== null && unusable(failed)));
  }
}

/**
 * Statements on the pool (each on whichever connection is free) or on one checked-out connection,
 * where a transaction's `signal` refuses every statement after its client went away.
 */
function wrap(on: { pool: Pool } | { client: PoolClient; signal?: AbortSignal }): Queryable {
  const q: Queryable = {
    async query<R>(sql: string, params?: unknown[], signal?: AbortSignal): Promise<QueryResult<R>> {
      try {
        if ('client' in on) on.signal?.throwIfAborted();
        const res = await ('pool' in on ? pooled(on.pool, { text: sql, values: params }, signal) : send(on.client, { text: sql, values: params }));
        return { rows: res.rows as R[], rowCount: res.rowCount ?? res.rows.length };
      } catch (err) {
        throw toStoreError(err);
      }
    },
  };
  if ('client' in on) {
    q.copyCsv = async (target, columns, csv) => {
      try {
        on.signal?.throwIfAborted();
        return await copyText(on.client, `COPY ${target} (${columns.join(', ')}) FROM STDIN WITH (FORMAT csv, HEADER true)`, csv);
      } catch (err) {
        throw toStoreError(err);
      }
    };
  }
  return q;
}

/** A setting's name, and a value, that stand as SQL literals between single quotes as they are (no quote, no backslash). */
const SAFE_SETTING = /^[a-z_][a-z0-9_.]*$/;
const SAFE_VALUE = /^[A-Za-z0-9 _.:+-]*$/;

/** A PostgreSQL server reached by URL through a `pg` pool. */
export class PostgresStore implements Store {
  readonly kind = 'postgres' as const;
  private readonly q: Queryable;

  constructor(
    readonly pool: Pool,
    readonly schema: string,
    /**
     * Behind a transaction pooler (PgBouncer's `pool_mode = transaction`), which refuses or drops
     * the startup `options` that carry a session's settings: the `set_config(…, true)` statement
     * that applies them inside each transaction. Every statement then runs in a transaction that
     * begins with it (in the same round trip as BEGIN). Null on a direct connection.
     */
    readonly prelude: string | null = null,
  ) {
    this.q = wrap({ pool });
  }

  query<R = Record<string, unknown>>(sql: string, params?: unknown[], signal?: AbortSignal): Promise<QueryResult<R>> {
    if (this.prelude) return this.transaction((tx) => tx.query<R>(sql, params), signal);
    return this.q.query<R>(sql, params, signal);
  }

  copyCsvOut(select: string, write: (chunk: Uint8Array) => Promise<void>): Promise<number> {
    return copyOut(this.pool, select, write, this.prelude);
  }

  /**
   * Runs `fn` in a transaction. A deadlock (40P01) or serialization failure (40001) rolls the whole
   * transaction back, so it is run again (up to 4 more times, with a short jittered pause): two
   * requests locking overlapping rows in different orders both succeed instead of one answering 500.
   */
  async transaction<T>(fn: (tx: Queryable) => Promise<T>, signal?: AbortSignal, local?: LocalSettings): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.once(fn, signal, local);
      } catch (err) {
        if (!(err instanceof StoreError) || !RETRYABLE.has(err.code) || attempt >= 4) throw err;
        await new Promise((r) => setTimeout(r, Math.round((attempt + 1) * 20 * Math.random())));
      }
    }
  }

  private async once<T>(fn: (tx: Queryable) => Promise<T>, signal?: AbortSignal, local?: LocalSettings): Promise<T> {
    signal?.throwIfAborted();
    const client = await checkout(this.pool);
    const cancel = cancelOnAbort(client, signal);
    let broken = false;
    // settings written as literals go with BEGIN; any other is set by a statement of its own
    const inline = (local ?? []).filter(([name, value]) => SAFE_SETTING.test(name) && SAFE_VALUE.test(value));
    const begin = ['begin', ...(this.prelude ? [this.prelude] : []), ...(inline.length ? [setConfigs(inline)] : [])];
    try {
      await send(client, { text: begin.join('; ') });
      const out = await settingFirst(fn, local?.filter((s) => !inline.includes(s)))(wrap({ client, signal }));
      // nobody waits for the answer any more: do not commit what a statement between two cancels finished
      signal?.throwIfAborted();
      await send(client, { text: 'commit' });
      return out;
    } catch (err) {
      try {
        await send(client, { text: 'rollback' });
      } catch {
        broken = true;
      }
      throw isDatabaseError(err) ? toStoreError(err) : err;
    } finally {
      cancel.dispose();
      client.release(broken || cancel.fired());
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

/**
 * The statement timeout `catalog serve` sets on PostgreSQL unless told (`--statement-timeout`, 0
 * for none). PostgREST leaves it to the database role; a catalog request (a page, a 4 MiB batch)
 * takes well under a second, so one still running after 30 s is waiting on something (a lock held
 * elsewhere): it is better answered 57014 with a hint, its connection freed, than left to hang
 * until the client's own 60 s timeout. An import halves its batches on 57014.
 */
export const DEFAULT_STATEMENT_TIMEOUT_MS = 30_000;

export interface OpenPostgresOptions {
  url: string;
  /** Schema for the catalog tables (created when missing). Default `public`. */
  schema?: string;
  /** Most connections the pool opens (`--db-pool`; default 10). */
  max?: number;
  /** Longest a statement waits for a pooled connection, in ms (`--db-pool-acquisition-timeout`; default 10 s): then pool-timeout (504 PGRST003). */
  acquireTimeoutMs?: number;
  /** Statement timeout in milliseconds (0 = none). */
  statementTimeoutMs?: number;
  migrate?: boolean;
  /** Told when a connection is lost (terminated, the server restarted): the pool then makes a new one. */
  log?: (line: string) => void;
}

/**
 * How a session gets its settings (search_path, TimeZone, statement_timeout). Directly connected,
 * as the startup `options` (no statement per request). A transaction pooler refuses that parameter
 * (PgBouncer: "unsupported startup parameter: options") or, told to ignore it, drops it: the first
 * connection shows which, and then every transaction sets them itself (`set_config(…, true)`).
 */
async function sessionSettings(makePool: (options: string | undefined) => Pool, settings: Array<[string, string]>): Promise<{ pool: Pool; prelude: string | null }> {
  const direct = makePool(settings.map(([k, v]) => `-c ${k}=${v}`).join(' '));
  try {
    const r = await direct.query<{ tz: string; sp: string }>(`select current_setting('TimeZone') as tz, current_setting('search_path') as sp`);
    if (r.rows[0]?.tz === 'UTC' && r.rows[0]?.sp === settings[0][1]) return { pool: direct, prelude: null };
  } catch (err) {
    if (!/unsupported startup parameter/i.test((err as Error).message)) {
      await direct.end().catch(() => {});
      throw toStoreError(err, 'connect');
    }
  }
  await direct.end().catch(() => {});
  return { pool: makePool(undefined), prelude: setConfigs(settings) };
}

/** One statement that sets each setting for the transaction, its name and value written as literals (the caller's to vouch for). */
function setConfigs(settings: LocalSettings): string {
  return `select ${settings.map(([k, v]) => `set_config('${k}', '${v}', true)`).join(', ')}`;
}

/**
 * `create schema if not exists`, which races with itself: servers starting together take turns
 * (an advisory lock). The one that waited can still miss the schema the other just made (its
 * catalog snapshot is from before the wait: seen behind PgBouncer, where the transaction's first
 * statement sets search_path) and fail with a duplicate key: it then looks again in a new transaction.
 */
async function createSchema(store: PostgresStore, schema: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await store.transaction(async (tx) => {
        await tx.query(`select pg_advisory_xact_lock(hashtext('catalog_create_schema'))`);
        await tx.query(`create schema if not exists ${schema}`);
      });
    } catch (err) {
      if (attempt > 0 || !(err instanceof StoreError) || (err.code !== '23505' && err.code !== '42P06')) throw err;
    }
  }
}

/** The `sslmode` values libpq takes (and pg's `no-verify`). */
const SSL_MODES = ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full', 'no-verify'];

/**
 * Why a database URL's `sslmode` cannot be used, or null: pg takes any other word as "use TLS",
 * and a server without TLS then refuses every try, which looked like a database that is down.
 * @example sslModeProblem('postgres://db/x?sslmode=bogus') // 'sslmode=bogus in the database URL is not one of disable, allow, …'
 */
export function sslModeProblem(url: string): string | null {
  const mode = /[?&]sslmode=([^&#]*)/i.exec(url)?.[1];
  if (mode === undefined || SSL_MODES.includes(decodeURIComponent(mode))) return null;
  return `sslmode=${decodeURIComponent(mode)} in the database URL is not one of ${SSL_MODES.join(', ')}`;
}

/** Connects to PostgreSQL, creates the schema if needed, and migrates it. */
export async function openPostgres(opts: OpenPostgresOptions): Promise<PostgresStore> {
  const pg = (await import('pg')).default;
  pgModule = pg;
  const textTypes = [1082, 1083, 1114, 1184, 1266];
  for (const oid of textTypes) pg.types.setTypeParser(oid, (v: string) => v);
  const schema = opts.schema ?? 'public';
  const ssl = sslModeProblem(opts.url);
  if (ssl) throw toStoreError({ code: '08P01', message: ssl });
  if (!/^[a-z_][a-z0-9_]*$/.test(schema)) throw toStoreError({ code: '3F000', message: `invalid schema name ${schema}` });
  const settings: Array<[string, string]> = [['search_path', schema], ['TimeZone', 'UTC']];
  if (opts.statementTimeoutMs) settings.push(['statement_timeout', String(opts.statementTimeoutMs)]);
  const lost = (err: Error) => opts.log?.(`database connection lost: ${err.message}`);
  const makePool = (options: string | undefined) => {
    const pool = new pg.Pool({
      connectionString: opts.url,
      // who the sessions are in pg_stat_activity (PostgREST names itself too), unless the URL says
      ...(/[?&]application_name=/.test(opts.url) ? {} : { application_name: 'catalog' }),
      max: opts.max ?? 10,
      ...(options ? { options } : {}),
      connectionTimeoutMillis: opts.acquireTimeoutMs ?? 10_000,
    });
    // A connection that ends (pg_terminate_backend, a restart) must not end the process. pg's pool
    // listens for an idle client's 'error' but not while one is checked out, and an 'error' event
    // nobody listens to is thrown: every client gets a listener of its own for its whole life. The
    // statement running on it fails (503 PGRST001) and the client is dropped; the pool connects anew.
    pool.on('connect', (client) => client.on('error', lost));
    pool.on('error', () => {});
    return pool;
  };
  const { pool, prelude } = await sessionSettings(makePool, settings);
  const store = new PostgresStore(pool, schema, prelude);
  try {
    if (schema !== 'public') await createSchema(store, schema);
    if (opts.migrate !== false) await migrate(store);
  } catch (err) {
    // A server that cannot start must not leave a pool (and its timers) behind.
    await pool.end().catch(() => {});
    throw err;
  }
  return store;
}
