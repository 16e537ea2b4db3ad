import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statfsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir, tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import type { PGlite as PGliteType, Transaction } from '@electric-sql/pglite';
import { quoteIdent } from '../schema/identifiers.js';
import { LATEST_VERSION, MIGRATIONS } from '../schema/migrations.js';
import { writeFileAtomicSync } from '../shared/atomic-write.js';
import { catalogCacheDir } from '../shared/xdg.js';
import { migrate } from './migrate.js';
import { bufferPool } from './pglite-engine.js';
import { packToTar, unpackPack, writePack } from './pglite-template.js';
import { isDatabaseError, type LocalSettings, type Queryable, type QueryResult, type Store, settingFirst, StoreError, toStoreError } from './store.js';

export { baselineWasmOnly, useSmallBufferPool } from './pglite-engine.js';

// Keep dates and timestamps exactly as PostgreSQL prints them (no JS Date round trip).
const TEXT_TYPES = [1082, 1083, 1114, 1184, 1266];
const parsers = Object.fromEntries(TEXT_TYPES.map((oid) => [oid, (v: string) => v]));
// PGlite checks boolean parameters in JavaScript and throws a plain Error ("Invalid input for boolean
// type", a 500) for text PostgreSQL itself would refuse with 22P02 (a 400): hand text through and let
// the database judge it, as the pg driver does.
const BOOL = 16;
const serializers = { [BOOL]: (v: unknown) => (typeof v === 'boolean' ? (v ? 't' : 'f') : String(v)) };

async function loadPGlite(): Promise<typeof PGliteType> {
  return (await import('@electric-sql/pglite')).PGlite;
}

let engine: Promise<{ pgliteWasmModule?: WebAssembly.Module }> | null = null;
/** Settles once the compilation has been handed to V8 (or the module could not be read). */
let engineStarted: Promise<void> = Promise.resolve();

/**
 * Starts reading and compiling PGlite's PostgreSQL (a 9 MB WebAssembly module) on V8's background
 * threads, so that the compilation overlaps whatever the caller does next (loading modules,
 * unpacking a new data directory) instead of starting when PGlite is constructed. Once per process;
 * openPGlite calls it too. Falls back to PGlite's own loading when the module cannot be found.
 * `compiled`: the module another thread compiled (the store's thread is handed its opener's).
 */
export function prepareEngine(compiled?: WebAssembly.Module): Promise<{ pgliteWasmModule?: WebAssembly.Module }> {
  if (!engine && compiled) engine = Promise.resolve({ pgliteWasmModule: compiled });
  if (!engine) {
    const wasm = readFile(new URL('pglite.wasm', import.meta.resolve('@electric-sql/pglite'))).catch(() => null);
    // This callback is registered first, so the compile has started when engineStarted settles.
    engine = wasm.then(async (bytes) => (bytes ? { pgliteWasmModule: await WebAssembly.compile(bytes) } : {})).catch(() => ({}));
    engineStarted = wasm.then(() => undefined);
  }
  return engine;
}

function wrap(db: Pick<PGliteType | Transaction, 'query'>): Queryable {
  return {
    async query<R>(sql: string, params?: unknown[]): Promise<QueryResult<R>> {
      try {
        const res = await db.query<R>(sql, params as unknown[] | undefined);
        return { rows: res.rows, rowCount: res.affectedRows ?? res.rows.length };
      } catch (err) {
        throw toStoreError(err);
      }
    },
    // PGlite has no COPY TO STDOUT either: `/dev/blob` gives the whole output as one blob, handed on in pieces.
    async copyCsvOut(select: string, write: (chunk: Uint8Array) => Promise<void>): Promise<number> {
      let res: Awaited<ReturnType<typeof db.query>>;
      try {
        res = await db.query(`COPY (${select}) TO '/dev/blob' WITH (FORMAT csv, HEADER true)`);
      } catch (err) {
        throw toStoreError(err);
      }
      if (res.blob) for await (const chunk of res.blob.stream() as unknown as AsyncIterable<Uint8Array>) await write(chunk);
      return res.affectedRows ?? 0;
    },
    // PGlite has no COPY FROM STDIN; its `/dev/blob` device reads the blob passed with the query.
    async copyCsv(target: string, columns: string[], csv: string | Uint8Array): Promise<number> {
      try {
        const res = await db.query(`COPY ${target} (${columns.join(', ')}) FROM '/dev/blob' WITH (FORMAT csv, HEADER true)`, [], { blob: new Blob([csv as BlobPart]) });
        return res.affectedRows ?? 0;
      } catch (err) {
        throw toStoreError(err);
      }
    },
  };
}

