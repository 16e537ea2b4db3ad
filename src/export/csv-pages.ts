import type { Query } from '../grammar/types.js';
import type { TableDef } from '../schema/catalog.js';
import { ExportError, type PageFormat, pagingAddsKey } from '../client/pages.js';
import { csvColumn } from './writers.js';
import { EDGE_SPACE, nullField } from '../format/csv-dialect.js';
import { copyRange } from '../io/bytes.js';

const QUOTE = 34;
const COMMA = 44;
const LF = 10;

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

const CR = 13;
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

/** A key field's value: unquoted, quotes undoubled. */
function keyText(text: Buffer, start: number, end: number): string {
  const s = text.toString('utf8', start, end);
  return s.charCodeAt(0) === QUOTE ? s.slice(1, -1).replaceAll('""', '"') : s;
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
// Long on purpose: `parse` is the CSV-page export's byte loop, one closure over its per-field state.
export function csvPageFormat(table: TableDef, columns: string[], nullToken: string | undefined): PageFormat<CsvPage> {
  const byName = new Map(table.columns.map((c) => [c.name, c]));
  // the dialect's null: the token where it is not an empty field (src/format/csv-dialect.ts)
  const token = Buffer.from(nullField(true, nullToken));
  const rewrite = columns.map((name) => nullField(csvColumn(name, byName.get(name)).hasDefault!, nullToken) !== '');
  const anyRewrite = rewrite.some(Boolean);
  const malformed = (why: string) => new ExportError(`the service's CSV page is malformed: ${why}`, 502, 'PGRST000');
  return {
    accept: 'text/csv',
    bytes: true,
    parse(body, pk, _stripKey, overlap) {
      const raw = typeof body === 'string' ? Buffer.from(body) : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
      const nl = raw.indexOf(LF);
      if (nl < 0 || nl === raw.length - 1) return { page: { bytes: new Uint8Array(0), count: 0 }, count: 0, lastKey: null, firstKey: undefined };
      const text = undoubleBackslashes(raw.subarray(nl + 1));
      const keyAt = pk ? columns.indexOf(pk) : -1;
      const n = text.length;
      // edits, in order of position in `text`: a null token goes in (NULL_AT) or a quote is dropped (DROP_AT)
      const edits: number[] = [];
      const ops: number[] = [];
      let inserts = 0;
      let col = 0;
      let rows = 0;
      let keyStart = 0;
      let keyEnd = 0;
      // with overlap: where the second row starts, and the first row's key
      let skipTo = 0;
      let firstKey: string | undefined;
      let i = 0;
      for (;;) {
        // a field starts at i
        let end: number;
        if (i < n && text[i] === QUOTE) {
          let j = i + 1;
          let doubled = false;
          for (;;) {
            const q = text.indexOf(QUOTE, j);
            if (q < 0) throw malformed(`a quoted field is not closed (row ${rows + 1})`);
            if (text[q + 1] === QUOTE) {
              doubled = true;
              j = q + 2;
              continue;
            }
            end = q + 1;
            break;
          }
          // a record literal quotes more than the dialect does (spaces, `\`, parentheses): drop quotes it does not need
          if (!doubled && end - i > 2 && !EDGE_SPACE[text[i + 1]] && !EDGE_SPACE[text[end - 2]] && !needsQuotes(text, i + 1, end - 1)) {
            edits.push(i, end - 1);
            ops.push(DROP_AT, DROP_AT);
          }
        } else {
          end = i;
          while (end < n) {
            const c = text[end];
            if (c === COMMA || c === LF) break;
            end++;
          }
          if (end === i && anyRewrite && rewrite[col]) {
            edits.push(i);
            ops.push(NULL_AT);
            inserts++;
          }
        }
        if (col === keyAt) {
          keyStart = i;
          keyEnd = end;
        }
        i = end;
        if (i >= n) {
          if (++rows === 1 && overlap) {
            firstKey = keyText(text, keyStart, keyEnd);
            skipTo = n;
          }
          break;
        }
        const c = text[i];
        if (c === COMMA) {
          col++;
          i++;
          continue;
        }
        if (c !== LF) throw malformed(`text after a closing quote (row ${rows + 1})`);
        col = 0;
        i++;
        if (++rows === 1 && overlap) {
          firstKey = keyText(text, keyStart, keyEnd);
          skipTo = i;
        }
        if (i >= n) break;
      }
      const lf = text[n - 1] === LF ? 0 : 1;
      let bytes: Uint8Array = text.subarray(skipTo);
      if (skipTo >= n) bytes = new Uint8Array(0);
      else if (edits.length || lf) {
        const out = Buffer.allocUnsafe(n - skipTo + inserts * token.length + lf);
        let w = 0;
        let from = skipTo;
        for (let e = 0; e < edits.length; e++) {
          const at = edits[e];
          if (at < skipTo) continue;
          w = copyRange(text, from, at, out, w);
          if (ops[e] === NULL_AT) {
            for (let k = 0; k < token.length; k++) out[w++] = token[k];
            from = at;
          } else from = at + 1;
        }
        w = copyRange(text, from, n, out, w);
        if (lf) out[w++] = LF;
        bytes = out.subarray(0, w);
      }
      const count = overlap ? rows - 1 : rows;
      const lastKey = keyAt >= 0 ? keyText(text, keyStart, keyEnd) : null;
      return { page: { bytes, count }, count, lastKey, firstKey };
    },
  };
}
