/**
 * The one CSV tokenizer (RFC 4180 plus what files in the field carry: `\r\n` or `\n` line ends,
 * any single-byte delimiter, quoted fields spanning lines, doubled quotes). It reads bytes in place and gives a record's field bounds and per-field
 * flags in typed arrays it reuses, so reading a record makes no string or object per cell: the
 * import's transcoder, the CSV reader, both export rewriters and the service's COPY cell check all
 * read records through it, each doing its own work on the bounds. Its byte constants live in
 * byte-codes.ts (re-exported here).
 *
 * It knows nothing of headers, blank lines or a BOM: each caller decides what those mean.
 */

import { COMMA, CR, LF, QUOTE } from './byte-codes.js';

export { BACKSLASH, COMMA, CR, LF, QUOTE } from './byte-codes.js';

/** `read`: a whole record was read (see `count`, `next`, `lines`). */
export const TOKENS_OK = 0;
/** `read`: the bytes end inside the record: call again from the same position with more bytes. */
export const TOKENS_MORE = 1;
/** `read`: not CSV (see `problem` and `problemLine`). */
export const TOKENS_MALFORMED = 2;

/** Field flag: the field was quoted (its bounds include the quotes). */
export const QUOTED = 1;
/** Field flag: a quoted field holding a doubled quote (`""`). */
export const ESCAPED = 2;
/** Field flag: the field holds a NUL byte. */
export const HAS_NUL = 4;

/** Bytes that end or break an unquoted field (the delimiter, LF, CR, `"`, NUL): one table load per byte instead of five compares. */
function specialBytes(delim: number): Uint8Array {
  const t = new Uint8Array(256);
  t[delim] = 1;
  t[LF] = 1;
  t[CR] = 1;
  t[QUOTE] = 1;
  t[0] = 1;
  return t;
}
const SPECIAL_COMMA = specialBytes(COMMA);
/** Bytes a quoted field's scan stops at (`"`, LF to count lines, NUL to flag it). */
const IN_QUOTES = new Uint8Array(256);
IN_QUOTES[QUOTE] = 1;
IN_QUOTES[LF] = 1;
IN_QUOTES[0] = 1;

/** `quoted`/`unquoted` results below zero: the status to return. */
const R_MORE = -1;
const R_MALFORMED = -2;

/**
 * Reads one CSV record at a time from a byte buffer: field `k` of the last record read is
 * `buf[starts[k], ends[k])` (quotes included when `flags[k] & QUOTED`), `count` fields in all.
 * @example const t = new CsvTokenizer(); t.read(Buffer.from('a,"b"\n'), 0, 6, true); [t.count, t.starts[1], t.ends[1], t.flags[1]] // [2, 2, 5, 1]
 */
export class CsvTokenizer {
  starts = new Int32Array(32);
  ends = new Int32Array(32);
  flags = new Uint8Array(32);
  /** Fields of the record read. */
  count = 0;
  /** Where the next record starts. */
  next = 0;
  /** Line ends the record consumed (its own and those inside quoted fields). */
  lines = 0;
  /** With TOKENS_MALFORMED: what is wrong, and on which line of the record (0 = its first). */
  problem = '';
  problemLine = 0;
  /** After a field: the byte that ended it (the delimiter, LF for a line end, -1 for the end of input). */
  private sep = 0;
  readonly delim: number;
  private readonly special: Uint8Array;

  /** `delimiter`: one single-byte character (`,` `;` tab `|`). */
  constructor(delimiter = ',') {
    this.delim = delimiter.charCodeAt(0);
    this.special = this.delim === COMMA ? SPECIAL_COMMA : specialBytes(this.delim);
  }

  /** The first byte of field `k`'s content (after an opening quote). */
  from(k: number): number {
    return this.starts[k] + (this.flags[k] & QUOTED);
  }

  /** The end of field `k`'s content (before a closing quote). */
  to(k: number): number {
    return this.ends[k] - (this.flags[k] & QUOTED);
  }

