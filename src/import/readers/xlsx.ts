import { stat } from 'node:fs/promises';
import type { RecordReader, SourceRecord } from '../types.js';
import { CellRecord, ImportError } from '../types.js';
import { checkXlsxRecords, type Merge } from './xlsx-bounds.js';
import { readBook, readStrings, readStyles, type Workbook } from './xlsx-book.js';
import { HeaderFinder, type LaidOut, MergeFill } from './xlsx-header.js';
import { columnName, excelDateText, excelSerialDate, Kind, type SheetRow, SheetRows } from './xlsx-sheet.js';
import { XmlError, XmlFeed } from './xml.js';
import { entryChunks, type ZipEntry, ZipError, zipEntries } from './zip-reader.js';

export { excelDateText, excelNumberText, excelSerialDate } from './xlsx-sheet.js';
export { isDateFormat } from './xlsx-book.js';

/** How a workbook is read besides its path: the sheet, the header row, the stop. */
export interface XlsxOptions {
  /** `--sheet`: the sheet to read (default the first). */
  sheet?: string;
  /** The input as the user gave it, for messages. */
  name?: string;
  /** `--header-row`: the sheet row holding the header (default: the first row with cells). */
  headerRow?: number;
  /** Stops the read in any phase: an AbortError before the first record, else the records end early. */
  signal?: AbortSignal;
  /** Called as each phase begins (directory, workbook, bounds, styles, strings, sheet): tests stop a read there. */
  onPhase?: (phase: XlsxPhase) => void;
}

/** The phases of reading a workbook, in order. */
export type XlsxPhase = 'directory' | 'workbook' | 'bounds' | 'styles' | 'strings' | 'sheet';

/** A record of an xlsx row; `values` built from the cells on demand, as for CSV (a cell the row lacks is ''). */
class XlsxRow extends CellRecord {
  constructor(
    index: number,
    line: number,
    cells: string[],
    headers: string[],
    /** What each cell held (a plain number, a date-time), and the workbook's date system. */
    private readonly kinds: Kind[],
    private readonly date1904: boolean,
    /** What to tell the user if the header turns out wrong (a title row, another sheet). */
    readonly advice?: string,
  ) {
    super(index, line, cells, headers);
  }

  dateOf(cell: number): string | { error: string } | undefined {
    const kind = this.kinds[cell];
    const text = this.cells[cell];
    let iso: string | undefined;
    // Excel's dates run from serial 1 (1900-01-01) to 2958465 (9999-12-31)
    if (kind === Kind.Number) {
      const n = Number(text);
      iso = n >= 1 && n < 2958466 ? excelDateText(excelSerialDate(n, this.date1904)) : undefined;
    } else if (kind === Kind.DateTime) iso = text;
    const t = iso?.indexOf('T') ?? -1;
    if (iso === undefined || t < 0) return iso;
    return { error: `cell ${columnName(cell)}${this.line} holds ${iso.replace('T', ' ')}, a date with the time of day ${iso.slice(t + 1)}: the column takes a date alone (a time of 00:00 is read as the date)` };
  }

  get values(): Record<string, unknown> {
    const values: Record<string, unknown> = {};
    for (let i = 0; i < this.headers.length; i++) values[this.headers[i]] = this.cells[i] ?? '';
    return values;
  }
}

/** What is read before the sheet: the workbook's facts, the sheet's entry and merged ranges. */
interface OpenedBook {
  book: Workbook;
  sheet: ZipEntry;
  merges: Merge[];
}

/**
 * The scan pass's workbook, kept for the load pass (an import reads its input twice): the load
 * pass takes it instead of reading the shared strings, styles and bounds again, and the slot is
 * emptied, so a workbook's strings are held once and never past its import. Keyed by the file's
 * identity and the sheet: a file changed between the passes is read again.
 */
let kept: { key: string; opened: OpenedBook } | null = null;

async function identity(file: string, sheet: string | undefined): Promise<string> {
  const s = await stat(file);
  return [file, sheet ?? '', s.dev, s.ino, s.size, s.mtimeMs].join('\0');
}

/** The workbook's parts read before the sheet, or kept from the previous pass; null when the read was stopped. */
async function openBook(file: string, name: string, o: XlsxOptions): Promise<OpenedBook | null> {
  const key = await identity(file, o.sheet);
  if (kept?.key === key) {
    const { opened } = kept;
    kept = null;
    return opened;
  }
  const opened = await readBookParts(file, name, o);
  kept = opened ? { key, opened } : null;
  return opened;
}

