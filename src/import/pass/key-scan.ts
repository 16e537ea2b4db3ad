import { canonicalUuid, K_TEXT, K_UUID, normalizeUuid } from '../../schema/codecs.js';
import { CR, ESCAPED, fieldText, HAS_NUL, LF, QUOTED, TOKENS_MORE, TOKENS_OK } from '../../format/csv-tokens.js';
import { CopyTranscoder, type FieldPlan, MALFORMED, MORE, OK } from './copy-transcode.js';
import type { DuplicateFinder } from '../../io/duplicate-finder.js';

/**
 * The scan pass's CSV reader when all it needs of a record is where it ends and its one key cell
 * (a uuid or a text: `id`, `isrc_code`, a name): the tokenizer's `skim` (src/format/csv-tokens.ts)
 * finds both with native byte search, and the key is noted as the transcoder notes it.
 * 300k tracks (72 MB) read in 0.2–0.3 s where the transcoder took 0.42–0.46 s.
 *
 * What it does not tell is a record's field count: a ragged record's key is noted as any record
 * whose other cells are bad is (the scan checks no other cell either); the dedupe stage shapes a
 * probable repeat in full before it counts it valid. test/import/key-scan.test.ts holds it equal
 * to the transcoder on generated files, cut at every byte.
 */
export class KeyScan extends CopyTranscoder {
  private readonly keyField: number;
  private readonly keyKind: number;
  /** Where the record last read starts (its cells are read from there when asked). */
  private start = 0;
  /**
   * The key cell's bytes when they are the key as they stand (a canonical uuid unquoted, a text
   * without doubled quotes): noted from the bytes, and made a string only for a probable repeat.
   * -1 when the key is `key` (or none).
   */
  private keyFrom = -1;
  private keyTo = -1;
  private keyBuf: Buffer | null = null;

  /** The key as the transcoder notes it (made from the bytes only when asked). */
  override get key(): string | null {
    return this.keyTo >= 0 ? this.keyBuf!.toString(this.keyKind === K_UUID ? 'latin1' : 'utf8', this.keyFrom, this.keyTo) : this.noted;
  }
  override set key(key: string | null) {
    this.noted = key;
    this.keyTo = -1;
  }

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
    this.keyField = keyLength === 0 ? -1 : plans.findIndex((p) => p !== null && p.keyPart === 0);
    this.keyKind = this.keyField < 0 ? -1 : plans[this.keyField]!.kind;
  }

  /**
   * Reads up to `max` records from buf[p..n) in one go, noting each key in `finder`, while each is
   * one `record()` reads the same way without help: it starts with its key, a canonical uuid
   * followed by the delimiter (or the file has no key), and is plain (the tokenizer's plainEnd:
   * every quote opens a field and closes before a delimiter or the line end, and the line end is
   * inside the bytes). Stops before anything else (a blank line, another key, the bytes' end) and
   * before a probable repeat, which the pass then reads record by record (the finder answers
   * "seen" again). Returns the records read; `next` is where the next starts and `lines` the line
   * ends consumed. 300k tracks (72 MB): 0.11-0.14 s where record() by record took 0.18-0.23 s.
   */
  run(buf: Buffer, p: number, n: number, finder: DuplicateFinder, max: number): number {
    const keyed = this.keyField === 0 && this.keyKind === K_UUID;
    if (!keyed && this.keyField !== -1) return 0;
    const t = this.tokens;
    let lines = 0;
    let count = 0;
    while (count < max && p < n) {
      if (keyed && !(p + 36 < n && buf[p + 36] === t.delim && canonicalUuid(buf, p, p + 36) && !this.isNull(buf, p, 36))) break;
      if (buf[p] === LF || buf[p] === CR) break; // a blank line: the pass skips it
      const end = t.plainEnd(buf, p, n);
      if (end < 0 || (keyed && finder.noteBytes(buf, p, p + 36))) break;
      lines += t.lines;
      count++;
      p = end + 1;
    }
    return this.ran(count, p, lines);
  }

  private ran(count: number, next: number, lines: number): number {
    this.next = next;
    this.lines = lines;
    return count;
  }

  /** The record at buf[p..n) as the transcoder reads it for the scan (no COPY line: `out` is never given). */
  override record(buf: Buffer, p: number, n: number, eof: boolean, _out: Buffer | null = null, _o = 0): number {
    const t = this.tokens;
    const read = t.skim(buf, p, n, eof, this.keyField);
    if (read === TOKENS_MORE) return MORE;
    this.key = null;
    this.start = p;
    if (read !== TOKENS_OK) {
      this.next = n;
      return MALFORMED;
    }
    this.next = t.next;
    this.lines = t.lines;
    if (t.count === 1) this.noteKey(buf, t.from(0), t.to(0), t.flags[0]);
    return OK;
  }

  /** The key cell's part, as the transcoder notes it (none: empty, the null token, a NUL, not a uuid); as bytes when it stands as it is. */
  private noteKey(buf: Buffer, a: number, b: number, flags: number): void {
    const escaped = (flags & ESCAPED) !== 0;
    if (!escaped && this.isNull(buf, a, b - a)) return;
    if (b === a || (flags & HAS_NUL) !== 0) return;
    if (this.keyKind === K_UUID ? (flags & QUOTED) === 0 && canonicalUuid(buf, a, b) : !escaped) {
      this.keyBuf = buf;
      this.keyFrom = a;
      this.keyTo = b;
      return;
    }
    this.key = this.keyKind === K_UUID ? normalizeUuid(fieldText(buf, a, b, escaped)) : fieldText(buf, a, b, escaped);
  }

  /** The transcoder's notedKey, from the key cell's bytes when they are the key as they stand. */
  override notedKey(finder: DuplicateFinder): string | null {
    if (this.keyTo >= 0) return finder.noteBytes(this.keyBuf!, this.keyFrom, this.keyTo) ? this.key : null;
    return super.notedKey(finder);
  }

  /** The cells of the record last read (tokenized in full: only a probable repeat's are asked for). */
  override cells(buf: Buffer): string[] {
    const t = this.tokens;
    t.read(buf, this.start, this.next, true);
    const cells = new Array<string>(t.count);
    for (let f = 0; f < t.count; f++) cells[f] = fieldText(buf, t.from(f), t.to(f), (t.flags[f] & ESCAPED) !== 0);
    return cells;
  }
}