  /**
   * Reads the record at buf[p..n). `eof`: no more bytes follow `n` (else a record that may go on
   * past `n` is TOKENS_MORE). A record ends at `\n`, `\r\n` or the end of input.
   */
  read(buf: Uint8Array, p: number, n: number, eof: boolean): number {
    const delim = this.delim;
    this.count = 0;
    this.lines = 0;
    for (;;) {
      const k = this.count;
      if (k === this.starts.length) this.grow();
      const after = p < n && buf[p] === QUOTE ? this.quoted(buf, p, n, eof, k) : this.unquoted(buf, p, n, eof, k);
      if (after < 0) return after === R_MORE ? TOKENS_MORE : TOKENS_MALFORMED;
      this.count = k + 1;
      if (this.sep !== delim) {
        this.lines++;
        this.next = after;
        return TOKENS_OK;
      }
      // a delimiter at the very end of the bytes: one more (empty) field follows
      if (after >= n && !eof) return TOKENS_MORE;
      p = after;
    }
  }

  /** The quoted field at `p` stored as field `k`: the position after its separator, or R_MORE / R_MALFORMED. */
  private quoted(buf: Uint8Array, p: number, n: number, eof: boolean, k: number): number {
    let flags = QUOTED;
    // one pass to the closing quote, counting line ends on the way (a doubled quote is content)
    let close = p + 1;
    let nl = 0;
    for (;;) {
      while (close < n && IN_QUOTES[buf[close]] === 0) close++;
      if (close < n && buf[close] !== QUOTE) {
        if (buf[close] === LF) nl++;
        else flags |= HAS_NUL;
        close++;
        continue;
      }
      if (close >= n || (close + 1 >= n && !eof)) {
        if (!eof) return R_MORE;
        return this.malformed('a quoted field is not closed before the end of the input', 0);
      }
      if (close + 1 < n && buf[close + 1] === QUOTE) {
        flags |= ESCAPED;
        close += 2;
        continue;
      }
      break;
    }
    const b = close + 1;
    this.starts[k] = p;
    this.ends[k] = b;
    this.flags[k] = flags;
    const line = this.lines;
    this.lines += nl;
    if (b >= n) {
      this.sep = -1;
      return b;
    }
    const c = buf[b];
    this.sep = c === this.delim ? c : LF;
    if (c === this.delim || c === LF) return b + 1;
    if (c === CR) {
      if (b + 1 >= n && !eof) return R_MORE;
      if (b + 1 >= n) return b + 1;
      if (buf[b + 1] === LF) return b + 2;
    }
    const shown = JSON.stringify(Buffer.from(buf.buffer, buf.byteOffset + b, Math.min(10, n - b)).toString('utf8'));
    return this.malformed(`text after the closing quote of field ${k + 1} (${shown})`, line + nl);
  }

  /** The unquoted field at `p` stored as field `k`: the position after its separator, or R_MORE / R_MALFORMED. */
  private unquoted(buf: Uint8Array, p: number, n: number, eof: boolean, k: number): number {
    const special = this.special;
    const delim = this.delim;
    let flags = 0;
    let i = p;
    for (; i < n; i++) {
      while (i < n && special[buf[i]] === 0) i++;
      if (i >= n) break;
      const c = buf[i];
      if (c === delim || c === LF) break;
      if (c === CR && i + 1 < n && buf[i + 1] === LF) break;
      if (c === QUOTE) return this.malformed(`a quote inside unquoted field ${k + 1} (quote the whole field and double the quote: "a ""b"" c")`, this.lines);
      if (c === 0) flags |= HAS_NUL;
    }
    let after: number;
    if (i >= n) {
      if (!eof) return R_MORE;
      this.sep = -1;
      after = n;
      // a lone CR at the very end of the input: the record's line end
      if (i > p && buf[i - 1] === CR) i--;
    } else {
      const c = buf[i];
      this.sep = c === CR ? LF : c;
      after = c === CR ? i + 2 : i + 1;
    }
    this.starts[k] = p;
    this.ends[k] = i;
    this.flags[k] = flags;
    return after;
  }

  private malformed(problem: string, line: number): number {
    this.problem = problem;
    this.problemLine = line;
    return R_MALFORMED;
  }

