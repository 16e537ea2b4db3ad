import { canonicalUuid, K_TEXT, K_UUID, normalizeUuid } from '../../schema/codecs.js';
import { CR, CsvTokenizer, ESCAPED, fieldText, LF, QUOTE } from '../../format/csv-tokens.js';
import { CopyTranscoder, type FieldPlan, MALFORMED, MORE, OK } from './copy-transcode.js';

/**
 * The scan pass's CSV reader when all it needs of a record is where it ends and its one key cell
 * (a uuid or a text: `id`, `isrc_code`, a name): the transcoder's reading (copy-transcode.ts) for
 * those two things, found with the runtime's native byte search instead of a loop over every byte
 * of every field. A record's end is its first line end outside quotes, so only the quotes and line
 * ends are visited, each checked where it stands (a quote opens a field or closes one, as
 * csv-tokens.ts says). 300k tracks (72 MB): ~0.1 s to read where the transcoder took ~0.45 s.
 *
 * It reads what the transcoder reads, and refuses what it refuses (MALFORMED: a quote inside an
 * unquoted field, text after a closing quote, an unclosed quote at the end). What it does not
 * tell is a record's field count: a ragged record's key is noted as any record whose other
 * cells are bad is (the scan checks no other cell either); the dedupe stage shapes a probable
 * repeat in full before it counts it valid. test/import/key-scan.test.ts holds it equal to the
 * transcoder on generated files, cut at every chunk boundary.
 */
export class KeyScan extends CopyTranscoder {
  /** Where the record last read starts (its cells are read from there when asked). */
  private start = 0;
  private readonly delimByte: number;
  private readonly keyField: number;
  private readonly keyKind: number;
  private readonly nullBytes: Buffer | null;
  private readonly tokenizer: CsvTokenizer;
  /**
   * Next-occurrence caches for the buffer being read, per byte searched (slot: QUOTE, LF, the
   * delimiter, NUL): `at` is the first occurrence at or after `from` (the buffer's length: none).
   */
  private cached: Buffer | null = null;
  private readonly from = [0, 0, 0, 0];
  private readonly at = [-1, -1, -1, -1];

  /**
   * Whether a scan with these field plans can read by key alone: one key cell (a uuid or a text)
   * or none, and no date cells to check.
   */
  static fits(plans: Array<FieldPlan | null>, keyLength: number, checkDates: boolean): boolean {
    if (checkDates || keyLength > 1) return false;
    if (keyLength === 0) return true;
    const key = plans.filter((p) => p !== null && p.keyPart === 0);
    return key.length === 1 && (key[0]!.kind === K_UUID || (key[0]!.kind === K_TEXT && !key[0]!.keyList));
  }

  constructor(plans: Array<FieldPlan | null>, nullToken: string | null, keyLength: number, delimiter = ',') {
    super(plans, nullToken, keyLength, true, delimiter);
    this.delimByte = delimiter.charCodeAt(0);
    this.keyField = keyLength === 0 ? -1 : plans.findIndex((p) => p !== null && p.keyPart === 0);
    this.keyKind = this.keyField < 0 ? -1 : plans[this.keyField]!.kind;
    this.nullBytes = nullToken === null ? null : Buffer.from(nullToken);
    this.tokenizer = new CsvTokenizer(delimiter);
  }

  /**
   * The next `byte` at or after `i` in buf[0, n) (n when none). A record's fields are read in
   * order, so most searches start inside the stretch the last one already searched: answered from
   * the cache, and a byte that does not occur is searched for once per buffer, not once per record.
   */
  private find(buf: Buffer, byte: number, i: number, n: number): number {
    if (buf !== this.cached) {
      this.cached = buf;
      this.at.fill(-1);
    }
    const slot = byte === QUOTE ? 0 : byte === LF ? 1 : byte === 0 ? 3 : 2;
    let at = this.at[slot];
    if (at < 0 || i < this.from[slot] || at < i) {
      at = buf.indexOf(byte, i);
      if (at < 0) at = buf.length;
      this.from[slot] = i;
      this.at[slot] = at;
    }
    return at < n ? at : n;
  }

  /**
   * The closing quote of the quoted field opening at `q` (doubled quotes are content), or -1 when
   * the bytes end first (MORE, or MALFORMED at the end of input); `escaped` set when it held one.
   */
  private closing(buf: Buffer, q: number, n: number, eof: boolean): number {
    let j = q + 1;
    this.escapedKey = false;
    for (;;) {
      const c = this.find(buf, QUOTE, j, n);
      if (c >= n) return -1;
      if (c + 1 >= n && !eof) return -1;
      if (c + 1 < n && buf[c + 1] === QUOTE) {
        this.escapedKey = true;
        j = c + 2;
        continue;
      }
      return c;
    }
  }
  private escapedKey = false;

