/**
 * The CSV dialect: the one way everything we write as CSV is written (`list -o csv`, `export`,
 * both of export's byte paths over the service's COPY and CSV pages, the rejects file's own
 * columns), so the same rows give the same bytes and read back through
 * `catalog <collection> import` to the same rows.
 *
 * - Fields are separated by `,` (a rejects file: the input's delimiter); every line, the last
 *   too, ends in `\n`; the first line is the header, the column names written as fields. A
 *   result without rows is the header alone.
 * - A field is quoted (`"…"`, a quote doubled) when it holds the delimiter, a quote, CR or LF
 *   (RFC 4180), when it is empty (so that `""`, an empty string, differs from an empty field),
 *   or when it starts or ends with ASCII whitespace (space, tab, VT, FF: readers that trim bare
 *   fields keep it). Nothing else is quoted, so files stay readable and diff cleanly. Export's
 *   byte paths reach it from PostgreSQL's bytes: COPY CSV already quotes all but edge
 *   whitespace; the record literals of PostgREST's `text/csv` quote more, and those quotes are
 *   dropped.
 * - An empty string is `""`. A null is an empty unquoted field where an empty cell reads back
 *   as null (a column without a default), else the null token, `\N` by default (an empty cell
 *   would take the default: '' or false); with `--null` every null is that token. The token is
 *   written bare unless it holds a comma, a quote or a line end (a backslash does not quote it).
 * - Values are PostgreSQL's text output, as COPY writes them: booleans `t`/`f`, timestamps
 *   `2024-01-15 12:00:00.197+00`, jsonb as PostgreSQL prints it (`{"a": 1, "b": [1, 2]}`),
 *   everything else as the service sent it. Rows read as JSON are turned into that text here
 *   (cheap, per value; for columns of a known type); the byte paths get it from the database as
 *   it is, so the hot path never re-renders a value.
 */

import { DEFAULT_NULL_TOKEN } from '../schema/conventions.js';

/** ASCII whitespace that makes a field quoted at its start or end: space, tab, VT, FF (CR and LF quote it anywhere). */
export const EDGE_SPACE = new Uint8Array(256);
for (const c of [32, 9, 11, 12]) EDGE_SPACE[c] = 1;

const NEEDS_QUOTES = /["\r\n]|^[ \t\v\f]|[ \t\v\f]$/;
const TOKEN_NEEDS_QUOTES = /[",\r\n]/;

/** The header's and line's field separator. */
export const CSV_DELIMITER = ',';
/** Every line's end. */
export const CSV_EOL = '\n';

/**
 * One field of text, quoted when the dialect says so.
 * @example csvField(' Spaced ') // '" Spaced "'
 * @example csvField('') // '""'
 * @example csvField('a;b', ';') // '"a;b"'
 */
export function csvField(text: string, delimiter = CSV_DELIMITER): string {
  const quote = text === '' || NEEDS_QUOTES.test(text) || text.includes(delimiter);
  return quote ? `"${text.replaceAll('"', '""')}"` : text;
}

/**
 * The null token as a field: bare unless it holds a comma, a quote or a line end.
 * @example csvToken('\\N') // '\\N'
 */
export function csvToken(token: string): string {
  return TOKEN_NEEDS_QUOTES.test(token) ? `"${token.replaceAll('"', '""')}"` : token;
}

/**
 * What a null is written as in a column: the token given (`--null`), else `\N` where an empty
 * cell would take the column's default, else an empty field.
 * @example nullField(true, undefined) // '\\N'
 */
export function nullField(hasDefault: boolean, nullToken: string | undefined): string {
  if (nullToken !== undefined) return csvToken(nullToken);
  return hasDefault ? csvToken(DEFAULT_NULL_TOKEN) : '';
}

/** One line from fields already written (`csvField`), `\n` included; a lone empty field is `""` (a blank line would be skipped). */
export function csvLine(fields: string[], delimiter = CSV_DELIMITER): string {
  if (fields.length === 1 && fields[0] === '') return `""${CSV_EOL}`;
  return fields.join(delimiter) + CSV_EOL;
}

/** The header line for column names. */
export function csvHeader(columns: string[], delimiter = CSV_DELIMITER): string {
  return csvLine(columns.map((c) => csvField(c, delimiter)), delimiter);
}

/**
 * A JSON value as PostgreSQL prints a jsonb: `": "` after a key, `", "` between items. Keys come
 * in `keysOf`'s order: the object's own by default (a value read from the database is in jsonb's
 * order already), `jsonbKeys` for a value from elsewhere.
 * @example jsonbText({ a: [1, 2], b: null }) // '{"a": [1, 2], "b": null}'
 */
export function jsonbText(v: unknown, keysOf: (o: object) => string[] = Object.keys): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) return `[${v.map((x) => jsonbText(x, keysOf)).join(', ')}]`;
  const o = v as Record<string, unknown>;
  return `{${keysOf(o)
    .filter((k) => o[k] !== undefined)
    .map((k) => `${JSON.stringify(k)}: ${jsonbText(o[k], keysOf)}`)
    .join(', ')}}`;
}