  /**
   * Reads the record at buf[p..n) as `read` does, but gives only where it ends (`next`, `lines`)
   * and the bounds of field `field` (as field 0: `count` is 1 when the record has it; -1 for
   * none), finding quotes and line ends with the runtime's native byte search instead of visiting
   * every byte: a record's end is its first line end outside quotes, so only the quotes and line
   * ends are looked at, each checked where it stands (a quote opens a field or closes one). The
   * same statuses as `read`, and the same refusals (a malformed record's `problem` is not said:
   * `read` says it). The field count is not known. test/import/key-scan.test.ts holds it equal to
   * `read` on generated files cut at every byte. 300k tracks (72 MB): ~0.1 s where `read` takes ~0.4 s.
   */
  skim(buf: Buffer, p: number, n: number, eof: boolean, field: number): number {
    const delim = this.delim;
    this.count = 0;
    let extra = 0;
    let i = p;
    let f = 0;
    for (;;) {
      if (i < n && buf[i] === QUOTE) {
        const c = this.closing(buf, i, n, eof);
        if (c < 0) return eof ? this.refuse('a quoted field is not closed before the end of the input') : TOKENS_MORE;
        extra += this.linesIn(buf, i + 1, c);
        if (f === field) this.bound(buf, i, c + 1, QUOTED | this.escapedSeen, n);
        const after = c + 1;
        if (after >= n) return this.skimmed(n, extra);
        const b = buf[after];
        if (b === delim) {
          i = after + 1;
          f++;
          continue;
        }
        if (b === LF) return this.skimmed(after + 1, extra);
        if (b !== CR) return this.refuse('text after a closing quote');
        if (after + 1 >= n) return eof ? this.skimmed(n, extra) : TOKENS_MORE;
        if (buf[after + 1] !== LF) return this.refuse('text after a closing quote');
        return this.skimmed(after + 2, extra);
      }
      // an unquoted field: to the next delimiter or line end, with no quote inside
      const line = this.find(buf, LF, i, n);
      if (f > field) {
        // past the field wanted: only quotes and line ends matter; a quote must open a field
        const q = this.find(buf, QUOTE, i, n);
        if (q < line) {
          if (q !== p && buf[q - 1] !== delim) return this.refuse('a quote inside an unquoted field');
          i = q;
          continue;
        }
        if (line >= n) return eof ? this.skimmed(n, extra) : TOKENS_MORE;
        return this.skimmed(line + 1, extra);
      }
      const d = this.find(buf, delim, i, n);
      const end = d < line ? d : line;
      if (this.find(buf, QUOTE, i, n) < end) return this.refuse('a quote inside an unquoted field');
      if (end >= n && !eof) return TOKENS_MORE;
      if (f === field) {
        // a line end's CR is not content (nor a lone CR at the very end of the input)
        const to = end > i && (end === line || end >= n) && buf[end - 1] === CR && (end < n || eof) ? end - 1 : end;
        this.bound(buf, i, to, 0, n);
      }
      if (end >= n) return this.skimmed(n, extra);
      if (end === line) return this.skimmed(line + 1, extra);
      i = d + 1;
      f++;
    }
  }

  /**
   * Where the plain record that starts at `p` ends (its line end's index), or -1 when it is not
   * plain: a plain record is one `skim` reads without more to say, every quote in it opening a
   * field and closing before a delimiter or a line end, and its line end inside buf[0, n). Sets
   * `lines` (1 and the line ends inside its quoted fields). The scan's bulk read (KeyScan.run)
   * calls it record after record: the search caches carry the next quote and line end over.
   */
  plainEnd(buf: Buffer, p: number, n: number): number {
    const delim = this.delim;
    let end = this.find(buf, LF, p, n);
    let extra = 0;
    for (let q = this.find(buf, QUOTE, p, n); q < end; q = this.find(buf, QUOTE, q + 1, n)) {
      if (q !== p && buf[q - 1] !== delim) return -1;
      const close = this.closing(buf, q, n, false);
      if (close < 0) return -1;
      const after = buf[close + 1];
      if (after !== delim && after !== LF && !(after === CR && buf[close + 2] === LF)) return -1;
      if (close > end) {
        extra += this.linesIn(buf, q + 1, close);
        end = this.find(buf, LF, close + 1, n);
      }
      q = close;
    }
    if (end >= n) return -1;
    this.lines = 1 + extra;
    return end;
  }

