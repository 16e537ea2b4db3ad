import type { Query } from '../grammar/types.js';
import type { TableDef } from '../schema/catalog.js';
import { ExportError, type PageFormat, pagingAddsKey } from '../client/pages.js';
import { csvColumn } from './writers.js';
import { EDGE_SPACE, nullField } from '../format/csv-dialect.js';
import { copyRange } from '../io/bytes.js';
import { COMMA, CR, CsvTokenizer, ESCAPED, keyText, LF, QUOTED, TOKENS_OK } from '../format/csv-tokens.js';


/** A CSV page to write out (header dropped, `\n` after every row) and its row count. */
export interface CsvPage {
  bytes: Uint8Array;
  count: number;
}

/**
 * Whether a CSV export can take the service's own CSV pages instead of JSON rows: plain columns
 * only (no embeds, casts, JSON paths or aliases) and no key added just for paging.
 */
export function csvPassThrough(table: TableDef, query: Query): boolean {
  const items = query.select;
  const plain = !items || items.every((i) => i.type === 'star' || (i.type === 'field' && i.field.jsonPath.length === 0 && !i.alias && !i.cast));
  return plain && !pagingAddsKey(table, query);
}

const NULL_AT = 0;
const DROP_AT = 1;

/** Whether text[start, end) holds a byte that makes the CSV dialect quote a field anywhere in it: a comma, CR or LF. */
function needsQuotes(text: Buffer, start: number, end: number): boolean {
  for (let k = start; k < end; k++) {
    const c = text[k];
    if (c === COMMA || c === LF || c === CR) return true;
  }
  return false;
}

/** `\\` → `\` everywhere (record literals double a backslash inside quotes); the same buffer when there is none. */
function undoubleBackslashes(b: Buffer): Buffer {
  let at = b.indexOf('\\\\');
  if (at < 0) return b;
  const out = Buffer.allocUnsafe(b.length);
  let n = 0;
  let from = 0;
  while (at >= 0) {
    n += b.copy(out, n, from, at + 1);
    from = at + 2;
    at = b.indexOf('\\\\', from);
  }
  n += b.copy(out, n, from);
  return out.subarray(0, n);
}

/** What reading a page found: the edits to make, in order of position (a null token goes in, or a quote is dropped), rows, and keys. */
interface PageScan {
  edits: number[];
  ops: number[];
  inserts: number;
  rows: number;
  /** With overlap: where the second row starts, and the first row's key. */
  skipTo: number;
  firstKey: string | undefined;
  lastKey: string;
}

/**
 * Reads a page's rows (`text`, header gone, backslashes undoubled) with the CSV tokenizer
 * (src/format/csv-tokens.ts), noting the edits that make them the dialect's CSV.
 */
function scanPage(text: Buffer, rewrite: boolean[], keyAt: number, overlap: boolean): PageScan {
  const t = new CsvTokenizer();
  const anyRewrite = rewrite.some(Boolean);
  const scan: PageScan = { edits: [], ops: [], inserts: 0, rows: 0, skipTo: 0, firstKey: undefined, lastKey: '' };
  const n = text.length;
  let keyStart = 0;
  let keyEnd = 0;
  for (let p = 0; p < n; p = t.next) {
    if (t.read(text, p, n, true) !== TOKENS_OK) throw malformed(`${t.problem} (row ${scan.rows + 1})`);
    const { starts, ends, flags } = t;
    for (let f = 0; f < t.count; f++) {
      const a = starts[f];
      const b = ends[f];
      if (flags[f] & QUOTED) {
        // a record literal quotes more than the dialect does (spaces, `\`, parentheses): drop quotes it does not need
        if (!(flags[f] & ESCAPED) && b - a > 2 && !EDGE_SPACE[text[a + 1]] && !EDGE_SPACE[text[b - 2]] && !needsQuotes(text, a + 1, b - 1)) {
          scan.edits.push(a, b - 1);
          scan.ops.push(DROP_AT, DROP_AT);
        }
      } else if (a === b && anyRewrite && rewrite[f]) {
        scan.edits.push(a);
        scan.ops.push(NULL_AT);
        scan.inserts++;
      }
    }
    if (keyAt >= 0 && keyAt < t.count) {
      keyStart = starts[keyAt];
      keyEnd = ends[keyAt];
    }
    if (++scan.rows === 1 && overlap) {
      scan.firstKey = keyText(text, keyStart, keyEnd);
      scan.skipTo = t.next;
    }
  }
  scan.lastKey = keyText(text, keyStart, keyEnd);
  return scan;
}

