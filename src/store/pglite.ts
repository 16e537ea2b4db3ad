import { readFile } from 'node:fs/promises';
import { closeSync, existsSync, ftruncateSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmdirSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, normalize, sep } from 'node:path';
import { promisify } from 'node:util';
import { gunzip, gunzipSync } from 'node:zlib';
import type { PGlite as PGliteType, Transaction } from '@electric-sql/pglite';
import { LATEST_VERSION, MIGRATIONS } from '../schema/migrations.js';
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

let engine: Promise<{ pgliteWasmModule?: WebAssembly.Module }> | null = null;

/**
 * Starts reading and compiling PGlite's PostgreSQL (a 9 MB WebAssembly module) on V8's background
 * threads, so that the compilation overlaps whatever the caller does next (loading modules,
 * unpacking a new data directory) instead of starting when PGlite is constructed. Once per process;
 * openPGlite calls it too. Falls back to PGlite's own loading when the module cannot be found.
 */
export function prepareEngine(): Promise<{ pgliteWasmModule?: WebAssembly.Module }> {
  engine ??= (async () => {
    try {
      const wasm = await readFile(new URL('pglite.wasm', import.meta.resolve('@electric-sql/pglite')));
      return { pgliteWasmModule: await WebAssembly.compile(wasm) };
    } catch {
      return {};
    }
  })();
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
  return new Blob([await templateBytes(cacheFile)]);
}

/** The bytes of the migrated template (see migratedTemplate). */
async function templateBytes(cacheFile: string | null = templateCachePath()): Promise<Uint8Array<ArrayBuffer>> {
  const shipped = shippedTemplatePath();
  if (existsSync(shipped)) return readFileSync(shipped);
  if (cacheFile && existsSync(cacheFile)) return readFileSync(cacheFile);
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
  return bytes;
}

/** Where a new catalog is unpacked before its files move into the data directory. */
const STAGING = '.catalog-new';

/**
 * Writes a data directory tarball (PGlite's dumpDataDir format: ustar, optionally gzipped) into
 * `dir` with node's own file system calls — ~10x faster than PGlite's loadDataDir, which writes
 * every file through the WebAssembly file system layer. Files are unpacked into a staging
 * directory and moved in with PG_VERSION (what marks a catalog) last, so an interrupted run
 * leaves either a staging directory the next run starts over or finishes, or a whole catalog.
 */
export function unpackDataDir(tarball: Uint8Array, dir: string): void {
  const staging = join(dir, STAGING);
  if (!existsSync(join(staging, 'PG_VERSION'))) {
    rmSync(staging, { recursive: true, force: true });
    if (readdirSync(dir).length > 0) {
      throw toStoreError({ code: '58P01', message: `data directory ${dir} is not empty and holds no catalog` });
    }
    let deferred: Uint8Array | null = null;
    const made = new Set<string>();
    const mkdir = (path: string) => {
      if (made.has(path)) return;
      mkdirSync(path, { recursive: true });
      made.add(path);
    };
    for (const entry of tarEntries(isGzip(tarball) ? gunzipSync(tarball) : tarball)) {
      const path = normalize(join(staging, entry.name));
      if (!path.startsWith(staging + sep)) throw new Error(`template entry ${entry.name} lies outside the data directory`);
      if (entry.type === 'dir') mkdir(path);
      else if (entry.name.replace(/^\/+/, '') === 'PG_VERSION') deferred = entry.data;
      else {
        mkdir(dirname(path));
        writeSparse(path, entry.data);
      }
    }
    if (!deferred) throw new Error('the catalog template holds no PG_VERSION');
    writeFileSync(join(staging, 'PG_VERSION'), deferred);
  }
  for (const name of readdirSync(staging)) if (name !== 'PG_VERSION') renameSync(join(staging, name), join(dir, name));
  renameSync(join(staging, 'PG_VERSION'), join(dir, 'PG_VERSION'));
  rmdirSync(staging);
}

const PAGE = 8192;
const ZERO_PAGE = new Uint8Array(PAGE);

/**
 * Creates a new file holding `data`, leaving PostgreSQL pages that are all zeros as holes (they
 * read back as zeros): the template's 16 MB WAL segment is half zeros, a quarter of the bytes a new
 * catalog would otherwise write.
 */
