import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import type { PGlite as PGliteType, Transaction } from '@electric-sql/pglite';
import { LATEST_VERSION } from '../schema/migrations.js';
import { migrate } from './migrate.js';
import { isDatabaseError, type Queryable, type QueryResult, type Store, toStoreError } from './store.js';

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
  };
}

/** The embedded store: PostgreSQL in WebAssembly over a data directory (or in memory). */
export class PGliteStore implements Store {
  readonly kind = 'pglite' as const;
  readonly schema = 'public';
  private readonly q: Queryable;

  constructor(readonly db: PGliteType) {
    this.q = wrap(db);
  }

  query<R = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<QueryResult<R>> {
    return this.q.query<R>(sql, params);
  }

  async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    try {
      return await this.db.transaction((tx) => fn(wrap(tx)));
    } catch (err) {
      // Database errors become StoreErrors; anything the callback threw on purpose passes through.
      throw isDatabaseError(err) ? toStoreError(err) : err;
    }
  }

  async copyFrom(tx: Queryable, table: string, columns: string[], csv: string): Promise<number> {
    const inner = (tx as unknown as { raw?: Transaction }).raw;
    const target = inner ?? this.db;
    const res = await target.query(
      `copy ${table} (${columns.map((c) => `"${c}"`).join(', ')}) from '/dev/blob' with (format csv)`,
      [],
      { blob: new Blob([csv]) },
    );
    return res.affectedRows ?? 0;
  }

  async close(): Promise<void> {
    if (!this.db.closed) await this.db.close();
  }
}

/** Where a migrated template data directory is cached, so a new catalog skips initdb. */
export function templateCachePath(): string {
  const base = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
  const pgliteVersion = readPGliteVersion();
  return join(base, 'catalog', `template-pglite${pgliteVersion}-v${LATEST_VERSION}.tar.gz`);
}

/** The template `npm install` builds into dist/ (see scripts/build-template.mjs). */
export function shippedTemplatePath(): string {
  const file = `pglite-template-${readPGliteVersion()}-v${LATEST_VERSION}.tar.gz`;
  return new URL(`../${file}`, import.meta.url).pathname;
}

function readPGliteVersion(): string {
  try {
    const pkgUrl = new URL('../../node_modules/@electric-sql/pglite/package.json', import.meta.url);
    return JSON.parse(readFileSync(pkgUrl, 'utf8')).version as string;
  } catch {
    return 'x';
  }
}

/**
 * A migrated, empty data directory as a tarball: read from the cache, or made once (initdb in
 * WebAssembly costs seconds) and cached for every later new catalog.
 */
export async function migratedTemplate(cacheFile: string | null = templateCachePath()): Promise<Blob> {
  const shipped = shippedTemplatePath();
  if (existsSync(shipped)) return new Blob([readFileSync(shipped)]);
  if (cacheFile && existsSync(cacheFile)) return new Blob([readFileSync(cacheFile)]);
  const PGlite = await loadPGlite();
  const db = new PGlite({ parsers, serializers });
  const store = new PGliteStore(db);
  await migrate(store);
  const dump = await db.dumpDataDir('gzip');
  await db.close();
  const bytes = new Uint8Array(await dump.arrayBuffer());
  if (cacheFile) {
    try {
      mkdirSync(dirname(cacheFile), { recursive: true });
      const tmp = `${cacheFile}.${process.pid}.tmp`;
      writeFileSync(tmp, bytes);
      renameSync(tmp, cacheFile);
    } catch {
      // A read-only cache only costs speed next time.
    }
  }
  return new Blob([bytes]);
}

export interface OpenPGliteOptions {
  /** Data directory; omitted = in memory. */
  dataDir?: string;
  /** A migrated data directory tarball to start a new catalog from. */
  template?: Blob;
}

/** Opens (creating and migrating when new) an embedded catalog. */
export async function openPGlite(opts: OpenPGliteOptions = {}): Promise<PGliteStore> {
  const PGlite = await loadPGlite();
  const { dataDir } = opts;
  const isNew = !dataDir || !existsSync(join(dataDir, 'PG_VERSION'));
  if (dataDir && isNew) {
    mkdirSync(dataDir, { recursive: true });
    if (readdirSync(dataDir).length > 0) {
      throw toStoreError({ code: '58P01', message: `data directory ${dataDir} is not empty and holds no catalog` });
    }
  }
  const template = isNew ? (opts.template ?? (dataDir ? await migratedTemplate() : undefined)) : undefined;
  const db = dataDir
    ? new PGlite(dataDir, { parsers, serializers, ...(template ? { loadDataDir: template } : {}) })
    : new PGlite({ parsers, serializers, ...(template ? { loadDataDir: template } : {}) });
  await db.waitReady;
  const store = new PGliteStore(db);
  await migrate(store);
  return store;
}
