import type { TableDef } from '../schema/catalog.js';
import { COPY_CSV } from '../grammar/media.js';
import type { CsvPage } from './csv-pages.js';
import { ExportError, type PageFormat } from '../client/pages.js';
import { csvColumn } from './writers.js';
import { EDGE_SPACE, nullField } from '../format/csv-dialect.js';
import { copyRange } from '../io/bytes.js';
import { CsvTokenizer, keyText, LF, QUOTE, QUOTED, TOKENS_MORE, TOKENS_OK } from '../format/csv-tokens.js';

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

/**
 * The rewriter: records found by the CSV tokenizer (src/format/csv-tokens.ts), each row's fields
 * edited in place in the output (a quote pair around edge whitespace, the null token in an empty
 * field), the unchanged stretches between edits copied whole.
 */
class Rewriter implements CopyCsvRewriter {
  rows = 0;
  firstKey: string | undefined;
  lastKey: string | undefined;
  firstRowEnd = 0;
  private readonly tokens = new CsvTokenizer();
  // the part row carried to the next piece is kept at the start of `input`, the piece appended to it
  private input = Buffer.alloc(0);
  private carried = 0;
  private header = true;
  // output is appended to a slab of about a megabyte; each push hands out a view of its part
  private slab = Buffer.alloc(0);
  private slabUsed = 0;
  // this push's output: out[start, w), complete rows up to wRow
  private out = Buffer.alloc(0);
  private start = 0;
  private w = 0;
  private wRow = 0;

  constructor(
    /** The null token's bytes, and which columns take it for an empty field. */
    private readonly token: Buffer,
    private readonly rewrite: boolean[],
    private readonly keyAt: number,
  ) {}

  push(chunk: Uint8Array): Uint8Array {
    const buf = this.take(chunk);
    const n = this.carried + chunk.length;
    this.begin(n);
    const t = this.tokens;
    // bytes from `from` on are still to be copied as they are; the next row starts at `rowStart`
    let from = 0;
    let rowStart = 0;
    let lastStart = -1;
    let lastEnd = -1;
    while (rowStart < n) {
      const status = t.read(buf, rowStart, n, false);
      if (status === TOKENS_MORE) break;
      if (status !== TOKENS_OK) throw malformed(`${t.problem} (row ${this.rows + 1})`);
      if (this.header) {
        // the service's header line: the caller writes the same names itself
        this.header = false;
        from = rowStart = t.next;
        continue;
      }
      from = this.row(buf, from);
      rowStart = t.next;
      this.room(rowStart - from);
      this.w = copyRange(buf, from, rowStart, this.out, this.w);
      from = rowStart;
      this.wRow = this.w;
      this.rows++;
      if (this.keyAt >= 0 && this.keyAt < t.count) {
        if (this.firstKey === undefined) {
          this.firstKey = keyText(buf, t.starts[this.keyAt], t.ends[this.keyAt]);
          this.firstRowEnd = this.w - this.start;
        }
        lastStart = t.starts[this.keyAt];
        lastEnd = t.ends[this.keyAt];
      }
    }
    if (lastStart >= 0) this.lastKey = keyText(buf, lastStart, lastEnd);
    this.carried = n - rowStart;
    if (this.carried > 0 && rowStart > 0) this.input.copyWithin(0, rowStart, n);
    this.slab = this.out;
    this.slabUsed = this.wRow;
    return this.out.subarray(this.start, this.wRow);
  }

  end(): void {
    if (this.carried > 0) throw malformed('the last row has no line end (the transfer was cut off?)');
    if (this.header) throw malformed('no header line');
  }

  /** The row the tokenizer read, its edits written (the bytes before each from `from` on): where the bytes still to copy start. */
  private row(buf: Buffer, from: number): number {
    const t = this.tokens;
    const { starts, ends, flags } = t;
    for (let f = 0; f < t.count; f++) {
      if (flags[f] & QUOTED) continue;
      const a = starts[f];
      const b = ends[f];
      if (a === b) {
        if (!this.rewrite[f]) continue;
        this.room(a - from + this.token.length);
        this.w = copyRange(buf, from, a, this.out, this.w);
        this.w = copyRange(this.token, 0, this.token.length, this.out, this.w);
        from = a;
      } else if (EDGE[buf[a]] | EDGE[buf[b - 1]]) {
        this.room(b - from + 2);
        const out = this.out;
        let w = copyRange(buf, from, a, out, this.w);
        out[w++] = QUOTE;
        w = copyRange(buf, a, b, out, w);
        out[w++] = QUOTE;
        this.w = w;
        from = b;
      }
    }
    // COPY writes `\n`; a `\r\n` line end is read too, and written as `\n`
    const e = ends[t.count - 1];
    if (t.next === e + 1) return from;
    this.room(e - from + 1);
    this.w = copyRange(buf, from, e, this.out, this.w);
    this.out[this.w++] = LF;
    return t.next;
  }

  /** The carried part row and the new piece, one after the other in `input`. */
  private take(chunk: Uint8Array): Buffer {
    const n = this.carried + chunk.length;
    if (this.input.length < n) {
      const bigger = Buffer.allocUnsafe(Math.max(n, this.input.length * 2, 1 << 17));
      this.input.copy(bigger, 0, 0, this.carried);
      this.input = bigger;
    }
    this.input.set(chunk, this.carried);
    return this.input;
  }

  /** This push's output goes to out[start, …): allocations are one per slab, not one per piece. */
  private begin(n: number): void {
    this.out = this.slab;
    this.start = this.slabUsed;
    if (this.out.length - this.start < n + (n >> 2) + 64) {
      this.out = Buffer.allocUnsafe(Math.max(SLAB, n + (n >> 1) + 64));
      this.start = 0;
    }
    this.w = this.wRow = this.start;
  }

  /** Makes room for `need` more bytes (a new slab, this push's output so far moved to it). */
  private room(need: number): void {
    if (this.w + need <= this.out.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(SLAB, (this.w - this.start + need) * 2));
    this.out.copy(bigger, 0, this.start, this.w);
    this.w -= this.start;
    this.wRow -= this.start;
    this.start = 0;
    this.out = bigger;
  }
}

const malformed = (why: string) => new ExportError(`the service's COPY CSV is malformed: ${why}`, 502, 'PGRST000');

/** A rewriter of one COPY stream of `columns` of `table` (see CopyCsvRewriter); `keyAt`: the key column's position, to report first and last keys. */
export function copyCsvRewriter(table: TableDef, columns: string[], nullToken: string | undefined, keyAt = -1): CopyCsvRewriter {
  const byName = new Map(table.columns.map((c) => [c.name, c]));
  // the dialect's null: the token where it is not an empty field (src/format/csv-dialect.ts)
  const token = Buffer.from(nullField(true, nullToken));
  const rewrite = columns.map((name) => nullField(csvColumn(name, byName.get(name)).hasDefault!, nullToken) !== '');
  return new Rewriter(token, rewrite, keyAt);
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
