import type { TableDef } from '../schema/catalog.js';
import { COPY_CSV } from '../grammar/media.js';
import type { CsvPage } from './csv-pages.js';
import { ExportError, type PageFormat } from '../client/pages.js';
import { csvColumn } from './writers.js';
import { EDGE_SPACE, nullField } from '../format/csv-dialect.js';
import { copyRange } from '../io/bytes.js';

const QUOTE = 34;
const COMMA = 44;
const LF = 10;
const CR = 13;

/**
 * ASCII whitespace that the CSV dialect quotes at a field's start or end (src/format/csv-dialect.ts);
 * COPY CSV quotes every other field the dialect quotes (a comma, a quote or a line end, the empty
 * string). A module-local name: the hot loop reads it.
 */
const EDGE = EDGE_SPACE;
/** Bytes of output slab to allocate at a time. */
const SLAB = 1 << 20;

/**
 * Rewrites the service's COPY CSV stream (`COPY … TO STDOUT (FORMAT csv, HEADER true)`) into
 * exactly the bytes the CSV page path writes for the same rows (csv-pages.ts), in the CSV dialect
 * (src/format/csv-dialect.ts), piece by piece as it arrives: the header line dropped (the caller
 * writes its own), a field with whitespace at its start or end (which COPY leaves bare) quoted, and a
 * null written as the null token where an empty cell would read back as a column default, or
 * everywhere with `--null`. Values are PostgreSQL's text output either way.
 * Example: `const rw = copyCsvRewriter(table, ['id', 'name']); out(rw.push(chunk)); rw.end();`
 */
export interface CopyCsvRewriter {
  /** The complete rows so far as output bytes; a row cut by the piece's end waits for the next piece. */
  push(chunk: Uint8Array): Uint8Array;
  /** Checks that the stream ended on a row's end. */
  end(): void;
  /** Rows written (the header not counted). */
  readonly rows: number;
  /** With `keyAt`: the key of the first and of the last row written, unquoted (undefined before any). */
  readonly firstKey: string | undefined;
  readonly lastKey: string | undefined;
  /** With `keyAt`: where the first row's output ends, in the output of the push that wrote it. */
  readonly firstRowEnd: number;
}

/** A key field's text: unquoted, quotes undoubled. */
function keyText(buf: Uint8Array, start: number, end: number): string {
  const s = Buffer.from(buf.buffer, buf.byteOffset + start, end - start).toString('utf8');
  return s.charCodeAt(0) === QUOTE ? s.slice(1, -1).replaceAll('""', '"') : s;
}