function writeSparse(path: string, data: Uint8Array): void {
  const fd = openSync(path, 'wx');
  try {
    let at = 0;
    let written = 0;
    while (at < data.length) {
      let end = at;
      while (end < data.length && !isZeroPage(data, end)) end += PAGE;
      for (let from = at; from < Math.min(end, data.length); from = written) written = from + writeSync(fd, data, from, Math.min(end, data.length) - from, from);
      at = end;
      while (at < data.length && isZeroPage(data, at)) at += PAGE;
    }
    if (written < data.length) ftruncateSync(fd, data.length);
  } finally {
    closeSync(fd);
  }
}

/** Whether the whole page at `at` is zero (a short last page never is: it is written). */
function isZeroPage(data: Uint8Array, at: number): boolean {
  return at + PAGE <= data.length && Buffer.from(data.buffer, data.byteOffset + at, PAGE).equals(ZERO_PAGE);
}

const isGzip = (bytes: Uint8Array) => bytes[0] === 0x1f && bytes[1] === 0x8b;

let templateTar: Promise<Uint8Array> | null = null;

/**
 * Starts reading and unzipping the migrated template (zlib runs on libuv's threads) for a new
 * catalog, so that ~0.1 s of gunzip overlaps other start-up work. openPGlite uses (and drops) it.
 */
export function prepareTemplate(): Promise<Uint8Array> {
  // 1 MiB output chunks: with zlib's default 16 KiB, the round trips to the thread pool make it 3x slower.
  templateTar ??= templateBytes().then((bytes) => (isGzip(bytes) ? promisify(gunzip)(bytes, { chunkSize: 1 << 20 }) : bytes));
  return templateTar;
}

/** The directories and regular files of a ustar archive. */
function* tarEntries(tar: Uint8Array): Generator<{ name: string; type: 'dir' | 'file'; data: Uint8Array }> {
  const text = (from: number, len: number) => {
    const end = tar.indexOf(0, from);
    return Buffer.from(tar.subarray(from, end === -1 || end > from + len ? from + len : end)).toString('utf8');
  };
  for (let at = 0; at + 512 <= tar.length; ) {
    if (tar[at] === 0) return; // the end-of-archive blocks
    const name = text(at, 100);
    const prefix = text(at + 345, 131);
    const size = parseInt(text(at + 124, 12).trim() || '0', 8);
    const flag = String.fromCharCode(tar[at + 156]);
    const data = tar.subarray(at + 512, at + 512 + size);
    at += 512 + Math.ceil(size / 512) * 512;
    const full = prefix ? `${prefix}/${name}` : name;
    if (flag === '5') yield { name: full, type: 'dir', data };
    else if (flag === '0' || flag === '\0') yield { name: full, type: 'file', data };
    else throw new Error(`unexpected entry type '${flag}' for ${full} in the catalog template`);
  }
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
  /** A migrated data directory tarball to start a new catalog from. */
  template?: Blob;
}

/** Opens (creating and migrating when new) an embedded catalog. */
export async function openPGlite(opts: OpenPGliteOptions = {}): Promise<PGliteStore> {
  const enginePromise = prepareEngine();
  const PGlitePromise = loadPGlite();
  const { dataDir } = opts;
  if (dataDir && !existsSync(join(dataDir, 'PG_VERSION'))) {
    mkdirSync(dataDir, { recursive: true });
    let tarball: Uint8Array;
    try {
      tarball = opts.template ? new Uint8Array(await opts.template.arrayBuffer()) : await prepareTemplate();
    } finally {
      templateTar = null; // 40 MB unzipped: not kept for the life of a server
    }
    unpackDataDir(tarball, dataDir);
  }
  const [PGlite, compiled] = await Promise.all([PGlitePromise, enginePromise]);
  const db = dataDir
    ? new PGlite(dataDir, { parsers, serializers, ...compiled })
    : new PGlite({ parsers, serializers, ...compiled, ...(opts.template ? { loadDataDir: opts.template } : {}) });
  await db.waitReady;
  const store = new PGliteStore(db);
  if (!(await isMigrated(store))) await migrate(store);
  return store;
}