/**
 * An object's keys in the order a jsonb keeps them: shorter first, then by their UTF-8 bytes.
 * @example jsonbKeys({ name: 'x', id: 1, '10': 2 }) // ['10', 'id', 'name']
 */
export function jsonbKeys(o: object): string[] {
  return Object.keys(o).sort((a, b) => Buffer.byteLength(a) - Buffer.byteLength(b) || Buffer.compare(Buffer.from(a), Buffer.from(b)));
}

const ISO_TIMESTAMP = /^(\d{4,}-\d\d-\d\d)T(\d\d:\d\d:\d\d(?:\.\d+)?)(?:([+-]\d\d):(\d\d)(?::(\d\d))?)?$/;

/**
 * A timestamp as JSON carries it (ISO 8601) in PostgreSQL's text form; other text as it is.
 * @example timestampText('2024-01-15T12:00:00.197+00:00') // '2024-01-15 12:00:00.197+00'
 */
export function timestampText(s: string): string {
  const m = ISO_TIMESTAMP.exec(s);
  if (!m) return s;
  const [, date, time, hh, mm, ss] = m;
  const zone = hh === undefined ? '' : `${hh}${mm !== '00' || ss ? `:${mm}` : ''}${ss ? `:${ss}` : ''}`;
  return `${date} ${time}${zone}`;
}

/**
 * A non-null value read as JSON in PostgreSQL's text form (see above), unquoted. Only a column
 * whose type is known is turned into it; a value of no known column (an embedded resource, rows
 * that are not a table's) keeps its JSON form: objects as compact JSON, booleans true/false.
 * @example valueText(true, 'boolean') // 't'
 */
export function valueText(v: unknown, type?: string): string {
  if (type === 'json' || type === 'jsonb') return jsonbText(v);
  if (typeof v === 'string') return type?.startsWith('timestamp') ? timestampText(v) : v;
  if (typeof v === 'boolean') return type === 'boolean' ? (v ? 't' : 'f') : String(v);
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

/** What the dialect needs to know of a column. */
export interface CsvColumn {
  name: string;
  /** PostgreSQL type name, when known. */
  type?: string;
  /** Whether an empty cell would take a default (then a null is written as the null token). */
  hasDefault?: boolean;
}

/**
 * Writes rows read as JSON objects as lines of the dialect.
 * @example csvRows([{ name: 'name', type: 'text', hasDefault: true }])([{ name: null }]) // '\\N\n'
 */
export function csvRows(columns: CsvColumn[], nullToken?: string, delimiter = CSV_DELIMITER): (rows: Array<Record<string, unknown>>) => string {
  const nulls = columns.map((c) => nullField(Boolean(c.hasDefault), nullToken));
  return (rows) => {
    let out = '';
    for (const r of rows) {
      const fields = columns.map((c, i) => {
        const v = r[c.name];
        return v === null || v === undefined ? nulls[i] : csvField(valueText(v, c.type), delimiter);
      });
      out += csvLine(fields, delimiter);
    }
    return out;
  };
}
