import { cellText, type Row, type RowWriter, type WriterOptions } from './types.js';

/**
 * One CSV field (RFC 4180): quoted when it holds a comma, quote, CR or LF, or starts/ends with
 * space; an empty string is `""` so that it differs from null (an empty field), as PostgreSQL's
 * COPY does.
 * @example csvField('a,"b"') // '"a,""b"""'
 */
export function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text = cellText(value);
  if (text === '') return '""';
  return /[",\r\n]|^\s|\s$/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/**
 * One TSV field: backslash, tab, newline and carriage return escaped as `\\ \t \n \r` (the
 * PostgreSQL text-format escapes), so every row stays on one line; null is an empty field.
 * @example tsvField('a\tb') // 'a\\tb'
 */
export function tsvField(value: unknown): string {
  return cellText(value).replace(/[\\\t\n\r]/g, (c) => ({ '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' })[c] as string);
}

function delimitedWriter(opts: WriterOptions, sep: string, field: (v: unknown) => string, head: (name: string) => string): RowWriter {
  // The header comes from the first row's keys (so nothing the service sends is dropped); the
  // known columns only head an empty result.
  let columns: string[] | null = null;
  const line = (cells: string[]) => opts.out.write(`${cells.join(sep)}\n`);
  return {
    async write(row: Row) {
      if (!columns) {
        columns = Object.keys(row);
        await line(columns.map(head));
      }
      await line(columns.map((c) => field(row[c])));
    },
    async end() {
      if (!columns && opts.columns) await line(opts.columns.map(head));
    },
  };
}

/** CSV with a header line (from the first row's keys or the known columns). */
export function csvWriter(opts: WriterOptions): RowWriter {
  return delimitedWriter(opts, ',', csvField, (h) => csvField(h));
}

/** TSV with a header line. */
export function tsvWriter(opts: WriterOptions): RowWriter {
  return delimitedWriter(opts, '\t', tsvField, tsvField);
}