// Long on purpose: its `push` is the export's hot loop over every byte of a COPY stream, kept in one
// closure so the per-field state stays in locals (split up, it measured slower per 100k rows).
export function copyCsvRewriter(table: TableDef, columns: string[], nullToken: string | undefined, keyAt = -1): CopyCsvRewriter {
  const byName = new Map(table.columns.map((c) => [c.name, c]));
  // the dialect's null: the token where it is not an empty field (src/format/csv-dialect.ts)
  const token = Buffer.from(nullField(true, nullToken));
  const rewrite = columns.map((name) => nullField(csvColumn(name, byName.get(name)).hasDefault!, nullToken) !== '');
  const malformed = (why: string) => new ExportError(`the service's COPY CSV is malformed: ${why}`, 502, 'PGRST000');
  // the part row carried to the next piece is kept at the start of `input`, the piece appended to it
  let input = Buffer.alloc(0);
  let carried = 0;
  // output is appended to a slab of about a megabyte; each push hands out a view of its part
  let slab = Buffer.alloc(0);
  let slabUsed = 0;
  let header = true;
  let rows = 0;
  let firstKey: string | undefined;
  let lastKey: string | undefined;
  let firstRowEnd = 0;

  function push(chunk: Uint8Array): Uint8Array {
    const n = carried + chunk.length;
    if (input.length < n) {
      const bigger = Buffer.allocUnsafe(Math.max(n, input.length * 2, 1 << 17));
      input.copy(bigger, 0, 0, carried);
      input = bigger;
    }
    input.set(chunk, carried);
    const buf = input;
    // this push's output goes to out[start, …): allocations are one per slab, not one per piece
    let out = slab;
    let start = slabUsed;
    if (out.length - start < n + (n >> 2) + 64) {
      out = Buffer.allocUnsafe(Math.max(SLAB, n + (n >> 1) + 64));
      start = 0;
    }
    let w = start;
    /** Makes room for `need` more bytes (a new slab, this push's output so far moved to it). */
    const room = (need: number) => {
      if (w + need <= out.length) return;
      const bigger = Buffer.allocUnsafe(Math.max(SLAB, (w - start + need) * 2));
      out.copy(bigger, 0, start, w);
      w -= start;
      wRow -= start;
      start = 0;
      out = bigger;
    };
    // bytes from `from` on are still to be copied as they are; a row starts at `rowStart` (output `wRow`)
    let from = 0;
    let rowStart = 0;
    let wRow = start;
    let i = 0;
    let col = 0;
    // the key field of the row being read, and of the last complete row
    let keyStart = -1;
    let keyEnd = -1;
    let lastStart = -1;
    let lastEnd = -1;
    rows: for (;;) {
      // a field starts at i
      if (i >= n) break;
      let end: number;
      if (buf[i] === QUOTE) {
        let j = i + 1;
        for (;;) {
          const q = buf.indexOf(QUOTE, j);
          // an unclosed quote, or a quote on the last byte (closing, or the first of a doubled pair): wait for more
          if (q < 0 || q + 1 >= n) break rows;
          if (buf[q + 1] === QUOTE) {
            j = q + 2;
            continue;
          }
          end = q + 1;
          break;
        }
      } else {
        let k = i;
        for (; k < n; k++) {
          const c = buf[k];
          if (c === COMMA || c === LF || c === CR) break;
        }
        if (k >= n) break;
        end = k;
        const quote = end > i && (EDGE[buf[i]] | EDGE[buf[end - 1]]);
        if (end === i) {
          if (rewrite[col]) {
            room(i - from + token.length);
            w = copyRange(buf, from, i, out, w);
            for (let t = 0; t < token.length; t++) out[w++] = token[t];
            from = i;
          }
        } else if (quote) {
          room(end - from + 2);
          w = copyRange(buf, from, i, out, w);
          out[w++] = QUOTE;
          w = copyRange(buf, i, end, out, w);
          out[w++] = QUOTE;
          from = end;
        }
      }
      if (col === keyAt) {
        keyStart = i;
        keyEnd = end!;
      }
      i = end!;
      const c = buf[i];
      if (c === COMMA) {
        col++;
        i++;
        continue;
      }
      if (c === CR) {
        // COPY writes `\n`; a `\r\n` line end is read too, and written as `\n`
        if (i + 1 >= n) break;
        if (buf[i + 1] !== LF) throw malformed(`a carriage return outside quotes (row ${rows + 1})`);
        room(i - from + 1);
        w = copyRange(buf, from, i, out, w);
        from = i + 1;
        i++;
      }
      if (buf[i] !== LF) throw malformed(`text after a closing quote (row ${rows + 1})`);
      i++;
      col = 0;
      if (header) {
        // the service's header line: the caller writes the same names itself
        header = false;
        from = i;
        w = wRow;
      } else rows++;
      rowStart = i;
      room(rowStart - from);
      w = copyRange(buf, from, rowStart, out, w);
      from = rowStart;
      wRow = w;
      if (keyAt >= 0 && rows > 0) {
        if (firstKey === undefined) {
          firstKey = keyText(buf, keyStart, keyEnd);
          firstRowEnd = w - start;
        }
        lastStart = keyStart;
        lastEnd = keyEnd;
      }
    }
    if (lastStart >= 0) lastKey = keyText(buf, lastStart, lastEnd);
    carried = n - rowStart;
    if (carried > 0 && rowStart > 0) input.copyWithin(0, rowStart, n);
    slab = out;
    slabUsed = wRow;
    return out.subarray(start, wRow);
  }

  return {
    push,
    end() {
      if (carried > 0) throw malformed('the last row has no line end (the transfer was cut off?)');
      if (header) throw malformed('no header line');
    },
    get rows() {
      return rows;
    },
    get firstKey() {
      return firstKey;
    },
    get lastKey() {
      return lastKey;
    },
    get firstRowEnd() {
      return firstRowEnd;
    },
  };
}

/**
 * COPY pages: what a service that caps COPY reads (PGlite's 50,000 rows, `--max-rows`) is asked
 * for instead of one stream, by the same keyset/offset paging as the CSV pages (pages.ts), each
 * page rewritten whole into the CSV pages' bytes.
 */
export function copyPageFormat(table: TableDef, columns: string[], nullToken: string | undefined): PageFormat<CsvPage> {
  return {
    accept: COPY_CSV,
    bytes: true,
    parse(body, pk, _stripKey, overlap) {
      const keyAt = pk ? columns.indexOf(pk) : -1;
      const rw = copyCsvRewriter(table, columns, nullToken, keyAt);
      let bytes: Uint8Array = rw.push(typeof body === 'string' ? Buffer.from(body) : body);
      rw.end();
      let count = rw.rows;
      let firstKey: string | undefined;
      if (overlap && count > 0) {
        // the first row repeats the last one of the page before: left out, its key checked by the caller
        firstKey = rw.firstKey;
        bytes = bytes.subarray(rw.firstRowEnd);
        count--;
      }
      return { page: { bytes, count }, count, lastKey: keyAt >= 0 ? rw.lastKey ?? null : null, firstKey };
    },
  };
}
