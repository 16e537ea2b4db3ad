import {
  closeSync,
  existsSync,
  fstatSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  rmdirSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { join, normalize, sep } from 'node:path';
import { writeFileAtomicSync } from '../shared/atomic-write.js';
import { toStoreError } from './store.js';

/*
 * A catalog template "pack": a migrated, cleanly shut down PGlite data directory in one
 * uncompressed file that a new catalog is unpacked from with plain reads and writes.
 *
 *   "CATPACK1" | u32 LE index length | index (JSON) | data
 *
 * The index lists the directories (parents first) and the files in data order, each file with its
 * size and the byte ranges that are not all-zero PostgreSQL pages; the data holds those ranges
 * back to back. Zero pages become holes (they read back as zeros): half of the 16 MB WAL segment.
 *
 * Why not the gzipped tarball it replaces: gunzip cost ~0.17 s of CPU and held the 40 MB tar in
 * memory twice (zlib's chunks, then Buffer.concat), and fresh memory is not free (about 3 ms per MB
 * of first-touched pages on the 2-core VMs we measure on). Unpacking a pack goes through one 1 MiB
 * buffer. The pack is ~30 MB on disk instead of 4.6 MB; npm's tarball compresses it as before.
 */

const MAGIC = 'CATPACK1';
const PAGE = 8192;
const CHUNK = 1 << 20;

/** One file of a pack: its path in the data directory, its size and its non-zero [offset, length] ranges. */
interface PackFile {
  path: string;
  size: number;
  ranges: Array<[number, number]>;
}

interface PackIndex {
  dirs: string[];
  files: PackFile[];
}

/** Where a new catalog is unpacked before its files move into the data directory. */
export const STAGING = '.catalog-new';

/** The file whose presence marks a data directory as a (complete) catalog: written and moved in last. */
const MARKER = 'PG_VERSION';

/**
 * Packs a data directory (one PostgreSQL was shut down cleanly in) into `packFile`, written under a
 * temporary name and renamed, so a pack that exists is whole. postmaster.pid is left out.
 */
export function writePack(dataDir: string, packFile: string): void {
  const dirs: string[] = [];
  const files: Array<PackFile & { data: Buffer }> = [];
  const walk = (rel: string) => {
    for (const e of readdirSync(join(dataDir, rel), { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      const path = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) {
        dirs.push(path);
        walk(path);
      } else if (e.isFile()) {
        if (path === 'postmaster.pid') continue;
        const data = readFileSync(join(dataDir, path));
        files.push({ path, size: data.length, ranges: nonZeroRanges(data), data });
      } else throw new Error(`unexpected ${path} in the data directory to pack (neither a file nor a directory)`);
    }
  };
  walk('');
  if (!files.some((f) => f.path === MARKER)) throw new Error(`${dataDir} holds no ${MARKER}: not a data directory`);
  const index = Buffer.from(JSON.stringify({ dirs, files: files.map(({ path, size, ranges }) => ({ path, size, ranges })) } satisfies PackIndex));
  const head = Buffer.alloc(MAGIC.length + 4);
  head.write(MAGIC, 0, 'latin1');
  head.writeUInt32LE(index.length, MAGIC.length);
  writeFileAtomicSync(packFile, [head, index, ...files.flatMap((f) => f.ranges.map(([at, len]) => f.data.subarray(at, at + len)))]);
}

/** The [offset, length] ranges of `data` that are not whole all-zero pages (a short last page is data). */
function nonZeroRanges(data: Buffer): Array<[number, number]> {
  const ranges: Array<[number, number]> = [];
  const zero = Buffer.alloc(PAGE);
  const isZero = (at: number) => at + PAGE <= data.length && data.subarray(at, at + PAGE).equals(zero);
  for (let at = 0; at < data.length; ) {
    if (isZero(at)) {
      at += PAGE;
      continue;
    }
    let end = at;
    while (end < data.length && !isZero(end)) end = Math.min(end + PAGE, data.length);
    ranges.push([at, end - at]);
    at = end;
  }
  return ranges;
}

/** Writes all of `data` at `position` (-1: at the current offset). */
function writeAll(fd: number, data: Uint8Array, position: number): void {
  for (let done = 0; done < data.length; ) {
    done += writeSync(fd, data, done, data.length - done, position < 0 ? null : position + done);
  }
}

/** A pack opened for reading: its index, and its data read in order through one reused buffer. */
class PackReader {
  readonly index: PackIndex;
  private readonly buf = Buffer.allocUnsafe(CHUNK);
  private start = 0;
  private end = 0;
  private next: number;

  constructor(private readonly fd: number) {
    const head = Buffer.alloc(MAGIC.length + 4);
    if (readSync(fd, head, 0, head.length, 0) !== head.length || head.toString('latin1', 0, MAGIC.length) !== MAGIC) {
      throw new Error('the catalog template is not a template pack (CATPACK1)');
    }
    const length = head.readUInt32LE(MAGIC.length);
    const index = Buffer.allocUnsafe(length);
    if (readSync(fd, index, 0, length, head.length) !== length) throw new Error('the catalog template is cut short (its index)');
    this.index = JSON.parse(index.toString('utf8')) as PackIndex;
    this.next = head.length + length;
  }

  /** Hands the next `length` bytes of data to `sink`, in pieces of at most 1 MiB. */
  take(length: number, sink: (piece: Buffer) => void): void {
    while (length > 0) {
      if (this.start === this.end) {
        this.start = 0;
        this.end = readSync(this.fd, this.buf, 0, CHUNK, this.next);
        this.next += this.end;
        if (this.end === 0) throw new Error('the catalog template is cut short (its data)');
      }
      const n = Math.min(length, this.end - this.start);
      sink(this.buf.subarray(this.start, this.start + n));
      this.start += n;
      length -= n;
    }
  }
}

/**
 * Makes `dir` (empty or missing) a new catalog from a pack, with node's own file system calls.
 * Files are unpacked into a staging directory and moved in with PG_VERSION (what marks a catalog)
 * last, so an interrupted run leaves either a staging directory the next run starts over or
 * finishes, or a whole catalog. No fsync: a catalog is a cache-like copy until it holds data, and
 * PGlite runs PostgreSQL with fsync off anyway.
 */
export function unpackPack(packFile: string, dir: string): void {
  const staging = join(dir, STAGING);
  if (!existsSync(join(staging, MARKER))) {
    rmSync(staging, { recursive: true, force: true });
    // The holder's lock (src/holder/lock.ts) is taken before the catalog is made: not "content".
    if (readdirSync(dir).some((name) => !name.startsWith('catalog-serve.json') && name !== 'catalog-holder.log')) {
      throw toStoreError({ code: '58P01', message: `data directory ${dir} is not empty and holds no catalog` });
    }
    const fd = openSync(packFile, 'r');
    try {
      const pack = new PackReader(fd);
      const inside = (path: string) => {
        const full = normalize(join(staging, path));
        if (!full.startsWith(staging + sep)) throw new Error(`template entry ${path} lies outside the data directory`);
        return full;
      };
      mkdirSync(staging);
      for (const d of pack.index.dirs) mkdirSync(inside(d));
      let marker: PackFile | null = null;
      for (const f of pack.index.files) {
        if (f.path === MARKER) marker = f;
        // PG_VERSION is the only file at the top level before the rest are written: stage it
        // under another name first (data order is fixed), and give it its name last.
        writeFile(pack, f, inside(f.path === MARKER ? `${MARKER}.new` : f.path));
      }
      if (!marker) throw new Error(`the catalog template holds no ${MARKER}`);
      renameSync(join(staging, `${MARKER}.new`), join(staging, MARKER));
    } finally {
      closeSync(fd);
    }
  }
  for (const name of readdirSync(staging)) if (name !== MARKER) renameSync(join(staging, name), join(dir, name));
  renameSync(join(staging, MARKER), join(dir, MARKER));
  rmdirSync(staging);
}

/** Creates one file from the pack's next data (holes where the pack has no range). */
function writeFile(pack: PackReader, f: PackFile, path: string): void {
  const fd = openSync(path, 'wx');
  try {
    let end = 0;
    for (const [at, len] of f.ranges) {
      let pos = at;
      pack.take(len, (piece) => {
        writeAll(fd, piece, pos);
        pos += piece.length;
      });
      end = at + len;
    }
    if (end < f.size) ftruncateSync(fd, f.size);
  } finally {
    closeSync(fd);
  }
}

/**
 * The pack as an uncompressed ustar archive (PGlite's loadDataDir format), for catalogs in memory.
 */
export function packToTar(packFile: string): Uint8Array<ArrayBuffer> {
  const fd = openSync(packFile, 'r');
  try {
    const pack = new PackReader(fd);
    const { dirs, files } = pack.index;
    const size = (dirs.length + files.length) * 512 + files.reduce((n, f) => n + Math.ceil(f.size / 512) * 512, 0) + 1024;
    const tar = new Uint8Array(size);
    let at = 0;
    const mtime = Math.floor(fstatSync(fd).mtimeMs / 1000);
    for (const d of dirs) at = tarHeader(tar, at, d, 0, '5', 0o700, mtime);
    for (const f of files) {
      const from = tarHeader(tar, at, f.path, f.size, '0', 0o600, mtime);
      for (const [off, len] of f.ranges) {
        let pos = from + off;
        pack.take(len, (piece) => {
          tar.set(piece, pos);
          pos += piece.length;
        });
      }
      at = from + Math.ceil(f.size / 512) * 512;
    }
    return tar;
  } finally {
    closeSync(fd);
  }
}

/** Writes a ustar header for `path` at `at` (the buffer is zeroed); returns where its data starts. */
function tarHeader(tar: Uint8Array, at: number, path: string, size: number, type: '0' | '5', mode: number, mtime: number): number {
  const enc = new TextEncoder();
  const put = (text: string, off: number) => tar.set(enc.encode(text), at + off);
  const octal = (n: number, width: number) => `${n.toString(8).padStart(width - 1, '0')}\0`;
  const name = enc.encode(path);
  if (name.length > 100) {
    const cut = path.lastIndexOf('/', 155);
    if (cut <= 0 || enc.encode(path.slice(cut + 1)).length > 100) throw new Error(`template path too long for ustar: ${path}`);
    put(path.slice(0, cut), 345);
    put(path.slice(cut + 1), 0);
  } else put(path, 0);
  put(octal(mode, 8), 100);
  put(octal(0, 8), 108);
  put(octal(0, 8), 116);
  put(octal(size, 12), 124);
  put(octal(mtime, 12), 136);
  put('        ', 148);
  put(type, 156);
  put('ustar\x0000', 257);
  let sum = 0;
  for (let i = at; i < at + 512; i++) sum += tar[i];
  put(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
  return at + 512;
}
