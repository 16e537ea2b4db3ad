import { cellRef, columnIndex } from './xlsx-bounds.js';
import { unescapeOoxml, type Workbook } from './xlsx-book.js';
import type { XmlEvents, XmlFeed } from './xml.js';

/**
 * A worksheet's rows as its XML streams through the parser (xml.ts): `<row>`s of `<c>` cells,
 * each cell's text as a CSV cell would hold it. Prefixed markup (`<x:c>`), single-quoted
 * attributes, entities, inline and rich strings and empty values (`<v/>`, `<c r="B2"/>`) are the
 * parser's to read; what a cell means is decided here.
 */

/** What a cell held, besides its text (a date column reads numbers and date-times its own way). */
export const Kind = {
  Text: 0,
  /** A plain number (no date format): an Excel serial date, if a date column reads it. */
  Number: 1,
  /** A date cell with a time of day (`2024-01-02T10:30:00`): a date column refuses it, naming the time. */
  DateTime: 2,
} as const;
export type Kind = (typeof Kind)[keyof typeof Kind];

/**
 * One sheet row as written: its number, its non-empty cells (column, text, kind) in the order they
 * came, the first fault. Kept sparse: a cell written at column XFD costs one entry, not 16,384;
 * the header stage lays a row out to the header's width (xlsx-header.ts).
 */
export interface SheetRow {
  number: number;
  cols: number[];
  texts: string[];
  kinds: Kind[];
  error?: string;
}

/** Excel's last column (XFD): a reference past it is not a cell. */
export const MAX_COLUMNS = 16_384;

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

/** The column letters of a 0-based index: 0 → A, 27 → AB. */
export function columnName(i: number): string {
  let s = '';
  for (let n = i + 1; n > 0; n = Math.floor((n - 1) / 26)) s = String.fromCharCode(65 + ((n - 1) % 26)) + s;
  return s;
}

/** A cell as it streams: its place, type, style and what it holds so far. */
interface OpenCell {
  col: number;
  t: string;
  s: number;
  formula: string | null;
  v: string | null;
  inline: string | null;
}

/** A row fault in a cell: the row is rejected with it. */
class CellFault extends Error {}

/** Where text goes: a cell's value, its inline string, its formula (kept short, for messages). */
const Into = { None: 0, Value: 1, Inline: 2, Formula: 3 } as const;

/**
 * The sheet's XML events → rows: completed rows wait in `rows` for the reader to take them after
 * each chunk. Structure a sheet cannot have (a cell in a cell, a row in a row, a column past
 * XFD) fails at once, naming where, so a hostile part never makes the reader hold or loop.
 */
export class SheetRows implements XmlEvents {
  readonly rows: SheetRow[] = [];
  private inData = false;
  private row: SheetRow | null = null;
  private cell: OpenCell | null = null;
  private into: number = Into.None;
  private inInline = false;
  private phonetic = 0;
  private lastRow = 0;
  feed!: XmlFeed;

  constructor(private readonly book: Workbook) {}

  open(name: string, a: Record<string, string>): void {
    if (name === 'sheetData') this.inData = true;
    else if (!this.inData) return;
    else if (name === 'row') this.openRow(a);
    else if (name === 'c') this.openCell(a);
    else if (!this.cell) return;
    else if (name === 'v') [this.into, this.cell.v] = [Into.Value, this.cell.v ?? ''];
    else if (name === 'f') [this.into, this.cell.formula] = [Into.Formula, this.cell.formula ?? ''];
    else if (name === 'is') [this.inInline, this.cell.inline] = [true, ''];
    else if (name === 'rPh') this.phonetic++;
    else if (name === 't' && this.inInline && this.phonetic === 0) this.into = Into.Inline;
  }

  close(name: string): void {
    if (name === 'v' || name === 't' || name === 'f') this.into = Into.None;
    else if (name === 'rPh') this.phonetic--;
    else if (name === 'is') this.inInline = false;
    else if (name === 'c') this.closeCell();
    else if (name === 'row') this.closeRow();
    else if (name === 'sheetData') this.inData = false;
  }

  text(t: string): void {
    const c = this.cell;
    if (!c || this.into === Into.None) return;
    if (this.into === Into.Value) c.v += t;
    else if (this.into === Into.Inline) c.inline += t;
    else if (c.formula!.length < 100) c.formula += t;
  }

