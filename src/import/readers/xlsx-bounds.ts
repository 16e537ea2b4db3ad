import { ImportError } from '../types.js';
import { MAX_RECORD_BYTES } from './input.js';
import { PART_LIMITS, partTooBig } from './xlsx-book.js';
import { XmlError, XmlFeed, type XmlEvents } from './xml.js';
import { entryChunks, type ZipEntry } from './zip-reader.js';

/**
 * The record limit for .xlsx input, checked before the reader buffers anything. An xlsx is a zip:
 * a 410 KB file can inflate to a single cell of hundreds of megabytes, and a parser holds a
 * cell's text whole (exceljs, before, took the CLI to 3 GB on such a file). So the sheet to read
 * and the shared-string table are inflated once here, as a stream, and measured: a row (`<row>`
 * to the next, or to the end of `<sheetData>`) or a shared string (`<si>` to the next) over
 * MAX_RECORD_BYTES, the limit CSV lines and JSON elements have, refuses the file with what and
 * where. Record starts are found by their bytes (markup: text cannot hold a raw `<`) and nothing
 * is kept but a few counters; the one element read with the XML parser here is `<mergeCells>`,
 * after the sheet's rows, which the reader needs before the first row (merged cells are filled).
 */

/** A merged range of cells, 1-based rows, 0-based columns, as `ref` names it (`A5:A7`). */
export interface Merge {
  ref: string;
  top: number;
  left: number;
  bottom: number;
  right: number;
}

/** The most merged ranges a sheet may have (each is four numbers; Excel's own sheets have a few). */
export const MAX_MERGES = 1_000_000;

/** A column's 0-based index from a cell reference's letters (`B12` → 1); -1 when it has none. */
export function columnIndex(ref: string): number {
  let n = 0;
  let i = 0;
  for (; i < ref.length && i < 4; i++) {
    const c = ref.charCodeAt(i);
    if (c < 65 || c > 90) break;
    n = n * 26 + (c - 64);
  }
  return i === 0 ? -1 : n - 1;
}

/** A cell reference's parts: `C7` → [2, 7] (`$C$7` too); null when it is not one. Read by hand: it runs for every cell. */
export function cellRef(ref: string): [number, number] | null {
  let i = ref.charCodeAt(0) === 36 ? 1 : 0; // $
  let col = 0;
  const letters = i;
  for (; i < ref.length && i - letters < 3; i++) {
    const c = ref.charCodeAt(i);
    if (c < 65 || c > 90) break;
    col = col * 26 + (c - 64);
  }
  if (i === letters) return null;
  if (ref.charCodeAt(i) === 36) i++;
  let row = 0;
  const digits = i;
  for (; i < ref.length; i++) {
    const c = ref.charCodeAt(i);
    if (c < 48 || c > 57 || i - digits >= 7 || (c === 48 && i === digits)) return null;
    row = row * 10 + (c - 48);
  }
  return i === digits ? null : [col - 1, row];
}

/** The `<mergeCell ref>`s of a `<mergeCells>` element, read with the XML parser. */
class MergeList implements XmlEvents {
  readonly merges: Merge[] = [];
  done = false;
  constructor(readonly part: string) {}

  open(name: string, a: Record<string, string>): void {
    if (name !== 'mergeCell' || !a.ref) return;
    const [from, to = from] = a.ref.split(':');
    const start = cellRef(from);
    const end = cellRef(to);
    if (!start || !end) throw new XmlError(`${this.part}: the merged range "${a.ref}" is not a range of cells`);
    if (this.merges.length >= MAX_MERGES) throw new XmlError(`${this.part}: more than ${MAX_MERGES.toLocaleString('en-US')} merged ranges`);
    this.merges.push({ ref: a.ref, top: Math.min(start[1], end[1]), bottom: Math.max(start[1], end[1]), left: Math.min(start[0], end[0]), right: Math.max(start[0], end[0]) });
  }

  close(name: string): void {
    if (name === 'mergeCells') this.done = true;
  }
}

