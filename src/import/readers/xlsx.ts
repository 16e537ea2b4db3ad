import type { RecordReader, SourceRecord } from '../types.js';
import { ImportError } from '../types.js';
import { MAX_RECORD_BYTES } from './input.js';
import { checkXlsxRecords } from './xlsx-bounds.js';
import { entryStream, entryText, type ZipEntry, ZipError, zipEntries } from './zip-reader.js';

/**
 * A number as Excel shows it in a General cell: at most 15 significant digits, so binary float
 * noise goes (0.1 + 0.2 → 0.3) and whole numbers keep every digit (a 12-digit UPC stays
 * 123456789012, never 1.23456789012E+11).
 * @example excelNumberText(123456789012) // '123456789012'
 */
export function excelNumberText(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  if (Number.isSafeInteger(n)) return String(n);
  const shown = Number(n.toPrecision(15));
  // String() of a number under 1e21 has no exponent unless it is tiny; write those out in full
  if (Math.abs(shown) >= 1e-6 || shown === 0) return String(shown);
  return shown.toFixed(20).replace(/\.?0+$/, '');
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/**
 * An Excel date cell as ISO text: a date alone when the cell holds no time of day, else the local
 * date-time Excel shows (Excel stores no time zone: the wall time is read as UTC).
 * @example excelDateText(new Date(Date.UTC(2024, 3, 3))) // '2024-04-03'
 */
export function excelDateText(d: Date): string {
  const date = `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
  const h = d.getUTCHours();
  const m = d.getUTCMinutes();
  const s = d.getUTCSeconds();
  const ms = d.getUTCMilliseconds();
  if (h === 0 && m === 0 && s === 0 && ms === 0) return date;
  return `${date}T${pad(h)}:${pad(m)}:${pad(s)}${ms ? `.${pad(ms, 3)}` : ''}`;
}

/** An Excel error value (#N/A, #REF!, …) in a cell: the row is rejected with it. */
export class CellError extends Error {}

const DAY_MS = 86_400_000;

/**
 * The date an Excel serial number stands for: days since 1899-12-30 in the 1900 date system
 * (before 1900-03-01 one day later: Excel counts a 1900-02-29 that never was), since 1904-01-01
 * in the 1904 system (old Mac workbooks); the fraction is the time of day.
 * @example excelSerialDate(44957, false) // 2023-01-31
 */
export function excelSerialDate(serial: number, date1904: boolean): Date {
  const epoch = date1904 ? Date.UTC(1904, 0, 1) : serial < 61 ? Date.UTC(1899, 11, 31) : Date.UTC(1899, 11, 30);
  return new Date(epoch + Math.round(serial * DAY_MS));
}

/** Built-in number formats that show a date or time (ECMA-376 18.8.30). */
const DATE_FORMAT_IDS = new Set([14, 15, 16, 17, 18, 19, 20, 21, 22, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 45, 46, 47, 50, 51, 52, 53, 54, 55, 56, 57, 58]);

/** Whether a number format shows a date: a built-in date format, or a code with d/m/y/h/s outside quotes and brackets. */
export function isDateFormat(id: number, code: string | undefined): boolean {
  if (DATE_FORMAT_IDS.has(id)) return true;
  if (!code) return false;
  const bare = code.replace(/"[^"]*"|\[[^\]]*\]|\\./g, '');
  return /[dmyhs]/i.test(bare) && !/^[#0.,%E+\- ]*$/.test(bare);
}

const ENTITIES: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

/** XML character data as text: entities, then OOXML's `_xHHHH_` escapes (`_x005F_` is a literal `_`). */
export function xmlUnescape(s: string): string {
  let out = s.includes('&')
    ? s.replace(/&(#x[0-9a-fA-F]+|#\d+|\w+);/g, (m, e: string) =>
        e[0] === '#' ? String.fromCodePoint(e[1] === 'x' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10)) : (ENTITIES[e] ?? m),
      )
    : s;
  if (out.includes('_x')) out = out.replace(/_x([0-9a-fA-F]{4})_/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
  return out;
}

/** The text of a rich or plain string item (`<si>`, `<is>`): its `<t>` runs, phonetic hints left out. */
function runsText(xml: string): string {
  let out = '';
  for (const m of xml.replace(/<rPh\b[\s\S]*?<\/rPh>/g, '').matchAll(/<t\b[^>]*?(?:\/>|>([\s\S]*?)<\/t>)/g)) out += xmlUnescape(m[1] ?? '');
  return out;
}

const attr = (tag: string, name: string) => new RegExp(`\\s${name}="([^"]*)"`).exec(tag)?.[1];