  private openRow(a: Record<string, string>): void {
    if (this.row) throw this.feed.error(`a row inside row ${this.row.number}`);
    const r = Number(a.r);
    this.lastRow = a.r !== undefined && Number.isInteger(r) && r > 0 ? r : this.lastRow + 1;
    this.row = { number: this.lastRow, cols: [], texts: [], kinds: [] };
  }

  private openCell(a: Record<string, string>): void {
    const row = this.row;
    if (!row) throw this.feed.error('a cell outside a row');
    if (this.cell) throw this.feed.error(`a cell inside cell ${columnName(this.cell.col)}${row.number}`);
    let col = this.lastCol + 1;
    if (a.r !== undefined) {
      const ref = cellRef(a.r);
      col = ref ? ref[0] : columnIndex(a.r);
      if (col < 0) throw this.feed.error(`the cell reference "${a.r}" is not a cell's`);
    }
    if (col >= MAX_COLUMNS) throw this.feed.error(`the cell ${a.r ?? columnName(col)} is past Excel's last column (XFD)`);
    this.cell = { col, t: a.t ?? 'n', s: Number(a.s ?? 0), formula: null, v: null, inline: null };
  }

  /** The column of the row's last cell (a cell without `r` comes after it). */
  private lastCol = -1;

  private closeCell(): void {
    const c = this.cell!;
    const row = this.row!;
    this.cell = null;
    this.lastCol = c.col;
    let text = '';
    let kind: Kind = Kind.Text;
    try {
      [text, kind] = this.value(c, row.number);
    } catch (err) {
      if (!(err instanceof CellFault)) throw err;
      row.error ??= err.message;
    }
    if (text === '') return;
    row.cols.push(c.col);
    row.texts.push(text);
    row.kinds.push(kind);
  }

  private closeRow(): void {
    this.rows.push(this.row!);
    this.row = null;
    this.lastCol = -1;
  }

  /** One cell's text: strings as they are, numbers as Excel shows them, booleans true/false, dates ISO, formulas by their stored result. */
  private value(c: OpenCell, rowNumber: number): [string, Kind] {
    const where = () => `${columnName(c.col)}${rowNumber}`;
    if (c.t === 'inlineStr') return [unescapeOoxml(c.inline ?? ''), Kind.Text];
    const v = c.v;
    // a formula's result is its value; a formula without one (never calculated: openpyxl writes `<v></v>`) is not 0 or empty
    if (c.formula !== null && (v === null || (v === '' && c.t !== 'str'))) {
      throw new CellFault(`cell ${where()} holds a formula (=${clipFormula(c.formula)}) with no saved result: open the workbook in Excel or LibreOffice and save it, so its results are stored`);
    }
    if (v === null || (v === '' && c.t !== 'str')) return ['', Kind.Text];
    switch (c.t) {
      case 's':
        return [this.shared(v, where), Kind.Text];
      case 'str':
        return [unescapeOoxml(v), Kind.Text];
      case 'b':
        return [v === '1' || v === 'true' ? 'true' : 'false', Kind.Text];
      case 'e':
        throw new CellFault(`cell ${where()} holds the Excel error ${v}`);
      case 'd':
        return dateText(v);
    }
    const n = Number(v);
    if (v.trim() === '' || !Number.isFinite(n)) throw this.feed.error(`cell ${where()} holds "${v.slice(0, 40)}" where a number belongs`);
    if (!this.book.dateStyles[c.s]) return [excelNumberText(n), Kind.Number];
    const text = excelDateText(excelSerialDate(n, this.book.date1904));
    return [text, text.length > 10 ? Kind.DateTime : Kind.Text];
  }

  /** A shared string by its index: a damaged reference fails the sheet, naming the cell. */
  private shared(v: string, where: () => string): string {
    const i = Number(v);
    const s = Number.isInteger(i) ? this.book.strings.get(i) : undefined;
    if (s === undefined) throw this.feed.error(`cell ${where()} refers to shared string ${v.slice(0, 20)}, which the workbook's table (${this.book.strings.length} strings) does not have`);
    return s;
  }
}

/** A `t="d"` cell (ISO 8601 text): a date alone at midnight, else a date-time. */
function dateText(v: string): [string, Kind] {
  const text = v.replace(/T00:00(:00(\.0+)?)?Z?$/, '').replace(/Z$/, '');
  return [text, /T\d/.test(text) ? Kind.DateTime : Kind.Text];
}

function clipFormula(f: string): string {
  return f.length > 60 ? `${f.slice(0, 60)}…` : f;
}
