import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { createInflateRaw } from 'node:zlib';

/**
 * Reads a zip archive on disk through its central directory, so the order of its entries does
 * not matter (SheetJS writes worksheets before the workbook, Excel after): any entry can be read
 * whenever it is wanted, each as a stream of its uncompressed bytes.
 */

export interface ZipEntry {
  name: string;
  method: number;
  compressedSize: number;
  size: number;
  headerOffset: number;
}

/** A zip that cannot be read (not one, cut short, a method other than store and deflate). */
export class ZipError extends Error {}

const EOCD = 0x06054b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;

/** The archive's entries by name, from its central directory (the end-of-central-directory record within the last 64 KiB). */
export async function zipEntries(path: string): Promise<Map<string, ZipEntry>> {
  const fh = await open(path, 'r');
  try {
    const { size } = await fh.stat();
    const tailSize = Math.min(size, 22 + 0xffff);
    const tail = Buffer.alloc(tailSize);
    await fh.read(tail, 0, tailSize, size - tailSize);
    let at = -1;
    for (let i = tailSize - 22; i >= 0; i--) if (tail.readUInt32LE(i) === EOCD) {
      at = i;
      break;
    }
    if (at < 0) throw new ZipError('it is not a zip archive, as every .xlsx file is (no central directory)');
    const count = tail.readUInt16LE(at + 10);
    const dirSize = tail.readUInt32LE(at + 12);
    const dirOffset = tail.readUInt32LE(at + 16);
    if (dirOffset === 0xffffffff || count === 0xffff) throw new ZipError('it is a ZIP64 archive (over 4 GiB or 65,535 entries), which this reader does not handle');
    const dir = Buffer.alloc(dirSize);
    await fh.read(dir, 0, dirSize, dirOffset);
    const entries = new Map<string, ZipEntry>();
    for (let p = 0, n = 0; n < count; n++) {
      if (dir.readUInt32LE(p) !== CENTRAL) throw new ZipError('its central directory is damaged');
      const nameLength = dir.readUInt16LE(p + 28);
      const extra = dir.readUInt16LE(p + 30);
      const comment = dir.readUInt16LE(p + 32);
      const name = dir.toString('utf8', p + 46, p + 46 + nameLength).replace(/\\/g, '/');
      entries.set(name, {
        name,
        method: dir.readUInt16LE(p + 10),
        compressedSize: dir.readUInt32LE(p + 20),
        size: dir.readUInt32LE(p + 24),
        headerOffset: dir.readUInt32LE(p + 42),
      });
      p += 46 + nameLength + extra + comment;
    }
    return entries;
  } finally {
    await fh.close();
  }
}

/** An entry's uncompressed bytes as a stream (`onBytes` counts the compressed bytes read, for progress). */
export async function entryStream(path: string, entry: ZipEntry, onBytes?: (n: number) => void): Promise<Readable> {
  const fh = await open(path, 'r');
  const head = Buffer.alloc(30);
  try {
    await fh.read(head, 0, 30, entry.headerOffset);
  } finally {
    await fh.close();
  }
  if (head.readUInt32LE(0) !== LOCAL) throw new ZipError(`its entry ${entry.name} is damaged`);
  const start = entry.headerOffset + 30 + head.readUInt16LE(26) + head.readUInt16LE(28);
  if (entry.compressedSize === 0) return createReadStream(path, { start: 0, end: -1 });
  const raw = createReadStream(path, { start, end: start + entry.compressedSize - 1, highWaterMark: 64 * 1024 });
  if (onBytes) raw.on('data', (c) => onBytes(c.length));
  if (entry.method === 0) return raw;
  if (entry.method !== 8) throw new ZipError(`its entry ${entry.name} uses compression method ${entry.method} (only store and deflate are read)`);
  const inflate = createInflateRaw();
  raw.on('error', (err) => inflate.destroy(err));
  return raw.pipe(inflate);
}

/** An entry's whole text (the small parts of a workbook: its sheet list, relations, styles, strings). */
export async function entryText(path: string, entry: ZipEntry): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of await entryStream(path, entry)) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
