import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { createInflateRaw } from 'node:zlib';

/**
 * Reads a zip archive on disk through its central directory, so the order of its entries does
 * not matter (SheetJS writes worksheets before the workbook, Excel after): any entry can be read
 * whenever it is wanted, each as a stream of its uncompressed bytes.
 *
 * Nothing a file claims is trusted before it is checked against the file: the directory must lie
 * inside the file before the end record (a 22-byte file claiming a 4 GiB directory made node
 * abort allocating it), every entry's data inside the file, and an entry never inflates past the
 * size its directory records (a zip bomb's lie) nor past the limit its reader sets.
 */

export interface ZipEntry {
  name: string;
  method: number;
  compressedSize: number;
  /** The uncompressed size the central directory records: the most the entry may inflate to. */
  size: number;
  headerOffset: number;
}

/** A zip that cannot be read (not one, cut short, damaged, a method other than store and deflate, over a limit). */
export class ZipError extends Error {}

const EOCD = 0x06054b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;
/** The largest central directory read (65,535 entries of 250-byte names is 19 MiB). */
export const MAX_DIRECTORY_BYTES = 32 * 1024 * 1024;

const mib = (n: number) => `${Math.round((n / 1024 / 1024) * 10) / 10} MiB`;

/** The end-of-central-directory record: within the last 64 KiB + 22 bytes (its comment is at most 64 KiB). */
async function endRecord(fh: import('node:fs/promises').FileHandle, size: number): Promise<{ count: number; dirSize: number; dirOffset: number; at: number }> {
  const tailSize = Math.min(size, 22 + 0xffff);
  const tail = Buffer.alloc(tailSize);
  await fh.read(tail, 0, tailSize, size - tailSize);
  for (let i = tailSize - 22; i >= 0; i--) {
    if (tail.readUInt32LE(i) !== EOCD) continue;
    return { count: tail.readUInt16LE(i + 10), dirSize: tail.readUInt32LE(i + 12), dirOffset: tail.readUInt32LE(i + 16), at: size - tailSize + i };
  }
  const head = Buffer.alloc(8);
  await fh.read(head, 0, 8, 0);
  // an OLE compound file: an Excel 97-2003 .xls, or an .xlsx saved with a password (encrypted)
  if (head.equals(Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]))) {
    throw new ZipError('it is an Excel 97-2003 workbook (.xls) or a workbook with a password (encrypted), not an .xlsx zip: save it in Excel or LibreOffice as .xlsx without a password');
  }
  throw new ZipError('it is not a zip archive, as every .xlsx file is (no central directory)');
}

/** The archive's entries by name, from its central directory, each checked against the file's size. */
export async function zipEntries(path: string): Promise<Map<string, ZipEntry>> {
  const fh = await open(path, 'r');
  try {
    const { size } = await fh.stat();
    const { count, dirSize, dirOffset, at } = await endRecord(fh, size);
    if (dirOffset === 0xffffffff || count === 0xffff || dirSize === 0xffffffff) throw new ZipError('it is a ZIP64 archive (over 4 GiB or 65,535 entries), which this reader does not handle');
    if (dirOffset + dirSize > at) throw new ZipError(`its end record claims a ${mib(dirSize)} central directory at byte ${dirOffset}, past the end of the ${size}-byte file: it is damaged or not a workbook`);
    if (dirSize > MAX_DIRECTORY_BYTES) throw new ZipError(`its central directory is ${mib(dirSize)}, over the ${mib(MAX_DIRECTORY_BYTES)} a workbook's may take`);
    const dir = Buffer.alloc(dirSize);
    await fh.read(dir, 0, dirSize, dirOffset);
    return directoryEntries(dir, count, dirOffset);
  } finally {
    await fh.close();
  }
}