async function readBookParts(file: string, name: string, o: XlsxOptions): Promise<OpenedBook | null> {
  const { signal } = o;
  o.onPhase?.('directory');
  const entries = await zipEntries(file);
  if (signal?.aborted) return null;
  o.onPhase?.('workbook');
  const src = { file, entries, signal };
  const book = await readBook(src);
  if (!book) return null;
  const wanted = o.sheet === undefined ? book.sheets[0] : book.sheets.find((s) => s.name === o.sheet);
  if (!wanted) {
    const list = book.sheets.map((s) => `"${s.name}"`).join(', ');
    throw new ImportError(o.sheet ? `${name} has no sheet named "${o.sheet}"${list ? `: its sheets are ${list}` : ''}` : `${name} has no sheets`, 'usage');
  }
  const sheet = entries.get(wanted.path);
  if (!sheet) throw new ZipError(`its sheet "${wanted.name}" (${wanted.path}) is missing`);
  const strings = book.stringsPath ? entries.get(book.stringsPath) : undefined;
  if (book.stringsPath && !strings) throw new ZipError(`its shared strings (${book.stringsPath}) are missing`);
  o.onPhase?.('bounds');
  // a row or a cell's text over the record limit is refused before anything is buffered
  const merges = await checkXlsxRecords({ file, name, sheet, strings, signal });
  if (!merges) return null;
  o.onPhase?.('styles');
  if (!(await readStyles(src, book))) return null;
  o.onPhase?.('strings');
  if (!(await readStrings(src, book))) return null;
  return { book, sheet, merges };
}

/** What to say when the first sheet's header is refused and the workbook has others. */
function sheetAdvice(book: Workbook, chosen: boolean): string | undefined {
  if (chosen || book.sheets.length < 2) return undefined;
  const list = book.sheets.map((s) => `"${s.name}"`).join(', ');
  return `Its first sheet, "${book.sheets[0].name}", was read; the workbook's sheets are ${list}: name the one to import with --sheet (e.g. --sheet "${book.sheets[1].name}").`;
}

/**
 * Streams the first sheet of an .xlsx workbook (or the one named by `sheet`): the header is the
 * first row with cells (or `--header-row N`), every later row a record whose cells are text as in
 * a CSV file and whose line is the sheet's row number. A row with more cells than the header is
 * passed on with `error` set; shorter rows read the rest as empty. The zip is read through its
 * central directory, so workbooks from Excel, LibreOffice and SheetJS read the same whatever the
 * order of their entries; only the sheet streams (shared strings are held, as Excel itself does).
 * Every part is bounded before it is read; `signal` stops the read in any phase (an AbortError
 * before the first record, else the records end); a malformed zip or XML part is a usage error
 * (exit 2) naming the part.
 * @example for await (const r of xlsxReader('a.xlsx').records()) r.line // 2, 3, …
 */
export function xlsxReader(path: string, sheet?: string, name = path, more: Omit<XlsxOptions, 'sheet' | 'name'> = {}): RecordReader {
  const o: XlsxOptions = { ...more, sheet, name };
  let read = 0;
  let finder: HeaderFinder | null = null;
  const unreadable = (err: unknown) => {
    if (err instanceof ImportError) return err;
    if (!(err instanceof ZipError) && !(err instanceof XmlError)) return err;
    return new ImportError(`${name} could not be read as an Excel workbook (.xlsx): ${(err as Error).message}`, 'usage');
  };
  return {
    get headers() {
      return finder?.headers ?? null;
    },
    bytesRead: () => read,
    async *records(): AsyncGenerator<SourceRecord> {
      try {
        const opened = await openBook(path, name, o);
        if (!opened) throw stopped();
        const { book, sheet: entry, merges } = opened;
        const fill = new MergeFill(merges, name, book.sheets.find((s) => s.path === entry.name)?.name ?? entry.name);
        finder = new HeaderFinder({ name, headerRow: o.headerRow, date1904: book.date1904, fill, advice: sheetAdvice(book, sheet !== undefined), make: makeRow });
        o.onPhase?.('sheet');
        const rows = new SheetRows(book);
        const feed = await XmlFeed.open(entry.name, rows);
        rows.feed = feed;
        for await (const chunk of entryChunks(path, entry, { signal: o.signal, onBytes: (n) => (read += n) })) {
          feed.write(chunk);
          yield* drain(rows.rows, finder);
        }
        if (o.signal?.aborted) {
          // before its first record a pass stops at once; after, its visitor stops at the next record
          if (finder.made === 0) throw stopped();
          return;
        }
        feed.end();
        yield* drain(rows.rows, finder);
        yield* finder.finish();
      } catch (err) {
        throw unreadable(err);
      }
    },
  };
}

/** A stop before the first record: the import ends as interrupted with nothing sent (the CLI's AbortError). */
const stopped = () => new DOMException('the workbook was not read: the import was stopped', 'AbortError');

function* drain(rows: SheetRow[], finder: HeaderFinder): Generator<SourceRecord> {
  for (const row of rows) yield* finder.take(row);
  rows.length = 0;
}

/** A record from a sheet row laid out (HeaderFinder decides which rows are records). */
function makeRow(index: number, line: number, row: LaidOut, headers: string[], date1904: boolean, advice: string | undefined): SourceRecord {
  return new XlsxRow(index, line, row.cells, headers, row.kinds, date1904, advice);
}
