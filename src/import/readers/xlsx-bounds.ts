import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { type Readable } from 'node:stream';
import { createInflateRaw } from 'node:zlib';
import { ImportError } from '../types.js';
import { MAX_RECORD_BYTES } from './input.js';

/**
 * The record limit for .xlsx input, checked before exceljs buffers anything. An xlsx is a zip: a
 * 410 KB file can inflate to a single cell of hundreds of megabytes, which exceljs' reader (its XML
 * parser gathers a text node whole, and the shared-string table is kept) would hold in memory,
 * several times over, before any row reached the import (3 GB was seen). So the worksheets and
 * the shared-string table are inflated once here, as a stream, and measured: a row (`<row>` to the
 * next) or a shared string (`<si>` to the next) over MAX_RECORD_BYTES, the limit CSV lines and
 * JSON elements have, refuses the file with what and where. Nothing is kept but a few counters.
 */

/** A zip entry's name and where its data is. */
interface Entry {
  name: string;
  method: number;
  compressedSize: number;
  localOffset: number;
}

/** The entries whose records are measured: the worksheets and the shared-string table. */
const MEASURED = /^xl\/(?:worksheets\/sheet\d+\.xml|sharedStrings\.xml)$/;

/** Refuses the workbook when a row or a cell's text is longer than MAX_RECORD_BYTES (exit 2); `name` is the input as the user gave it. */
export async function checkXlsxRecords(file: string, name: string, limit = MAX_RECORD_BYTES): Promise<void> {
  const entries = await centralDirectory(file);
  for (const e of entries) {
    if (!MEASURED.test(e.name) || (e.method !== 0 && e.method !== 8)) continue;
    const start = await dataOffset(file, e.localOffset);
    const raw = createReadStream(file, { start, end: e.compressedSize === 0xffffffff ? undefined : start + e.compressedSize - 1 });
    const xml: Readable = e.method === 8 ? raw.pipe(createInflateRaw()) : raw;
    raw.on('error', (err) => xml.destroy(err));
    const tag = e.name.endsWith('sharedStrings.xml') ? 'si' : 'row';
    const over = await longestRecord(xml, tag, limit).finally(() => raw.destroy());
    if (over) {
      const what = tag === 'row' ? `row ${over.label ?? `#${over.index}`} of ${e.name.slice(3)}` : `the text of shared string ${over.index} (a cell's text)`;
      throw new ImportError(
        `${name}: ${what} is longer than ${limit / 1024 / 1024} MiB, the largest record an import takes (the service's body limit); it was refused before being read into memory`,
        'usage',
      );
    }
  }
}

/**
 * Streams XML and finds the first record (from one `<tag` to the next, or to the end) longer than
 * `limit` bytes; its 1-based index and, for rows, the `r` attribute when it is in view.
 */
async function longestRecord(xml: Readable, tag: string, limit: number): Promise<{ index: number; label?: string } | null> {
  // `<row ` or `<x:row ` (a namespace prefix): text cannot hold a raw `<`, so only markup matches
  const open = new RegExp(`<(?:[A-Za-z_][\\w.-]*:)?${tag}(?=[\\s>/])(?:[^<>]*?\\sr="(\\d+)")?`, 'g');
  let offset = 0; // bytes before the current chunk
  let recordStart = -1; // where the current record began (-1: before the first)
  let index = 0;
  let label: string | undefined;
  let carry = '';
  for await (const chunk of xml as AsyncIterable<Buffer>) {
    // latin1: one character per byte, so string positions are byte offsets
    const text = carry + chunk.toString('latin1');
    const base = offset - carry.length;
    open.lastIndex = 0;
    for (let m = open.exec(text); m !== null; m = open.exec(text)) {
      const at = base + m.index;
      if (at <= recordStart) continue; // seen in the carry already
      if (recordStart >= 0 && at - recordStart > limit) return { index, label };
      recordStart = at;
      index++;
      label = m[1];
    }
    offset += chunk.length;
    if (recordStart >= 0 && offset - recordStart > limit) return { index, label };
    carry = text.slice(-256);
  }
  return null;
}

/** The zip's central directory: every entry's name, method, compressed size and local header offset. */
async function centralDirectory(file: string): Promise<Entry[]> {
  const fh = await open(file, 'r');
  try {
    const size = (await fh.stat()).size;
    const tailSize = Math.min(size, 65_557);
    const tail = Buffer.alloc(tailSize);
    await fh.read(tail, 0, tailSize, size - tailSize);
    let eocd = -1;
    for (let i = tailSize - 22; i >= 0; i--) {
      if (tail.readUInt32LE(i) === 0x06054b50) {
        eocd = i;
        break;
      }
    }
    // not a readable zip: exceljs' own reader reports it (as before this check)
    if (eocd < 0) return [];
    const count = tail.readUInt16LE(eocd + 10);
    const dirSize = tail.readUInt32LE(eocd + 12);
    const dirOffset = tail.readUInt32LE(eocd + 16);
    if (dirOffset + dirSize > size) return [];
    const dir = Buffer.alloc(dirSize);
    await fh.read(dir, 0, dirSize, dirOffset);
    const entries: Entry[] = [];
    for (let p = 0, n = 0; n < count && p + 46 <= dir.length && dir.readUInt32LE(p) === 0x02014b50; n++) {
      const nameLen = dir.readUInt16LE(p + 28);
      entries.push({
        method: dir.readUInt16LE(p + 10),
        compressedSize: dir.readUInt32LE(p + 20),
        localOffset: dir.readUInt32LE(p + 42),
        name: dir.toString('utf8', p + 46, p + 46 + nameLen),
      });
      p += 46 + nameLen + dir.readUInt16LE(p + 30) + dir.readUInt16LE(p + 32);
    }
    return entries;
  } finally {
    await fh.close();
  }
}

/** Where an entry's data starts: after its local header, whose name and extra field lengths may differ from the central directory's. */
async function dataOffset(file: string, localOffset: number): Promise<number> {
  const fh = await open(file, 'r');
  try {
    const head = Buffer.alloc(30);
    await fh.read(head, 0, 30, localOffset);
    return localOffset + 30 + head.readUInt16LE(26) + head.readUInt16LE(28);
  } finally {
    await fh.close();
  }
}