/** Parses `count` central-directory records; every field is checked to lie in the directory, every entry's data before it. */
function directoryEntries(dir: Buffer, count: number, dirOffset: number): Map<string, ZipEntry> {
  const damaged = (why: string) => new ZipError(`its central directory is damaged (${why})`);
  const entries = new Map<string, ZipEntry>();
  for (let p = 0, n = 0; n < count; n++) {
    if (p + 46 > dir.length || dir.readUInt32LE(p) !== CENTRAL) throw damaged(`record ${n + 1} of ${count} is not where it should be`);
    const nameLength = dir.readUInt16LE(p + 28);
    const next = p + 46 + nameLength + dir.readUInt16LE(p + 30) + dir.readUInt16LE(p + 32);
    if (next > dir.length) throw damaged(`record ${n + 1} runs past its end`);
    const name = dir.toString('utf8', p + 46, p + 46 + nameLength).replace(/\\/g, '/');
    const entry = { name, method: dir.readUInt16LE(p + 10), compressedSize: dir.readUInt32LE(p + 20), size: dir.readUInt32LE(p + 24), headerOffset: dir.readUInt32LE(p + 42) };
    if (entry.size === 0xffffffff || entry.compressedSize === 0xffffffff || entry.headerOffset === 0xffffffff) throw new ZipError(`its entry ${name} is a ZIP64 entry (over 4 GiB), which this reader does not handle`);
    if (entry.headerOffset + 30 + entry.compressedSize > dirOffset) throw damaged(`the data of ${name} would lie past the directory`);
    entries.set(name, entry);
    p = next;
  }
  return entries;
}

/** How an entry is read: the most it may inflate to (over it: `tooBig` says why), a stop, a byte count for progress. */
export interface EntryOptions {
  /** The largest uncompressed size this reader takes for the entry; a larger recorded size is refused before reading. */
  limit?: number;
  /** The refusal when the entry is over `limit`: what the entry is and why it is bounded. */
  tooBig?: (size: number) => string;
  /** Stops the read: the iteration ends early (no error), the file is closed. */
  signal?: AbortSignal;
  /** Counts the compressed bytes read, for progress. */
  onBytes?: (n: number) => void;
  /** Bytes per read of the file (default 64 KiB). */
  highWaterMark?: number;
}

/** Where an entry's data starts: after its local header (its own name and extra field lengths). */
async function dataStart(path: string, entry: ZipEntry): Promise<number> {
  const fh = await open(path, 'r');
  const head = Buffer.alloc(30);
  try {
    const { bytesRead } = await fh.read(head, 0, 30, entry.headerOffset);
    if (bytesRead < 30 || head.readUInt32LE(0) !== LOCAL) throw new ZipError(`its entry ${entry.name} is damaged (no local header)`);
    const start = entry.headerOffset + 30 + head.readUInt16LE(26) + head.readUInt16LE(28);
    if (start + entry.compressedSize > (await fh.stat()).size) throw new ZipError(`its entry ${entry.name} is cut short`);
    return start;
  } finally {
    await fh.close();
  }
}

/**
 * An entry's uncompressed bytes, a chunk at a time: never more than the size its directory
 * records (a damaged or hostile entry is refused when it inflates past it) nor than `o.limit`
 * (refused before any of it is read). Ends early, without an error, when `o.signal` aborts.
 */
export async function* entryChunks(path: string, entry: ZipEntry, o: EntryOptions = {}): AsyncGenerator<Buffer> {
  if (o.limit !== undefined && entry.size > o.limit) throw new ZipError(o.tooBig?.(entry.size) ?? `its entry ${entry.name} is ${mib(entry.size)} uncompressed, over the ${mib(o.limit)} it may take`);
  if (entry.method !== 0 && entry.method !== 8) throw new ZipError(`its entry ${entry.name} uses compression method ${entry.method} (only store and deflate are read)`);
  if (entry.method === 0 && entry.size !== entry.compressedSize) throw new ZipError(`its entry ${entry.name} is damaged (stored, yet its two sizes differ)`);
  if (o.signal?.aborted || entry.compressedSize === 0) return;
  const start = await dataStart(path, entry);
  const raw = createReadStream(path, { start, end: start + entry.compressedSize - 1, highWaterMark: o.highWaterMark ?? 64 * 1024 });
  if (o.onBytes) raw.on('data', (c) => o.onBytes!(c.length));
  const stream = entry.method === 0 ? raw : raw.pipe(createInflateRaw());
  if (stream !== raw) raw.on('error', (err) => stream.destroy(err));
  let total = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      if (o.signal?.aborted) return;
      total += chunk.length;
      if (total > entry.size) throw new ZipError(`its entry ${entry.name} inflates past the ${entry.size} bytes its directory records: it is damaged, or built to exhaust memory`);
      yield chunk;
    }
  } catch (err) {
    if (err instanceof ZipError) throw err;
    throw new ZipError(`its entry ${entry.name} is damaged (${(err as Error).message})`);
  } finally {
    raw.destroy();
    stream.destroy();
  }
}