  /** skim(): the wanted field's bounds as field 0, flagged HAS_NUL when it holds one. */
  private bound(buf: Buffer, a: number, b: number, flags: number, n: number): void {
    this.starts[0] = a;
    this.ends[0] = b;
    this.flags[0] = flags | (this.find(buf, 0, a, n) < b ? HAS_NUL : 0);
    this.count = 1;
  }

  /** skim(): a malformed record, as `read` answers it (its problem said only roughly: `read` says it exactly). */
  private refuse(problem: string): number {
    this.malformed(problem, 0);
    return TOKENS_MALFORMED;
  }

  private skimmed(next: number, extra: number): number {
    this.next = next;
    this.lines = 1 + extra;
    return TOKENS_OK;
  }

  /**
   * skim()'s search caches for the buffer being read, per byte searched (slot: QUOTE, LF, the
   * delimiter, NUL): `skimAt` is the first occurrence at or after `skimFrom` (the buffer's length:
   * none), so a byte that does not occur is searched for once per buffer, not once per record.
   */
  private skimBuf: Buffer | null = null;
  private readonly skimFrom = [0, 0, 0, 0];
  private readonly skimAt = [-1, -1, -1, -1];
  /** skim(): whether the quoted field just closed held a doubled quote (ESCAPED, else 0). */
  private escapedSeen = 0;

  /** The next `byte` at or after `i` in buf[0, n) (n when none). */
  private find(buf: Buffer, byte: number, i: number, n: number): number {
    if (buf !== this.skimBuf) {
      this.skimBuf = buf;
      this.skimAt.fill(-1);
    }
    const slot = byte === QUOTE ? 0 : byte === LF ? 1 : byte === 0 ? 3 : 2;
    let at = this.skimAt[slot];
    if (at < 0 || i < this.skimFrom[slot] || at < i) {
      at = buf.indexOf(byte, i);
      if (at < 0) at = buf.length;
      this.skimFrom[slot] = i;
      this.skimAt[slot] = at;
    }
    return at < n ? at : n;
  }

  /** The closing quote of the quoted field opening at `q` (doubled quotes are content), or -1 when the bytes end first. */
  private closing(buf: Buffer, q: number, n: number, eof: boolean): number {
    let j = q + 1;
    this.escapedSeen = 0;
    for (;;) {
      const c = this.find(buf, QUOTE, j, n);
      if (c >= n) return -1;
      if (c + 1 >= n && !eof) return -1;
      if (c + 1 < n && buf[c + 1] === QUOTE) {
        this.escapedSeen = ESCAPED;
        j = c + 2;
        continue;
      }
      return c;
    }
  }

  /** Line ends inside a quoted field's bytes [a, b): the record's extra lines. */
  private linesIn(buf: Buffer, a: number, b: number): number {
    let count = 0;
    for (let l = this.find(buf, LF, a, b); l < b; l = this.find(buf, LF, l + 1, b)) count++;
    return count;
  }

  private grow(): void {
    const size = this.starts.length * 2;
    const starts = new Int32Array(size);
    const ends = new Int32Array(size);
    const flags = new Uint8Array(size);
    starts.set(this.starts);
    ends.set(this.ends);
    flags.set(this.flags);
    this.starts = starts;
    this.ends = ends;
    this.flags = flags;
  }
}

/**
 * A field's text as a key: quotes removed, doubled quotes undone (field `buf[start, end)` as
 * written, quotes included when it was quoted).
 * @example keyText(Buffer.from('"a ""b"""'), 0, 9) // 'a "b"'
 */
export function keyText(buf: Uint8Array, start: number, end: number): string {
  const s = Buffer.from(buf.buffer, buf.byteOffset + start, end - start).toString('utf8');
  return s.charCodeAt(0) === QUOTE ? s.slice(1, -1).replaceAll('""', '"') : s;
}

/**
 * A field's content as text: `buf[from, to)` with doubled quotes undone when `escaped`.
 * @example fieldText(Buffer.from('a ""b""'), 0, 7, true) // 'a "b"'
 */
export function fieldText(buf: Uint8Array, from: number, to: number, escaped: boolean): string {
  const s = Buffer.from(buf.buffer, buf.byteOffset + from, to - from).toString('utf8');
  return escaped ? s.replaceAll('""', '"') : s;
}
