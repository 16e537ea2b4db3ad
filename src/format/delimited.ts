import { csvField as dialectField, csvHeader, csvRows, valueText } from './csv-dialect.js';
import { cellText, type PageWriter, type Row, type WriterOptions } from './types.js';

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

/**
 * A header line, then lines of rows a page at a time. The header is the known columns with
 * `fixedColumns` (export), else the first row's keys (so nothing the service sends is dropped),
 * the known columns heading only an empty result.
 */
function delimitedWriter(opts: WriterOptions, head: (columns: string[]) => string, lines: (columns: string[]) => (rows: Row[]) => string): PageWriter {
  let columns: string[] | null = opts.fixedColumns && opts.columns ? opts.columns : null;
  let render: ((rows: Row[]) => string) | null = null;
  const start = async (cols: string[]) => {
    columns = cols;
    render = lines(cols);
    await opts.out.write(head(cols));
  };
  return {
    async write(rows) {
      if (!render) {
        if (!columns && !rows.length) return;
        await start(columns ?? Object.keys(rows[0]));
      }
      if (rows.length) await opts.out.write(render!(rows));
    },
    async end() {
      if (!render && (columns ?? opts.columns)) await start(columns ?? opts.columns!);
    },
  };
}

/**
 * CSV in the one dialect (src/format/csv-dialect.ts): values in PostgreSQL's text form for
 * columns of a known type; a null is `\\N` in a column with a default (`columnDefaults`), else
 * empty, or the `--null` token everywhere.
 */
export function csvWriter(opts: WriterOptions): PageWriter {
  const types = opts.columnTypes ?? {};
  const defaults = opts.columnDefaults ?? {};
  const delimiter = opts.delimiter;
  return delimitedWriter(
    opts,
    (columns) => csvHeader(columns, delimiter),
    (columns) => csvRows(columns.map((name) => ({ name, type: types[name], hasDefault: defaults[name] !== undefined })), opts.nullToken, delimiter),
  );
}

/** TSV with a header line. */
export function tsvWriter(opts: WriterOptions): PageWriter {
  const line = (cells: string[]) => `${cells.join('\t')}\n`;
  return delimitedWriter(
    opts,
    (columns) => line(columns.map(tsvField)),
    (columns) => (rows) => rows.map((r) => line(columns.map((c) => tsvField(r[c])))).join(''),
  );
}