/** What reading a sheet's cells needs from the rest of the workbook. */
interface Workbook {
  sheets: Array<{ name: string; path: string }>;
  strings: string[];
  /** Per cell style (`s`): whether its number format shows a date. */
  dateStyles: boolean[];
  date1904: boolean;
}

/** A part's path from a relationship target (relative to `base`'s folder, or absolute from the root). */
function resolvePart(base: string, target: string): string {
  if (target.startsWith('/')) return target.slice(1);
  const parts = base.split('/').slice(0, -1);
  for (const seg of target.split('/')) {
    if (seg === '..') parts.pop();
    else if (seg !== '.') parts.push(seg);
  }
  return parts.join('/');
}

/** Relationships of a part: id → [type, resolved target]. */
function relations(xml: string, base: string): Map<string, [string, string]> {
  const out = new Map<string, [string, string]>();
  for (const m of xml.matchAll(/<Relationship\b[^>]*>/g)) {
    const id = attr(m[0], 'Id');
    const target = attr(m[0], 'Target');
    if (id && target && attr(m[0], 'TargetMode') !== 'External') out.set(id, [attr(m[0], 'Type') ?? '', resolvePart(base, target)]);
  }
  return out;
}

/** Reads the workbook's sheet list, shared strings, date styles and date system, whatever the order of its zip entries. */
async function readWorkbook(file: string, entries: Map<string, ZipEntry>): Promise<Workbook> {
  const text = async (name: string) => {
    const e = entries.get(name);
    return e ? entryText(file, e) : null;
  };
  const root = relations((await text('_rels/.rels')) ?? '', '');
  const bookPath = [...root.values()].find(([type]) => type.endsWith('/officeDocument'))?.[1] ?? 'xl/workbook.xml';
  const bookXml = await text(bookPath);
  if (bookXml === null) throw new ZipError(`it has no workbook part (${bookPath})`);
  const relsPath = `${bookPath.replace(/[^/]*$/, '')}_rels/${bookPath.split('/').pop()}.rels`;
  const rels = relations((await text(relsPath)) ?? '', bookPath);
  const ofType = (suffix: string) => [...rels.values()].find(([type]) => type.endsWith(suffix))?.[1];
  const sheets = [...bookXml.matchAll(/<sheet\b[^>]*>/g)].flatMap((m) => {
    const id = /\s[A-Za-z0-9_]+:id="([^"]*)"/.exec(m[0])?.[1];
    const path = id ? rels.get(id)?.[1] : undefined;
    return path ? [{ name: xmlUnescape(attr(m[0], 'name') ?? ''), path }] : [];
  });
  const sst = ofType('/sharedStrings');
  const stringsXml = sst ? await text(sst) : null;
  const strings = stringsXml ? [...stringsXml.matchAll(/<si\b[^>]*?(?:\/>|>([\s\S]*?)<\/si>)/g)].map((m) => runsText(m[1] ?? '')) : [];
  const stylesPath = ofType('/styles');
  const stylesXml = (stylesPath && (await text(stylesPath))) || '';
  const codes = new Map([...stylesXml.matchAll(/<numFmt\b[^>]*>/g)].map((m) => [Number(attr(m[0], 'numFmtId')), xmlUnescape(attr(m[0], 'formatCode') ?? '')]));
  const xfs = /<cellXfs\b[^>]*>([\s\S]*?)<\/cellXfs>/.exec(stylesXml)?.[1] ?? '';
  const dateStyles = [...xfs.matchAll(/<xf\b[^>]*>/g)].map((m) => {
    const id = Number(attr(m[0], 'numFmtId') ?? 0);
    return isDateFormat(id, codes.get(id));
  });
  const pr = /<workbookPr\b[^>]*>/.exec(bookXml)?.[0] ?? '';
  return { sheets, strings, dateStyles, date1904: /^(1|true)$/.test(attr(pr, 'date1904') ?? '') };
}

