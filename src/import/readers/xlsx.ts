import { closeSync, openSync, readSync } from 'node:fs';
import type { RecordReader, SourceRecord } from '../types.js';
import { ImportError } from '../types.js';
import { MAX_RECORD_BYTES, openCounted } from './input.js';
import { checkXlsxRecords } from './xlsx-bounds.js';

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
 * date-time Excel shows (Excel stores no time zone; exceljs hands the wall time over as UTC).
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

/**
 * The text a cell's value imports as, like a CSV cell: strings as they are, numbers as Excel
 * shows them, booleans true/false, dates ISO, formulas by their result, rich text and links by
 * their text, an empty cell as ''.
 */
export function cellText(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return excelNumberText(v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (v instanceof Date) return excelDateText(v);
  if (typeof v === 'object') {
    const o = v as Record<string, unknown>;
    if (Array.isArray(o.richText)) return (o.richText as { text?: string }[]).map((r) => r.text ?? '').join('');
    if ('formula' in o || 'sharedFormula' in o) return cellText(o.result);
    if ('error' in o) throw new CellError(String(o.error));
    if ('text' in o) return cellText(o.text);
  }
  return String(v);
}

/** A sheet row: its cells as text (1-based row.values becomes 0-based cells, trailing blanks dropped). */
function rowCells(values: unknown[]): { cells: string[]; error?: string } {
  const cells: string[] = [];
  let error: string | undefined;
  for (let i = 1; i < values.length; i++) {
    try {
      cells.push(cellText(values[i]));
    } catch (err) {
      if (!(err instanceof CellError)) throw err;
      cells.push('');
      error ??= `column ${i} holds the Excel error ${err.message}`;
    }
  }
  while (cells.length && cells[cells.length - 1] === '') cells.pop();
  return { cells, error };
}

/** A record of an xlsx row; `values` built from the cells on demand, as for CSV. */
class XlsxRow implements SourceRecord {
  error?: string;
  constructor(
    readonly index: number,
    readonly line: number,
    readonly cells: string[],
    readonly headers: string[],
  ) {}

  get values(): Record<string, unknown> {
    const values: Record<string, unknown> = {};
    for (let i = 0; i < this.headers.length; i++) values[this.headers[i]] = this.cells[i] ?? '';
    return values;
  }
}

interface SheetLike {
  name?: string;
  [Symbol.asyncIterator](): AsyncIterator<{ number: number; values: unknown }>;
}

/**
 * Streams the first sheet of an .xlsx workbook (or the one named by `sheet`) with exceljs'
 * streaming reader: row 1 (the first row with cells) is the header, every later row a record
 * whose cells are text as in a CSV file and whose line is the sheet's row number. A row with
 * more cells than the header is passed on with `error` set; shorter rows read the rest as empty.
 * @example for await (const r of xlsxReader('a.xlsx').records()) r.line // 2, 3, …
 */
export function xlsxReader(path: string, sheet?: string, name = path): RecordReader {
  const file = path;
  const input = openCounted(path, 64 * 1024);
  path = name; // messages name the input as the user gave it
  let headers: string[] | null = null;
  return {
    get headers() {
      return headers;
    },
    bytesRead: input.bytesRead,
    async *records(): AsyncGenerator<SourceRecord> {
      // Not a zip at all: say so here. exceljs' reader, given one, can fail later from a timer
      // (a temporary file it already removed), out of reach of any catch.
      if (!isZip(file)) throw new ImportError(`${path} could not be read as an Excel workbook (.xlsx): it is not a zip archive, as every .xlsx file is`, 'usage');
      await checkXlsxRecords(file, path);
      const { default: ExcelJS } = await import('exceljs');
      const book = new ExcelJS.stream.xlsx.WorkbookReader(input.stream, {
        worksheets: 'emit',
        sharedStrings: 'cache',
        styles: 'cache',
        hyperlinks: 'ignore',
        entries: 'ignore',
      });
      const names = () => ((book as unknown as { model?: { sheets?: { name: string }[] } }).model?.sheets ?? []).map((s) => s.name);
      let found = false;
      let index = 0;
      try {
        for await (const ws of book as unknown as AsyncIterable<SheetLike>) {
          const wanted = sheet ?? names()[0];
          if (found || (wanted !== undefined && ws.name !== undefined && ws.name !== wanted)) {
            // Read past a sheet we skip: exceljs may have parked it in a temporary file, and a sheet
            // left unread makes it open that file again after removing it (an uncaught ENOENT).
            for await (const _ of ws) void _;
            continue;
          }
          found = true;
          for await (const row of ws) {
            const { cells, error } = rowCells(row.values as unknown[]);
            // a row of shared strings, each within the limit, can still add up past it
            if (textLength(cells) > MAX_RECORD_BYTES) throw new ImportError(`${path}: row ${row.number} is longer than 64 MiB, the largest record an import takes (the service's body limit)`, 'usage');
            if (!headers) {
              if (cells.length === 0) continue;
              headers = checkHeaders(cells, path, row.number);
              continue;
            }
            if (cells.length === 0) continue; // an empty row, like a blank line in CSV
            // Excel leaves trailing empty cells out: a row has the header's width (its rejects line too)
            while (cells.length < headers.length) cells.push('');
            const rec: SourceRecord = new XlsxRow(index++, row.number, cells, headers);
            if (error) rec.error = error;
            else if (cells.length > headers.length) rec.error = `expected ${headers.length} cells as in the header row, found ${cells.length}`;
            yield rec;
          }
        }
      } catch (err) {
        if (err instanceof ImportError) throw err;
        throw new ImportError(`${path} could not be read as an Excel workbook (.xlsx): ${(err as Error).message}`, 'usage');
      }
      if (!found) {
        const list = names();
        throw new ImportError(
          sheet ? `${path} has no sheet named "${sheet}"${list.length ? `: its sheets are ${list.map((n) => `"${n}"`).join(', ')}` : ''}` : `${path} has no sheets`,
          'usage',
        );
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

/** Whether a file starts as a zip archive does (`PK\x03\x04`). */
function isZip(file: string): boolean {
  let fd: number | null = null;
  try {
    fd = openSync(file, 'r');
    const head = Buffer.alloc(4);
    return readSync(fd, head, 0, 4, 0) === 4 && head.readUInt32LE(0) === 0x04034b50;
  } catch {
    return false;
  } finally {
    if (fd !== null) closeSync(fd);
  }
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