/** What the pre-pass needs to know: the parts, the input's name for messages, the stop. */
export interface BoundsSource {
  file: string;
  /** The input as the user gave it. */
  name: string;
  sheet: ZipEntry;
  strings?: ZipEntry;
  signal?: AbortSignal;
  limit?: number;
}

/**
 * Refuses the workbook when a row of the sheet or a shared string is longer than the record
 * limit (exit 2), or its shared strings are over their total limit; answers the sheet's merged
 * ranges, or null when `signal` stopped it.
 */
export async function checkXlsxRecords(s: BoundsSource): Promise<Merge[] | null> {
  const limit = s.limit ?? MAX_RECORD_BYTES;
  const refuse = (what: string) =>
    new ImportError(`${s.name}: ${what} is longer than ${limit / 1024 / 1024} MiB, the largest record an import takes (the service's body limit); it was refused before being read into memory`, 'usage');
  if (s.strings) {
    const o = { signal: s.signal, limit: PART_LIMITS.sharedStrings, tooBig: (n: number) => partTooBig(s.strings!.name, 'sharedStrings', n) };
    const over = await longestRecord(entryChunks(s.file, s.strings, o), 'si', limit);
    if (over) throw refuse(`the text of shared string ${over.index} (a cell's text)`);
  }
  const merges = new MergeList(s.sheet.name);
  const over = await longestRecord(entryChunks(s.file, s.sheet, { signal: s.signal }), 'row', limit, merges);
  if (over) throw refuse(`row ${over.label ?? `#${over.index}`} of ${s.sheet.name.replace(/^xl\//, '')}`);
  return s.signal?.aborted ? null : merges.merges;
}

/**
 * Streams XML and finds the first record (from one `<tag` to the next, or to the end of the
 * records' container) longer than `limit` bytes: its 1-based index and, for rows, the `r`
 * attribute when it is in view. With `merges`, a `<mergeCells>` element is parsed from its start.
 */
async function longestRecord(chunks: AsyncIterable<Buffer>, tag: 'row' | 'si', limit: number, merges?: MergeList): Promise<{ index: number; label?: string } | null> {
  // `<row ` or `<x:row ` (a namespace prefix), `</sheetData>`, `<mergeCells`; single or double quotes
  const names = tag === 'row' ? 'row|/sheetData|mergeCells' : 'si';
  const open = new RegExp(`<(/?)(?:[A-Za-z_][\\w.-]*:)?(${names.replace('/', '')})(?=[\\s>/])(?:[^<>]*?\\sr=["'](\\d+)["'])?`, 'g');
  let offset = 0; // bytes before the current chunk
  let recordStart = -1; // where the current record began (-1: before the first, or after the last)
  let index = 0;
  let label: string | undefined;
  let carry = '';
  let feed: XmlFeed | null = null;
  for await (const chunk of chunks) {
    if (feed) {
      feed.write(chunk);
      if (merges!.done) return null;
      continue;
    }
    // latin1: one character per byte, so string positions are byte offsets
    const text = carry + chunk.toString('latin1');
    const base = offset - carry.length;
    open.lastIndex = 0;
    for (let m = open.exec(text); m !== null; m = open.exec(text)) {
      const at = base + m.index;
      if (at <= recordStart) continue; // seen in the carry already
      if (recordStart >= 0 && at - recordStart > limit) return { index, label };
      if (m[1] || m[2] === 'mergeCells') recordStart = -1; // the end of the rows
      if (m[2] === 'mergeCells' && merges) {
        feed = await XmlFeed.open(merges.part, merges, true);
        feed.write(Buffer.from(text.slice(m.index), 'latin1'));
        if (merges.done) return null;
        break;
      }
      if (m[1] || m[2] === 'sheetData') continue;
      recordStart = at;
      index++;
      label = m[3];
    }
    offset += chunk.length;
    if (recordStart >= 0 && offset - recordStart > limit) return { index, label };
    carry = text.slice(-256);
  }
  return null;
}