/** A column's index from a cell reference: `B12` → 1. */
function columnIndex(ref: string): number {
  let n = 0;
  for (let i = 0; i < ref.length; i++) {
    const c = ref.charCodeAt(i);
    if (c < 65 || c > 90) break;
    n = n * 26 + (c - 64);
  }
  return n - 1;
}

/** One cell's text, like a CSV cell: strings as they are, numbers as Excel shows them, booleans true/false, dates ISO, formulas by their result. */
function cellValue(head: string, body: string, book: Workbook): string {
  const t = attr(head, 't') ?? 'n';
  if (t === 'inlineStr') return runsText(/<is>([\s\S]*?)<\/is>/.exec(body)?.[1] ?? '');
  const v = /<v>([\s\S]*?)<\/v>/.exec(body)?.[1];
  if (v === undefined) return '';
  switch (t) {
    case 's':
      return book.strings[Number(v)] ?? '';
    case 'str':
      return xmlUnescape(v);
    case 'b':
      return v === '1' || v === 'true' ? 'true' : 'false';
    case 'e':
      throw new CellError(xmlUnescape(v));
    case 'd':
      return v.replace(/T00:00:00(\.0+)?Z?$/, '');
  }
  const n = Number(v);
  if (book.dateStyles[Number(attr(head, 's') ?? 0)] && Number.isFinite(n)) return excelDateText(excelSerialDate(n, book.date1904));
  return excelNumberText(n);
}

/** A sheet row's cells as text (placed by their references; trailing blanks dropped) and the first Excel error. */
function rowCells(xml: string, book: Workbook): { cells: string[]; numbers: boolean[]; error?: string } {
  const cells: string[] = [];
  const numbers: boolean[] = [];
  let error: string | undefined;
  for (const m of xml.matchAll(/<c\b([^>]*?)(?:\/>|>([\s\S]*?)<\/c>)/g)) {
    const ref = attr(m[1], 'r');
    const at = ref ? columnIndex(ref) : cells.length;
    while (cells.length < at) cells.push('');
    try {
      cells[at] = cellValue(m[1], m[2] ?? '', book);
      const t = attr(m[1], 't');
      if ((t === undefined || t === 'n') && cells[at] !== '' && !book.dateStyles[Number(attr(m[1], 's') ?? 0)]) numbers[at] = true;
    } catch (err) {
      if (!(err instanceof CellError)) throw err;
      cells[at] = '';
      error ??= `column ${at + 1} holds the Excel error ${err.message}`;
    }
  }
  while (cells.length && cells[cells.length - 1] === '') cells.pop();
  return { cells, numbers, error };
}

/** The `<row>` elements of a sheet as they stream in: each with its row number (its `r`, else the next). */
async function* sheetRows(stream: AsyncIterable<Buffer>): AsyncGenerator<{ number: number; xml: string }> {
  const decoder = new TextDecoder('utf-8');
  let buf = '';
  let last = 0;
  const take = function* (final: boolean) {
    let from = 0;
    for (;;) {
      const start = buf.indexOf('<row', from);
      if (start < 0) break;
      const open = buf.indexOf('>', start);
      if (open < 0) break;
      const selfClosing = buf[open - 1] === '/';
      const close = selfClosing ? open + 1 : buf.indexOf('</row>', open);
      if (close < 0) break;
      const r = Number(attr(buf.slice(start, open), 'r'));
      last = Number.isInteger(r) && r > 0 ? r : last + 1;
      yield { number: last, xml: selfClosing ? '' : buf.slice(open + 1, close) };
      from = selfClosing ? close : close + 6;
    }
    buf = final ? '' : buf.slice(from === 0 ? Math.max(0, buf.lastIndexOf('<row')) : from);
  };
  for await (const chunk of stream) {
    buf += decoder.decode(chunk, { stream: true });
    yield* take(false);
  }
  buf += decoder.decode();
  yield* take(true);
}

/** A record of an xlsx row; `values` built from the cells on demand, as for CSV. */
class XlsxRow implements SourceRecord {
  error?: string;
  constructor(
    readonly index: number,
    readonly line: number,
    readonly cells: string[],
    readonly headers: string[],
    /** Cells that held a plain number (no date format), and the workbook's date system. */
    private readonly numbers: boolean[],
    private readonly date1904: boolean,
  ) {}