/** The page's bytes from `skipTo` on with the edits made and a `\n` after the last row. */
function applyEdits(text: Buffer, scan: PageScan, token: Buffer): Uint8Array {
  const n = text.length;
  const { edits, ops, skipTo } = scan;
  const lf = text[n - 1] === LF ? 0 : 1;
  if (skipTo >= n) return new Uint8Array(0);
  if (!edits.length && !lf) return text.subarray(skipTo);
  const out = Buffer.allocUnsafe(n - skipTo + scan.inserts * token.length + lf);
  let w = 0;
  let from = skipTo;
  for (let e = 0; e < edits.length; e++) {
    const at = edits[e];
    if (at < skipTo) continue;
    w = copyRange(text, from, at, out, w);
    if (ops[e] === NULL_AT) {
      w = copyRange(token, 0, token.length, out, w);
      from = at;
    } else from = at + 1;
  }
  w = copyRange(text, from, n, out, w);
  if (lf) out[w++] = LF;
  return out.subarray(0, w);
}

const malformed = (why: string) => new ExportError(`the service's CSV page is malformed: ${why}`, 502, 'PGRST000');

/**
 * Reads the service's `text/csv` pages (PostgREST writes each row as a PostgreSQL record literal)
 * into CSV that import reads back to the same rows, on the bytes as received: rows never become
 * objects and the page is never decoded to a string (decoding and re-encoding 1 MB of UTF-8 cost
 * more than everything else the client does with it).
 * - record literals double backslashes inside quoted fields (and a field with a backslash is
 *   always quoted), so `\\` → `\` everywhere gives plain CSV;
 * - record literals quote more than the CSV dialect (src/format/csv-dialect.ts): a field with a
 *   space, `\` or a parenthesis inside; those quotes are dropped, so the bytes are the COPY path's;
 * - a null is an unquoted empty field (an empty string is `""`): where an empty cell would read
 *   back as a non-null column default, or when `--null` is given, it becomes the null token,
 *   exactly as the JSON path's writer does.
 * Booleans come out as t/f, timestamps and jsonb in PostgreSQL's text form (as `psql \copy`
 * writes them); import reads both.
 */
export function csvPageFormat(table: TableDef, columns: string[], nullToken: string | undefined): PageFormat<CsvPage> {
  const byName = new Map(table.columns.map((c) => [c.name, c]));
  // the dialect's null: the token where it is not an empty field (src/format/csv-dialect.ts)
  const token = Buffer.from(nullField(true, nullToken));
  const rewrite = columns.map((name) => nullField(csvColumn(name, byName.get(name)).hasDefault!, nullToken) !== '');
  return {
    accept: 'text/csv',
    bytes: true,
    parse(body, pk, _stripKey, overlap) {
      const raw = typeof body === 'string' ? Buffer.from(body) : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
      const nl = raw.indexOf(LF);
      if (nl < 0 || nl === raw.length - 1) return { page: { bytes: new Uint8Array(0), count: 0 }, count: 0, lastKey: null, firstKey: undefined };
      const text = undoubleBackslashes(raw.subarray(nl + 1));
      const keyAt = pk ? columns.indexOf(pk) : -1;
      const scan = scanPage(text, rewrite, keyAt, overlap === true);
      const count = overlap ? scan.rows - 1 : scan.rows;
      return { page: { bytes: applyEdits(text, scan, token), count }, count, lastKey: keyAt >= 0 ? scan.lastKey : null, firstKey: scan.firstKey };
    },
  };
}
