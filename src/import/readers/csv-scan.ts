/**
 * A CSV reader for the import's record path (RFC 4180 plus what exports in the field carry: `\r\n`
 * or `\n` line ends, a UTF-8 BOM, quoted fields spanning lines, blank lines skipped), over the one
 * CSV tokenizer (src/format/csv-tokens.ts): text chunks go in as UTF-8 bytes, records come out as
 * strings cut from the tokenizer's field bounds.
 *
 * Why not csv-parse: on a 1M-row tracks file csv-parse was 40% of the import's CPU (≈15 MB/s,
 * measured with --cpu-prof); this is several times faster, and knows the line each record starts
 * on, which is what every error message needs.
 */
import { CR, CsvTokenizer, ESCAPED, fieldText, LF, TOKENS_MORE, TOKENS_OK } from '../../format/csv-tokens.js';

/** One record: its cells, unquoted, and the 1-based line it starts on. */
export interface CsvRecord {
  cells: string[];
  line: number;
}

/** The input is not CSV at some line (an unclosed quote, text after a closing quote, a stray quote). */
export class CsvSyntaxError extends Error {
  constructor(
    message: string,
    readonly line: number,
  ) {
    super(message);
    this.name = 'CsvSyntaxError';
  }
}

/**
 * Splits a stream of text chunks into records. Feed chunks with `push`, which returns the complete
 * records so far; `end` returns the last one (a file need not end with a newline).
 * @example const s = new CsvScanner(); s.push('a,b\n"x, y",2\n') // [{cells:['a','b'],line:1},{cells:['x, y','2'],line:2}]
 */
export class CsvScanner {
  /** The bytes not yet read as records, at buf[0, len). */
  private buf = Buffer.alloc(0);
  private len = 0;
  /** Line the next (or pending) record starts on. */
  line = 1;
  private started = false;
  private readonly tokens: CsvTokenizer;

  constructor(delimiter = ',') {
    this.tokens = new CsvTokenizer(delimiter);
  }

  push(chunk: string): CsvRecord[] {
    if (!this.started) {
      this.started = true;
      if (chunk.charCodeAt(0) === 0xfeff) chunk = chunk.slice(1);
    }
    const size = Buffer.byteLength(chunk);
    if (this.len + size > this.buf.length) {
      const bigger = Buffer.allocUnsafe(Math.max(this.len + size, this.buf.length * 2, 1 << 16));
      this.buf.copy(bigger, 0, 0, this.len);
      this.buf = bigger;
    }
    this.len += this.buf.write(chunk, this.len);
    return this.drain(false);
  }

  /** Bytes of a record not yet complete (held until its end arrives). */
  get pending(): number {
    return this.len;
  }

  /** The start of the record not yet complete. */
  pendingText(chars: number): string {
    return this.buf.toString('utf8', 0, Math.min(this.len, chars * 4)).slice(0, chars);
  }

  end(): CsvRecord[] {
    return this.drain(true);
  }

  private drain(eof: boolean): CsvRecord[] {
    const out: CsvRecord[] = [];
    const buf = this.buf;
    const n = this.len;
    const t = this.tokens;
    let p = 0;
    while (p < n) {
      const c = buf[p];
      // blank lines make no record
      if (c === LF || (c === CR && (p + 1 < n ? buf[p + 1] === LF : eof))) {
        p += c === CR && p + 1 < n ? 2 : 1;
        this.line++;
        continue;
      }
      const status = t.read(buf, p, n, eof);
      if (status === TOKENS_MORE) break;
      if (status !== TOKENS_OK) throw new CsvSyntaxError(t.problem, this.line + t.problemLine);
      out.push({ cells: this.cells(buf), line: this.line });
      this.line += t.lines;
      p = t.next;
    }
    if (p > 0) buf.copy(buf, 0, p, n);
    this.len = n - p;
    return out;
  }

  /** The cells of the record the tokenizer read, as strings. */
  private cells(buf: Buffer): string[] {
    const t = this.tokens;
    const cells = new Array<string>(t.count);
    for (let f = 0; f < t.count; f++) cells[f] = fieldText(buf, t.from(f), t.to(f), (t.flags[f] & ESCAPED) !== 0);
    return cells;
  }
}
