import type { Readable } from 'node:stream';
import { ImportError } from '../types.js';
import { MAX_RECORD_BYTES } from './input.js';
import { entryStream, type ZipEntry } from './zip-reader.js';

/**
 * The record limit for .xlsx input, checked before the reader buffers anything. An xlsx is a zip:
 * a 410 KB file can inflate to a single cell of hundreds of megabytes, and a reader holds a row's
 * XML and the shared-string table (exceljs, before, took the CLI to 3 GB on such a file). So the
 * worksheets and the shared-string table are inflated once here, as a stream, and measured: a row
 * (`<row>` to the next) or a shared string (`<si>` to the next) over MAX_RECORD_BYTES, the limit
 * CSV lines and JSON elements have, refuses the file with what and where. Nothing is kept but a
 * few counters.
 */

/** The entries whose records are measured: the worksheets and the shared-string table. */
const MEASURED = /(?:^|\/)worksheets\/[^/]+\.xml$|(?:^|\/)sharedStrings[^/]*\.xml$/i;

/**
 * Refuses the workbook when a row or a cell's text is longer than MAX_RECORD_BYTES (exit 2);
 * `entries` are the zip's (zip-reader.ts), `name` the input as the user gave it.
 */
export async function checkXlsxRecords(file: string, name: string, entries: Map<string, ZipEntry>, limit = MAX_RECORD_BYTES): Promise<void> {
  for (const e of entries.values()) {
    // another compression method: the reader says so when it reads the entry
    if (!MEASURED.test(e.name) || (e.method !== 0 && e.method !== 8)) continue;
    const xml = await entryStream(file, e);
    const tag = /sharedStrings[^/]*\.xml$/i.test(e.name) ? 'si' : 'row';
    const over = await longestRecord(xml, tag, limit).finally(() => xml.destroy());
    if (over) {
      const what = tag === 'row' ? `row ${over.label ?? `#${over.index}`} of ${e.name.replace(/^xl\//, '')}` : `the text of shared string ${over.index} (a cell's text)`;
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
