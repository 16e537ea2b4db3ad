import { Writable } from 'node:stream';
import type { ColumnDef } from '../schema/catalog.js';
import { DEFAULT_NULL_TOKEN, knownDefault } from '../schema/conventions.js';
import type { ExportWriter, TextSink, WriterOptions } from './writers.js';

/** Excel's "Text" number format: what is typed into the cell later stays text too. */
const TEXT_FORMAT = '@';
const DATE_FORMAT = 'yyyy-mm-dd';

/**
 * One cell's value for a column: dates as real dates, booleans and numbers as themselves, every
 * other column (identifiers, UPCs, ISRCs, text, timestamps with their zone) as text so Excel
 * never turns it into a number. Null is an empty cell where an empty cell imports as null, and
 * `\N` where it would take a non-null default, as in CSV exports.
 */
function cellValue(col: ColumnDef | undefined, v: unknown, nullToken: string | undefined): string | number | boolean | Date | null {
  if (v === null || v === undefined) {
    if (nullToken !== undefined) return nullToken;
    return col && knownDefault(col) !== null ? DEFAULT_NULL_TOKEN : null;
  }
  if (col?.type === 'date' && typeof v === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(v)) return new Date(`${v}T00:00:00Z`);
  if (col?.type === 'boolean' && typeof v === 'boolean') return v;
  if (col?.type === 'jsonb' || (typeof v === 'object' && v !== null)) return JSON.stringify(v);
  if (typeof v === 'number' && col && /^(integer|bigint|smallint|numeric|real|double)/.test(col.type)) return v;
  return String(v);
}

/** A Writable over a TextSink, so exceljs' streaming writer sends its zip bytes to the sink. */
function sinkStream(out: TextSink): Writable {
  return new Writable({
    write(chunk: Buffer, _enc, done) {
      out.write(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.length)).then(() => done(), done);
    },
  });
}

/**
 * Streams rows into an .xlsx workbook (one sheet named after the table) with exceljs' streaming
 * writer: each row is committed as it is written, so memory stays flat. The header row is bold
 * and frozen; text columns carry the Text format; dates are Excel dates. Re-importable as is.
 * @example const w = await xlsxWriter(out, { table }); await w.write(rows); await w.end();
 */
export async function xlsxWriter(out: TextSink, opts: WriterOptions): Promise<ExportWriter> {
  const { default: ExcelJS } = await import('exceljs');
  const columns = opts.columns ?? opts.table.columns.map((c) => c.name);
  const byName = new Map(opts.table.columns.map((c) => [c.name, c]));
  const cols = columns.map((c) => byName.get(c));
  const stream = sinkStream(out);
  const book = new ExcelJS.stream.xlsx.WorkbookWriter({ stream, useStyles: true, useSharedStrings: false });
  const sheet = book.addWorksheet(opts.table.name.slice(0, 31), { views: [{ state: 'frozen', ySplit: 1 }] });
  sheet.columns = columns.map((name, i) => {
    const c = cols[i];
    const date = c?.type === 'date';
    const text = !date && c?.type !== 'boolean' && !/^(integer|bigint|smallint|numeric|real|double)/.test(c?.type ?? 'text');
    return {
      key: name,
      width: Math.min(40, Math.max(10, name.length + 2)),
      style: date ? { numFmt: DATE_FORMAT } : text ? { numFmt: TEXT_FORMAT } : {},
    };
  });
  const header = sheet.addRow(columns);
  header.font = { bold: true };
  header.commit();
  return {
    async write(rows) {
      for (const r of rows) {
        sheet.addRow(columns.map((name, i) => cellValue(cols[i], r[name], opts.nullToken))).commit();
      }
      // let the zip stream drain between pages so a large export never piles up in memory
      if (stream.writableNeedDrain) await new Promise((resolve) => stream.once('drain', resolve));
    },
    async end() {
      sheet.commit();
      await book.commit();
      if (!stream.writableFinished) await new Promise((resolve, reject) => (stream.once('finish', resolve), stream.once('error', reject)));
    },
  };
}