/**
 * Free space a write to a catalog on disk leaves untouched. PGlite does not survive a full disk as
 * PostgreSQL does: when a new 16 MB WAL segment cannot be written it spins inside WebAssembly
 * forever (its event loop, SIGTERM handling included, never comes back), holding the lock. So a
 * write is refused before it starts while the disk holding the catalog has less than this: room
 * for two WAL segments, the largest body (8 MiB) written twice over, and the next open's recovery.
 */
export const MIN_FREE_BYTES = 64 * 1024 * 1024;

/** SQLSTATE 53100 (disk_full) before a write, when the disk holding `dataDir` is nearly full. */
export function checkFreeSpace(dataDir: string, minFree = MIN_FREE_BYTES, doing = 'write'): void {
  let free: number;
  try {
    const fs = statfsSync(dataDir);
    free = fs.bavail * fs.bsize;
  } catch {
    return; // no statfs here: PGlite's own errors are all there is
  }
  if (free >= minFree) return;
  const mb = (n: number) => `${Math.floor(n / (1024 * 1024))} MB`;
  throw new StoreError(
    '53100',
    `could not ${doing}: the disk holding the catalog has ${mb(free)} free, less than the ${mb(minFree)} the embedded catalog keeps free`,
    doing === 'write' ? 'Nothing was written; the catalog is intact and still answers reads.' : null,
    'Free some space on that disk (or move the catalog, CATALOG_DATA), then run the command again.',
  );
}

/**
 * Errors after which a PGlite session may be left unusable: disk full or an I/O error in the
 * middle of a COPY leaves its portal behind, and every later statement then fails with 24000
 * "cannot drop active portal" until the catalog is opened again.
 */
const SESSION_FAULTS = /^(53100|58\d{3}|24000|XX\d{3})$/;

/** The embedded store: PostgreSQL in WebAssembly over a data directory (or in memory). */
export class PGliteStore implements Store {
  readonly kind = 'pglite' as const;
  readonly schema = 'public';
  private q: Queryable;
  private die: (reason: Error) => void = () => {};
  readonly died = new Promise<Error>((resolve) => (this.die = resolve));

  /**
   * `dataDir`: the catalog's directory on disk, whose free space is checked before every
   * transaction; `reopen` opens it again when a fault left the session unusable.
   */
  constructor(
    private db: PGliteType,
    private readonly dataDir?: string,
    private readonly reopen?: () => Promise<PGliteType>,
  ) {
    this.q = wrap(db);
  }

  async query<R = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<QueryResult<R>> {
    try {
      return await this.q.query<R>(sql, params);
    } catch (err) {
      await this.recover(err);
      throw err;
    }
  }