  serialDate(cell: number): string | undefined {
    if (!this.numbers[cell]) return undefined;
    const n = Number(this.cells[cell]);
    // Excel's dates run from serial 1 (1900-01-01) to 2958465 (9999-12-31)
    return n >= 1 && n < 2958466 ? excelDateText(excelSerialDate(n, this.date1904)) : undefined;
  }

  get values(): Record<string, unknown> {
    const values: Record<string, unknown> = {};
    for (let i = 0; i < this.headers.length; i++) values[this.headers[i]] = this.cells[i] ?? '';
    return values;
  }
}

/**
 * Streams the first sheet of an .xlsx workbook (or the one named by `sheet`): row 1 (the first
 * row with cells) is the header, every later row a record whose cells are text as in a CSV file
 * and whose line is the sheet's row number. A row with more cells than the header is passed on
 * with `error` set; shorter rows read the rest as empty. The zip is read through its central
 * directory, so workbooks from Excel, LibreOffice and SheetJS read the same whatever the order
 * of their entries; only the sheet streams (shared strings are held, as Excel itself does).
 * @example for await (const r of xlsxReader('a.xlsx').records()) r.line // 2, 3, …
 */
export function xlsxReader(path: string, sheet?: string, name = path): RecordReader {
  const file = path;
  let read = 0;
  let headers: string[] | null = null;
  return {
    get headers() {
      return headers;
    },
    bytesRead: () => read,
    async *records(): AsyncGenerator<SourceRecord> {
      const unreadable = (err: unknown) => new ImportError(`${name} could not be read as an Excel workbook (.xlsx): ${(err as Error).message}`, 'usage');
      let book: Workbook;
      let stream: AsyncIterable<Buffer>;
      try {
        const entries = await zipEntries(file);
        // a row or a cell's text over the record limit is refused before anything is buffered
        await checkXlsxRecords(file, name, entries);
        book = await readWorkbook(file, entries);
        const wanted = sheet === undefined ? book.sheets[0] : book.sheets.find((s) => s.name === sheet);
        if (!wanted) {
          const list = book.sheets.map((s) => `"${s.name}"`).join(', ');
          throw new ImportError(sheet ? `${name} has no sheet named "${sheet}"${list ? `: its sheets are ${list}` : ''}` : `${name} has no sheets`, 'usage');
        }
        const entry = entries.get(wanted.path);
        if (!entry) throw new ZipError(`its sheet "${wanted.name}" (${wanted.path}) is missing`);
        stream = (await entryStream(file, entry, (n) => (read += n))) as AsyncIterable<Buffer>;
      } catch (err) {
        if (err instanceof ImportError) throw err;
        throw unreadable(err);
      }
      let index = 0;
      try {
        for await (const row of sheetRows(stream)) {
          const { cells, numbers, error } = rowCells(row.xml, book);
          // a row of shared strings, each within the limit, can still add up past it
          if (textLength(cells) > MAX_RECORD_BYTES) throw new ImportError(`${name}: row ${row.number} is longer than 64 MiB, the largest record an import takes (the service's body limit)`, 'usage');
          if (!headers) {
            if (cells.length === 0) continue;
            headers = checkHeaders(cells, name, row.number);
            continue;
          }
          if (cells.length === 0) continue; // an empty row, like a blank line in CSV
          // Excel leaves trailing empty cells out: a row has the header's width (its rejects line too)
          while (cells.length < headers.length) cells.push('');
          const rec: SourceRecord = new XlsxRow(index++, row.number, cells, headers, numbers, book.date1904);
          if (error) rec.error = error;
          else if (cells.length > headers.length) rec.error = `expected ${headers.length} cells as in the header row, found ${cells.length}`;
          yield rec;
        }
      } catch (err) {
        if (err instanceof ImportError) throw err;
        throw unreadable(err);
      }
    },
  };
}

/** The characters of a row's cells together. */
function textLength(cells: string[]): number {
  let n = 0;
  for (const c of cells) n += c.length;
  return n;
}

function checkHeaders(cells: string[], path: string, row: number): string[] {
  const seen = new Set<string>();
  cells.forEach((h, i) => {
    if (h === '') throw new ImportError(`${path}: the header row (row ${row}) has an empty cell in column ${i + 1}`, 'usage');
    if (seen.has(h)) throw new ImportError(`${path}: the header "${h}" appears twice (row ${row})`, 'usage');
    seen.add(h);
  });
  return cells;
}
