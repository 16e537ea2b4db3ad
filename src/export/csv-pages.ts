import type { Query } from '../grammar/types.js';
import type { TableDef } from '../schema/catalog.js';
import { DEFAULT_NULL_TOKEN } from '../import/coerce.js';
import { knownDefault } from '../import/existing.js';
import { ExportError, type PageFormat, pagingAddsKey } from './pages.js';
import { csvCell } from './writers.js';

const QUOTE = 34;
const COMMA = 44;
const LF = 10;

/** A CSV page as text to write out (header dropped, `\n` after every row) and its row count. */
export interface CsvPage {
  text: string;
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

/**
 * Reads the service's `text/csv` pages (PostgREST writes each row as a PostgreSQL record literal)
 * into CSV that import reads back to the same rows, without turning rows into objects:
 * - record literals double backslashes inside quoted fields (and a field with a backslash is
 *   always quoted), so `\\` → `\` everywhere gives plain CSV;
 * - a null is an unquoted empty field (an empty string is `""`): where an empty cell would read
 *   back as a non-null column default, or when `--null` is given, it becomes the null token,
 *   exactly as the JSON path's writer does.
 * Booleans come out as t/f, timestamps and jsonb in PostgreSQL's text form (as `psql \copy`
 * writes them); import reads both.
 */
export function csvPageFormat(table: TableDef, columns: string[], nullToken: string | undefined): PageFormat<CsvPage> {
  const byName = new Map(table.columns.map((c) => [c.name, c]));
  const token = csvCell(nullToken ?? DEFAULT_NULL_TOKEN);
  const rewrite = columns.map((name) => {
    const col = byName.get(name);
    return nullToken !== undefined || (col !== undefined && knownDefault(col) !== null);
  });
  const anyRewrite = rewrite.some(Boolean);
  const malformed = (why: string) => new ExportError(`the service's CSV page is malformed: ${why}`, 502, 'PGRST000');
  return {
    accept: 'text/csv',
    parse(body, pk) {
      const nl = body.indexOf('\n');
      if (nl < 0 || nl === body.length - 1) return { page: { text: '', count: 0 }, count: 0, lastKey: null };
      let text = body.slice(nl + 1);
      if (text.includes('\\')) text = text.replaceAll('\\\\', '\\');
      const keyAt = pk ? columns.indexOf(pk) : -1;
      const n = text.length;
      let out = '';
      let from = 0;
      let col = 0;
      let rows = 0;
      let keyStart = 0;
      let keyEnd = 0;
      let i = 0;
      for (;;) {
        // a field starts at i
        let end: number;
        if (i < n && text.charCodeAt(i) === QUOTE) {
          let j = i + 1;
          for (;;) {
            const q = text.indexOf('"', j);
            if (q < 0) throw malformed(`a quoted field is not closed (row ${rows + 1})`);
            if (text.charCodeAt(q + 1) === QUOTE) {
              j = q + 2;
              continue;
            }
            end = q + 1;
            break;
          }
        } else {
          end = i;
          while (end < n) {
            const c = text.charCodeAt(end);
            if (c === COMMA || c === LF) break;
            end++;
          }
          if (end === i && anyRewrite && rewrite[col]) {
            out += text.slice(from, i) + token;
            from = i;
          }
        }
        if (col === keyAt) {
          keyStart = i;
          keyEnd = end;
        }
        i = end;
        if (i >= n) {
          rows++;
          break;
        }
        const c = text.charCodeAt(i);
        if (c === COMMA) {
          col++;
          i++;
          continue;
        }
        if (c !== LF) throw malformed(`text after a closing quote (row ${rows + 1})`);
        rows++;
        col = 0;
        i++;
        if (i >= n) break;
      }
      out += from === 0 ? text : text.slice(from);
      if (text.charCodeAt(n - 1) !== LF) out += '\n';
      let lastKey: string | null = null;
      if (keyAt >= 0) {
        lastKey = text.slice(keyStart, keyEnd);
        if (lastKey.charCodeAt(0) === QUOTE) lastKey = lastKey.slice(1, -1).replaceAll('""', '"');
      }
      return { page: { text: out, count: rows }, count: rows, lastKey };
    },
  };
}
