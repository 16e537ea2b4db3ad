import * as zlib from 'node:zlib';
import type { TextSink } from './types.js';

/**
 * A zip archive written front to back (no seeking), each entry deflated as it streams: the
 * local header carries a data descriptor flag, and the CRC and sizes follow the data. Enough
 * for an .xlsx (Open Packaging Conventions), in constant memory. Entries and the archive stay
 * under 4 GiB (no ZIP64): past that it says so rather than write a broken file.
 */

const CRC_TABLE = (() => {
  const t = new Int32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c;
  }
  return t;
})();

/** CRC-32 of `buf` continuing from `crc` (node:zlib's native one where Node has it, 20.15+). */
function crc32(buf: Uint8Array, crc: number): number {
  const native = (zlib as unknown as { crc32?: (data: Uint8Array, value?: number) => number }).crc32;
  if (native) return native(buf, crc);
  let c = ~crc;
  for (let i = 0; i < buf.length; i++) c = CRC_TABLE[(c ^ buf[i]) & 0xff] ^ (c >>> 8);
  return ~c >>> 0;
}

interface Written {
  name: Buffer;
  crc: number;
  compressed: number;
  size: number;
  offset: number;
}

const LIMIT = 0xffffffff;
/** 1980-01-01 00:00 in DOS time/date: xlsx readers ignore entry times, and the bytes stay reproducible. */
const DOS_DATE = (0 << 9) | (1 << 5) | 1;

export interface ZipWriter {
  /** Starts an entry; write its text or UTF-8 bytes with `write`, then `close` it before the next one (bytes are not reused by the caller once written). */
  entry(name: string): Promise<{ write(chunk: string | Uint8Array): Promise<void>; close(): Promise<void> }>;
  /** Writes the central directory. */
  end(): Promise<void>;
}

/** An entry's local file header: sizes and CRC left zero, a data descriptor follows the data. */
function localHeader(name: Buffer): Buffer {
  const head = Buffer.alloc(30);
  head.writeUInt32LE(0x04034b50, 0);
  head.writeUInt16LE(20, 4); // version needed: 2.0 (deflate)
  head.writeUInt16LE(0x0808, 6); // data descriptor follows; names are UTF-8
  head.writeUInt16LE(8, 8); // deflate
  head.writeUInt16LE(0, 10);
  head.writeUInt16LE(DOS_DATE, 12);
  head.writeUInt16LE(name.length, 26);
  return head;
}

/** The data descriptor after an entry's data: its CRC and sizes. */
function dataDescriptor(crc: number, compressed: number, size: number): Buffer {
  const desc = Buffer.alloc(16);
  desc.writeUInt32LE(0x08074b50, 0);
  desc.writeUInt32LE(crc >>> 0, 4);
  desc.writeUInt32LE(compressed, 8);
  desc.writeUInt32LE(size, 12);
  return desc;
}

/** An entry's central directory header (its name follows it). */
function centralHeader(e: Written): Buffer {
  const h = Buffer.alloc(46);
  h.writeUInt32LE(0x02014b50, 0);
  h.writeUInt16LE(20, 4);
  h.writeUInt16LE(20, 6);
  h.writeUInt16LE(0x0808, 8);
  h.writeUInt16LE(8, 10);
  h.writeUInt16LE(0, 12);
  h.writeUInt16LE(DOS_DATE, 14);
  h.writeUInt32LE(e.crc, 16);
  h.writeUInt32LE(e.compressed, 20);
  h.writeUInt32LE(e.size, 24);
  h.writeUInt16LE(e.name.length, 28);
  h.writeUInt32LE(e.offset, 42);
  return h;
}

/** The end of central directory record. */
function endOfDirectory(count: number, dirSize: number, dirStart: number): Buffer {
  const eocd = Buffer.alloc(22);
  eocd.writeUInt32LE(0x06054b50, 0);
  eocd.writeUInt16LE(count, 8);
  eocd.writeUInt16LE(count, 10);
  eocd.writeUInt32LE(dirSize, 12);
  eocd.writeUInt32LE(dirStart, 16);
  return eocd;
}

type Entry = Awaited<ReturnType<ZipWriter['entry']>>;

/** One entry's data, deflated as it is written; `close` writes its descriptor and records it. */
function deflatedEntry(emit: (b: Uint8Array) => Promise<void>, level: number, done: (crc: number, compressed: number, size: number) => void): Entry {
  let crc = 0;
  let size = 0;
  let compressed = 0;
  const deflate = zlib.createDeflateRaw({ level });
  const pending: Buffer[] = [];
  deflate.on('data', (c: Buffer) => pending.push(c));
  const drain = async () => {
    for (const c of pending.splice(0)) {
      compressed += c.length;
      await emit(c);
    }
  };
  return {
    async write(chunk) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
      crc = crc32(bytes, crc);
      size += bytes.length;
      if (size > LIMIT) throw new Error('a workbook sheet would pass 4 GiB uncompressed, more than this writer handles (no ZIP64): export fewer rows, or use CSV');
      if (!deflate.write(bytes)) await new Promise((r) => deflate.once('drain', r));
      await drain();
    },
    async close() {
      // 'end' (not the end() callback, which is 'finish'): the last compressed bytes have come out
      await new Promise<void>((resolve, reject) => {
        deflate.once('error', reject);
        deflate.once('end', () => resolve());
        deflate.end();
      });
      await drain();
      await emit(dataDescriptor(crc, compressed, size));
      done(crc >>> 0, compressed, size);
    },
  };
}

/** A streaming zip writer over a sink; `level` is the deflate level (1: fast, the default here). */
export function zipWriter(out: TextSink, level = 1): ZipWriter {
  let offset = 0;
  const entries: Written[] = [];
  const emit = async (b: Uint8Array) => {
    offset += b.length;
    if (offset > LIMIT) throw new Error('the workbook would pass 4 GiB, more than this writer handles (no ZIP64): export fewer rows or columns, or use CSV');
    await out.write(b);
  };
  return {
    async entry(nameText) {
      const name = Buffer.from(nameText, 'utf8');
      const start = offset;
      await emit(localHeader(name));
      await emit(name);
      return deflatedEntry(emit, level, (crc, compressed, size) => entries.push({ name, crc, compressed, size, offset: start }));
    },
    async end() {
      const dirStart = offset;
      for (const e of entries) {
        await emit(centralHeader(e));
        await emit(e.name);
      }
      await emit(endOfDirectory(entries.length, offset - dirStart, dirStart));
    },
  };
}