  /** Line ends inside a quoted field's bytes [a, b): the record's extra lines. */
  private linesIn(buf: Buffer, a: number, b: number): number {
    let count = 0;
    for (let l = this.find(buf, LF, a, b); l < b; l = this.find(buf, LF, l + 1, b)) count++;
    return count;
  }

  /** The record at buf[p..n) as the transcoder reads it for the scan (no COPY line: `out` is never given). */
  override record(buf: Buffer, p: number, n: number, eof: boolean, _out: Buffer | null = null, _o = 0): number {
    const delim = this.delimByte;
    this.key = null;
    this.start = p;
    let extra = 0;
    let i = p;
    let field = 0;
    for (;;) {
      if (i < n && buf[i] === QUOTE) {
        const c = this.closing(buf, i, n, eof);
        if (c < 0) return eof ? this.malformed(n) : MORE;
        extra += this.linesIn(buf, i + 1, c);
        if (field === this.keyField) this.noteKey(buf, i + 1, c, true, this.escapedKey, n);
        const after = c + 1;
        if (after >= n) return this.ended(n, extra);
        const b = buf[after];
        if (b === delim) {
          i = after + 1;
          field++;
          continue;
        }
        if (b === LF) return this.ended(after + 1, extra);
        if (b !== CR) return this.malformed(n);
        if (after + 1 >= n) return eof ? this.ended(n, extra) : MORE;
        if (buf[after + 1] !== LF) return this.malformed(n);
        return this.ended(after + 2, extra);
      }
      // an unquoted field: to the next delimiter or line end, with no quote inside
      const line = this.find(buf, LF, i, n);
      if (field > this.keyField) {
        // past the key: only quotes and line ends matter; a quote must open a field
        const q = this.find(buf, QUOTE, i, n);
        if (q < line) {
          if (q !== p && buf[q - 1] !== delim) return this.malformed(n);
          i = q;
          field = this.keyField + 1;
          continue;
        }
        if (line >= n) return eof ? this.ended(n, extra) : MORE;
        return this.ended(line + 1, extra);
      }
      const d = this.find(buf, delim, i, n);
      const end = d < line ? d : line;
      if (this.find(buf, QUOTE, i, n) < end) return this.malformed(n);
      if (end >= n && !eof) return MORE;
      if (field === this.keyField) {
        // a line end's CR is not content (nor a lone CR at the very end of the input)
        const to = end > i && (end === line || end >= n) && buf[end - 1] === CR && (end < n || eof) ? end - 1 : end;
        this.noteKey(buf, i, to, false, false, n);
      }
      if (end >= n) return this.ended(n, extra);
      if (end === line) return this.ended(line + 1, extra);
      i = d + 1;
      field++;
    }
  }

  private ended(next: number, extra: number): number {
    this.next = next;
    this.lines = 1 + extra;
    return OK;
  }

  private malformed(n: number): number {
    this.next = n;
    this.key = null;
    return MALFORMED;
  }

  /** The key cell's part, as the transcoder notes it (null: empty, the null token, a NUL, not a uuid). */
  private noteKey(buf: Buffer, a: number, b: number, quoted: boolean, escaped: boolean, n: number): void {
    const tok = this.nullBytes;
    if (!escaped && tok !== null && b - a === tok.length && buf.compare(tok, 0, tok.length, a, b) === 0) return;
    if (b === a || this.find(buf, 0, a, n) < b) return;
    if (this.keyKind === K_UUID) {
      this.key = !quoted && canonicalUuid(buf, a, b) ? buf.toString('latin1', a, b) : normalizeUuid(fieldText(buf, a, b, escaped));
      return;
    }
    this.key = fieldText(buf, a, b, escaped);
  }

  /** The cells of the record last read (tokenized again: only a probable repeat's are asked for). */
  override cells(buf: Buffer): string[] {
    const t = this.tokenizer;
    t.read(buf, this.start, this.next, true);
    const cells = new Array<string>(t.count);
    for (let f = 0; f < t.count; f++) cells[f] = fieldText(buf, t.from(f), t.to(f), (t.flags[f] & ESCAPED) !== 0);
    return cells;
  }
}