  /**
   * After a fault that can break the session, checks it with `select 1`, and when that fails too
   * closes PGlite and opens the catalog again (committed rows are on disk; the failed statement
   * was not committed). The request that met the fault still fails; the next ones work.
   */
  private async recover(err: unknown): Promise<void> {
    const code = (err as { code?: unknown }).code;
    // WebAssembly aborted (a RuntimeError, or a StoreError made of one): this instance answers nothing any more
    if ((err as Error)?.name === 'RuntimeError' || /^Aborted\(/.test(String((err as Error)?.message))) return this.die(err as Error);
    if (!this.reopen || typeof code !== 'string' || !SESSION_FAULTS.test(code)) return;
    try {
      await this.db.query('select 1');
      return;
    } catch {
      // broken: open it again
    }
    try {
      await this.db.close().catch(() => {});
      this.db = await this.reopen();
      this.q = wrap(this.db);
    } catch (reopenErr) {
      this.die(reopenErr instanceof Error ? reopenErr : new Error(String(reopenErr)));
    }
  }

  copyCsvOut(select: string, write: (chunk: Uint8Array) => Promise<void>): Promise<number> {
    return this.q.copyCsvOut!(select, write);
  }

  async transaction<T>(fn: (tx: Queryable) => Promise<T>, _signal?: AbortSignal, local?: LocalSettings): Promise<T> {
    // every write runs in a transaction (a plain read does not: see server/execute.ts)
    if (this.dataDir) checkFreeSpace(this.dataDir);
    const body = settingFirst(fn, local);
    try {
      return await this.db.transaction((tx) => body(wrap(tx)));
    } catch (err) {
      // Database errors become StoreErrors; anything the callback threw on purpose passes through.
      const fault = isDatabaseError(err) ? toStoreError(err) : err;
      await this.recover(fault);
      throw fault;
    }
  }

  /** Rows written per table since its last ANALYZE, and the timer that runs it once writes pause. */
  private written = new Map<string, number>();
  private analyzeTimer: NodeJS.Timeout | null = null;

  wrote(table: string, rows: number): void {
    if (rows <= 0) return;
    this.written.set(table, (this.written.get(table) ?? 0) + rows);
    if (this.analyzeTimer) clearTimeout(this.analyzeTimer);
    // an import writes a batch every moment: analyze once it has paused
    this.analyzeTimer = setTimeout(() => void this.analyzeWritten(), ANALYZE_AFTER_MS);
    this.analyzeTimer.unref();
  }

  /**
   * What autovacuum would do after writes, now that they paused: each written table's GIN pending
   * lists merged into their indexes (migration 14: the link indexes take bulk loads through one;
   * lookups then read none), and an ANALYZE of each table whose written rows passed PostgreSQL's
   * autovacuum threshold (50 rows plus 10% of the table): without it a bulk-loaded table keeps the
   * planner's guess (`list`'s "of about N" was 28% low on a fresh million). Runs what is pending
   * now (the timer calls it).
   */
  async analyzeWritten(): Promise<void> {
    if (this.analyzeTimer) clearTimeout(this.analyzeTimer);
    this.analyzeTimer = null;
    const pending = [...this.written];
    this.written.clear();
    // every GIN index of the catalog: a write to one table (an artist renamed) can update another's rows
    if (pending.length > 0) await this.q.query(PENDING_LISTS_MERGED, [this.schema]).catch(() => {});
    for (const [table, rows] of pending) {
      try {
        const r = await this.q.query<{ n: number }>('select greatest(reltuples, 0)::float8 as n from pg_class where oid = to_regclass($1)', [`${this.schema}.${table}`]);
        if (rows < 50 + 0.1 * Number(r.rows[0]?.n ?? 0)) {
          this.written.set(table, (this.written.get(table) ?? 0) + rows);
          continue;
        }
        await this.q.query(`analyze ${quoteIdent(this.schema)}.${quoteIdent(table)}`);
      } catch {
        // closed meanwhile, or busy with a fault: the counts go stale until the next write settles
      }
    }
  }

  async close(): Promise<void> {
    if (this.analyzeTimer) clearTimeout(this.analyzeTimer);
    // an instance that aborted cannot close cleanly; its files are as its last commit left them
    if (!this.db.closed) await this.db.close().catch(() => {});
  }
}

/** Merges the pending lists of the GIN indexes in schema $1 into the indexes. */
const PENDING_LISTS_MERGED = `select gin_clean_pending_list(c.oid::regclass) from pg_class c join pg_am a on a.oid = c.relam where c.relnamespace = to_regnamespace($1) and a.amname = 'gin'`;

/** Quiet time after the last write before the embedded store re-analyzes what was written. */
const ANALYZE_AFTER_MS = 2000;

/**
 * Where the migrated template is cached (a pack, and for catalogs in memory a tarball) when none is
 * shipped: the CLI's cache directory, by the same rule (a relative XDG_CACHE_HOME is ignored). The
 * one read of the environment in the store, as a default: `catalog serve` and the holder start the
 * store without passing the CLI's paths down (yet).
 */
function cacheDir(env: Record<string, string | undefined> = process.env): string {
  return catalogCacheDir(env, homedir);
}

/**
 * A short hash of the migrations' SQL in template names: a template made by other code with the
 * same newest version (a branch, an unreleased migration changed since) is never taken for ours.
 */
function migrationsTag(): string {
  return createHash('sha256').update(MIGRATIONS.map((m) => `${m.version}\u0000${m.sql}`).join('\u0000')).digest('hex').slice(0, 10);
}

/** Where a migrated template tarball (for catalogs in memory) is cached: see migratedTemplate. */
export function templateCachePath(env?: Record<string, string | undefined>): string {
  return join(cacheDir(env), `template-pglite${readPGliteVersion()}-v${LATEST_VERSION}-${migrationsTag()}.tar`);
}

/** The template pack `npm run build` and `npm pack` build into dist/ and the package ships (scripts/build-template.mjs). */
export function shippedPackPath(): string {
  const file = `pglite-template-${readPGliteVersion()}-v${LATEST_VERSION}-${migrationsTag()}.pack`;
  return new URL(`../${file}`, import.meta.url).pathname;
}

/** PGlite's version, from the package node resolves (hoisted beside this package when installed elsewhere). */
function readPGliteVersion(): string {
  try {
    // require.resolve: with import.meta.resolve, vitest's global setup read 'x' and named another
    // template cache file than the tests did.
    const entry = createRequire(import.meta.url).resolve('@electric-sql/pglite');
    return JSON.parse(readFileSync(join(dirname(entry), '..', 'package.json'), 'utf8')).version as string;
  } catch {
    return 'x';
  }
}

/**
 * The migrated template a new catalog is unpacked from (see pglite-template.ts): the one shipped
 * in dist/, else one cached, else made now (initdb in WebAssembly costs seconds) and cached.
 */
export async function templatePack(): Promise<string> {
  const shipped = shippedPackPath();
  if (existsSync(shipped)) return shipped;
  const cached = join(cacheDir(), basename(shipped));
  if (existsSync(cached)) return cached;
  try {
    await buildTemplatePack(cached);
    return cached;
  } catch (err) {
    if (!['EACCES', 'EPERM', 'EROFS', 'ENOTDIR'].includes((err as NodeJS.ErrnoException).code ?? '')) throw err;
    // An unwritable cache: make it in a temporary directory (again next time).
    const tmp = join(mkdtempSync(join(tmpdir(), 'catalog-template-')), basename(shipped));
    await buildTemplatePack(tmp);
    return tmp;
  }
}

/**
 * Makes the template pack at `target`: initdb and the migrations in a temporary data directory,
 * then a clean shutdown, so a catalog made from it starts without crash recovery (replaying the
 * migrations' WAL cost ~0.1 s of every new catalog's first open when the template was dumped from
 * a running database).
 */
export async function buildTemplatePack(target: string): Promise<void> {
  mkdirSync(dirname(target), { recursive: true });
  const work = mkdtempSync(join(dirname(target), '.catalog-template-'));
  try {
    const PGlite = await loadPGlite();
    // wal_recycle off: the WAL segment initdb and the migrations filled is removed at the checkpoint
    // below instead of kept under a future segment's name, so the template's WAL is one new, nearly
    // all-zero segment (8 MB less for every new catalog to write).
    const db = new PGlite(join(work, 'data'), { parsers, serializers, startParams: [...PGlite.defaultStartParams, '-c', 'wal_recycle=off'] });
    await migrate(new PGliteStore(db));
    for (const name of ['template0', 'template1']) {
      await db.query(`alter database ${name} is_template false`);
      await db.query(`drop database ${name}`);
    }
    await db.query('select pg_switch_wal()');
    await db.query('checkpoint');
    await db.close();
    writePack(join(work, 'data'), target);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * A migrated, empty data directory as an (uncompressed) tarball, for catalogs in memory
 * (PGlite's loadDataDir). Read from `cacheFile` when it exists, else made from the template pack
 * and written there.
 */
export async function migratedTemplate(cacheFile: string | null = null): Promise<Blob> {
  if (cacheFile && existsSync(cacheFile)) return new Blob([readFileSync(cacheFile)]);
  const tar = packToTar(await templatePack());
  if (cacheFile) {
    try {
      mkdirSync(dirname(cacheFile), { recursive: true });
      writeFileAtomicSync(cacheFile, tar);
    } catch {
      // A read-only cache only costs speed next time.
    }
  }
  return new Blob([tar]);
}

/**
 * True when every migration is already recorded: one query instead of a locked transaction per
 * migration. False for a database without the bookkeeping table (a new in-memory one).
 */
async function isMigrated(store: PGliteStore): Promise<boolean> {
  try {
    const { rows } = await store.query<{ versions: number[] | null }>('select array_agg(version order by version) as versions from catalog_migrations');
    const have = rows[0]?.versions ?? [];
    return have.length === MIGRATIONS.length && MIGRATIONS.every((m, i) => have[i] === m.version);
  } catch {
    return false;
  }
}

export interface OpenPGliteOptions {
  /** Data directory; omitted = in memory. */
  dataDir?: string;
  /** A migrated data directory tarball to start a catalog in memory from. */
  template?: Blob;
  /** The template pack a new catalog in `dataDir` is unpacked from (default: templatePack()). */
  templatePack?: string;
}

/** Opens (creating and migrating when new) an embedded catalog. */
export async function openPGlite(opts: OpenPGliteOptions = {}): Promise<PGliteStore> {
  const enginePromise = prepareEngine();
  const PGlitePromise = loadPGlite();
  const { dataDir } = opts;
  if (dataDir && !existsSync(join(dataDir, 'PG_VERSION'))) {
    mkdirSync(dataDir, { recursive: true });
    const pack = opts.templatePack ?? (await templatePack());
    // Unpacking blocks this thread: let V8 start compiling first (the read is usually done by now),
    // so the compile runs on its threads meanwhile instead of after.
    await engineStarted;
    unpackPack(pack, dataDir);
  }
  const [PGlite, compiled] = await Promise.all([PGlitePromise, enginePromise]);
  const pool = bufferPool();
  const startParams = pool ? { startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${pool}`] } : {};
  const onDisk = (dir: string) => new PGlite(dir, { parsers, serializers, ...compiled, ...startParams });
  const db = dataDir ? onDisk(dataDir) : new PGlite({ parsers, serializers, ...compiled, ...startParams, ...(opts.template ? { loadDataDir: opts.template } : {}) });
  try {
    await db.waitReady;
  } catch (err) {
    // PGlite says only "failed to initialize properly"; reopening after a crash needs room for WAL
    if (dataDir) checkFreeSpace(dataDir, MIN_FREE_BYTES, 'open the catalog');
    throw err;
  }
  const reopen = dataDir
    ? async () => {
        const again = onDisk(dataDir);
        await again.waitReady;
        return again;
      }
    : undefined;
  const store = new PGliteStore(db, dataDir, reopen);
  if (!(await isMigrated(store))) await migrate(store);
  return store;
}
