import { csvField as dialectField, csvLine, nullField, valueText } from './csv-dialect.js';
import { cellText, type Row, type RowWriter, type WriterOptions } from './types.js';

/**
 * One CSV field of a value, in the one CSV dialect (csv-dialect.ts): null is an empty field, an
 * empty string `""`, text quoted when it is empty or holds a quote, comma, backslash,
 * parenthesis or whitespace.
 * @example csvField('a,"b"') // '"a,""b"""'
 */
export function csvField(value: unknown, type?: string): string {
  if (value === null || value === undefined) return '';
  return dialectField(valueText(value, type));
}

/**
 * One TSV field: backslash, tab, newline and carriage return escaped as `\\ \t \n \r` (the
 * PostgreSQL text-format escapes), so every row stays on one line; null is an empty field.
 * @example tsvField('a\tb') // 'a\\tb'
 */
export function tsvField(value: unknown): string {
  return cellText(value).replace(/[\\\t\n\r]/g, (c) => ({ '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' })[c] as string);
}

function delimitedWriter(opts: WriterOptions, sep: string, field: (v: unknown, column: string) => string, head: (name: string) => string): RowWriter {
  // The header comes from the first row's keys (so nothing the service sends is dropped); the
  // known columns only head an empty result.
  let columns: string[] | null = null;
  const line = (cells: string[]) => opts.out.write(sep === ',' ? csvLine(cells) : `${cells.join(sep)}\n`);
  return {
    async write(row: Row) {
      if (!columns) {
        columns = Object.keys(row);
        await line(columns.map(head));
      }
      await line(columns.map((c) => field(row[c], c)));
    },
    async end() {
      if (!columns && opts.columns) await line(opts.columns.map(head));
    },
  };
}

/**
 * CSV with a header line (from the first row's keys or the known columns), in the dialect
 * export writes: a null is `\\N` in a column with a default (`columnDefaults`), else empty.
 */
export function csvWriter(opts: WriterOptions): RowWriter {
  const types = opts.columnTypes ?? {};
  const defaults = opts.columnDefaults ?? {};
  const field = (v: unknown, column: string) =>
    v === null || v === undefined ? nullField(defaults[column] !== undefined, undefined) : dialectField(valueText(v, types[column]));
  return delimitedWriter(opts, ',', field, (h) => dialectField(h));
}

/** TSV with a header line. */
export function tsvWriter(opts: WriterOptions): RowWriter {
  return delimitedWriter(opts, '\t', (v) => tsvField(v), tsvField);
}
