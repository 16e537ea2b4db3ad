import { readSync } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import type { ColumnDef } from '../../schema/catalog.js';
import { copyRange } from '../../io/bytes.js';
import { knownDefault } from '../../schema/conventions.js';
import { booleanWord, canonicalUuid, columnKind, copyText, dateText, isoInstant, K_BOOL, K_DATE, K_JSON, K_TEXT, K_TIMESTAMP, K_UUID, keyPart, normalizeUuid, validInstant, validJson, type Kind } from '../../schema/codecs.js';
import { BACKSLASH, COMMA, CR, CsvTokenizer, ESCAPED, fieldText, HAS_NUL, LF, QUOTE, QUOTED, TOKENS_MORE, TOKENS_OK } from '../../format/csv-tokens.js';
import { type ByteCheck, MAX_RECORD_BYTES, tooLong } from '../readers/input.js';
import type { DuplicateFinder } from '../../io/duplicate-finder.js';

/**
 * CSV bytes in, COPY CSV bytes out, one record at a time, without making strings or objects for
 * the cells: the import's hot path when the service takes COPY bodies. RFC 4180 quoting is what
 * COPY's CSV format reads, so a text or JSON cell goes out byte for byte as it came in (quotes and
 * all); only empty cells (the column default), the null token (NULL), uuids that are not in
 * canonical form, booleans, dates and timestamps are rewritten, and those are validated by the
 * column codecs (src/schema/codecs.ts), as the import's coercion validates them. jsonb text is
 * syntax-checked in place (validJson); the database has the last word on the rest (a refused row's
 * batch is then split down to the row).
 *
 * A record the transcoder cannot write (a refused value, a left-out cell with a volatile default,
 * the wrong number of fields) gets a status, and the import handles it through the ordinary path.
 */


/** Status of `record()`. */
export const OK = 0;
/** The buffer ends inside the record: read more and call again from the same position. */
export const MORE = 1;
/** A value its column refuses (buildRow names it). */
export const REFUSED = 2;
/** An empty cell of a column whose default is volatile (now(), a new uuid): send it as JSON with missing=default. */
export const NEEDS_JSON = 3;
/** More or fewer fields than the header. */
export const RAGGED = 4;
/** Not CSV (a stray quote, text after a closing quote, an unclosed quote at the end). */
export const MALFORMED = 5;
/** The output buffer is too small for the record. */
export const OVERFLOW = 6;
/** No more records (ByteCsvFile). */
export const END = 7;

/** How one input field is written. */
export interface FieldPlan {
  kind: Kind;
  nullable: boolean;
  /** COPY text of the column's constant default, or null when it is volatile. */
  empty: Buffer | null;
  /** Position of this field in the conflict key, or -1. */
  keyPart: number;
  /** A link field that takes `;`-separated keys: a cell that is not JSON goes as a JSON string. */
  keyList: boolean;
}

function emptyText(col: ColumnDef): Buffer | null {
  const d = knownDefault(col);
  if (d === undefined) return null;
  if (d === null) return Buffer.alloc(0);
  return Buffer.from(copyText(d as string | number | boolean));
}

/**
 * The plan of every input field (null for fields the import does not write), for a header whose
 * fields resolve to `cols` (null where unmapped), with the conflict key's columns in key order.
 */
export function fieldPlans(cols: Array<ColumnDef | null>, keyColumns: string[] | null): Array<FieldPlan | null> {
  return cols.map((col) =>
    col ? { kind: columnKind(col.type), nullable: col.nullable, empty: emptyText(col), keyPart: keyColumns ? keyColumns.indexOf(col.name) : -1, keyList: col.keyList !== undefined } : null,
  );
}

/**
 * Reads records from a buffer and writes each as a COPY CSV line. Call `record()` at the start of a
 * record (blank lines already skipped); it returns a status and sets `next` (where the next record
 * starts), `lines` (line ends consumed), `outEnd` and `key`.
 */
export class CopyTranscoder {
  next = 0;
  lines = 0;
  outEnd = 0;
  /** The record's conflict key (parts joined by NUL, as keyOf makes it), or null. */
  get key(): string | null {
    return this.noted;
  }
  set key(key: string | null) {
    this.noted = key;
  }
  protected noted: string | null = null;

  /**
   * Notes the key of the record last read in `finder` (the scan's duplicate finder): the key when
   * the finder has probably seen it before, else null (a first sight, or no key).
   */
  notedKey(finder: DuplicateFinder): string | null {
    const key = this.key;
    return key !== null && finder.note(key) ? key : null;
  }
  private readonly nullToken: Buffer | null;
  private readonly keyParts: Array<string | null>;
  /** The record's key part `k` (in key order), null when its cell is empty or absent. */
  part(k: number): string | null {
    return this.keyParts[k];
  }
  /** Every field goes to the output: a record's unchanged stretches are copied whole. */
  private readonly allMapped: boolean;
  /** The input's field delimiter (a byte); the COPY lines written always use commas. */
  private readonly delim: number;
  /** The one tokenizer this reader reads with (key-scan.ts skims with it). */
  protected readonly tokens: CsvTokenizer;
  /** `field()`'s results: a replacement text for the field (null = its bytes as they are), and the record's status so far. */
  private text: Buffer | null = null;
  private status = OK;

  constructor(
    private readonly plans: Array<FieldPlan | null>,
    nullToken: string | null,
    keyLength: number,
    /** Only find record boundaries and the key (the duplicate scan): other fields are not checked. */
    private readonly keysOnly = false,
    /** The input's delimiter: one ASCII character (`,` `;` tab `|`). */
    delimiter = ',',
    /** With `keysOnly`, check date fields too (a bad one is REFUSED: the scan looks at it again). */
    private readonly checkDates = false,
  ) {
    this.tokens = new CsvTokenizer(delimiter);
    this.delim = this.tokens.delim;
    this.nullToken = nullToken === null ? null : Buffer.from(nullToken);
    this.keyParts = new Array<string | null>(keyLength).fill(null);
    this.allMapped = plans.every((plan) => plan !== null);
  }

  /**
   * The record at buf[p..n). With `out`, writes its COPY line at out[o..]; without, only reads it
   * (the key scan). `eof`: no more input follows `n`.
   *
   * The import's hot loop (every record of a CSV file passes through it once): the tokenizer
   * (src/format/csv-tokens.ts) finds the fields, `field()` checks each by its codec, and this
   * writes the line, keeping the output position and the unchanged stretch being copied in locals.
   */
  record(buf: Buffer, p: number, n: number, eof: boolean, out: Buffer | null, o: number): number {
    const t = this.tokens;
    const read = t.read(buf, p, n, eof);
    if (read === TOKENS_MORE) return MORE;
    this.key = null;
    this.lines = 0;
    if (read !== TOKENS_OK) {
      // a MALFORMED record gives up the rest of the buffer (the import stops there)
      this.next = n;
      return MALFORMED;
    }
    const plans = this.plans;
    const count = t.count < plans.length ? t.count : plans.length;
    const starts = t.starts;
    const ends = t.ends;
    const start = o;
    // with every field in the output, the COPY line is the record's own bytes but for the fields
    // rewritten: [runStart, field start) is copied in one go when a rewritten field (or the end) comes
    // (only for comma input: another delimiter's lines are written field by field, with commas)
    const run = out !== null && this.allMapped && this.delim === COMMA;
    let runStart = p;
    const cap = out ? out.length : 0;
    for (let k = 0; k < this.keyParts.length; k++) this.keyParts[k] = null;
    this.status = OK;
    let wrote = 0;
    for (let f = 0; f < count; f++) {
      const plan = plans[f];
      if (plan === null || (this.keysOnly && plan.keyPart < 0 && !(this.checkDates && plan.kind === K_DATE))) continue;
      this.field(plan, buf, f);
      if (out === null || this.status !== OK) continue;
      const text = this.text;
      const a = starts[f];
      const b = ends[f];
      if (run) {
        if (text !== null && !(text.length === 0 && a === b)) {
          if (o + (a - runStart) + text.length + 2 > cap) this.status = OVERFLOW;
          else {
            o = copyRange(buf, runStart, a, out, o);
            o = copyRange(text, 0, text.length, out, o);
            runStart = b;
          }
        }
        continue;
      }
      // an unquoted field of a `;`/tab/`|` file may hold commas: quoted in the comma-separated COPY line
      const wrap = text === null && (t.flags[f] & QUOTED) === 0 && this.delim !== COMMA && hasByte(buf, a, b, COMMA) ? 2 : 0;
      const size = text === null ? b - a : text.length;
      if (o + size + wrap + 2 > cap) this.status = OVERFLOW;
      else {
        if (wrote > 0) out[o++] = COMMA;
        if (wrap) out[o++] = QUOTE;
        o = text === null ? copyRange(buf, a, b, out, o) : copyRange(text, 0, size, out, o);
        if (wrap) out[o++] = QUOTE;
        wrote++;
      }
    }
    let status = this.status;
    if (t.count !== plans.length) status = RAGGED;
    else if (out !== null && status === OK) {
      const lastEnd = ends[t.count - 1];
      if (o + (run ? lastEnd - runStart : 0) + 1 > cap) status = OVERFLOW;
      else {
        if (run) o = copyRange(buf, runStart, lastEnd, out, o);
        out[o++] = LF;
      }
    }
    this.next = t.next;
    this.lines = t.lines;
    this.outEnd = status === OK ? o : start;
    this.key = this.leadKey(this.keyParts.length);
    return status;
  }

  /** The cells of the record `record()` last read from `buf` (unquoted text, in field order). */
  cells(buf: Buffer): string[] {
    const t = this.tokens;
    const cells = new Array<string>(t.count);
    for (let f = 0; f < t.count; f++) cells[f] = fieldText(buf, t.from(f), t.to(f), (t.flags[f] & ESCAPED) !== 0);
    return cells;
  }

  /** Checks field `f` of the record the tokenizer read by its plan: sets `text` (a replacement, or null), `status`, and its key part. */
  private field(plan: FieldPlan, buf: Buffer, f: number): void {
    const t = this.tokens;
    const flags = t.flags[f];
    const ca = t.from(f);
    const cb = t.to(f);
    const quoted = (flags & QUOTED) !== 0;
    const escaped = (flags & ESCAPED) !== 0;
    const len = cb - ca;
    this.text = null;
    if (flags & HAS_NUL) this.status = REFUSED;
    else if (!escaped && this.isNull(buf, ca, len)) {
      if (!plan.nullable) this.status = REFUSED;
      this.text = EMPTY;
    } else if (len === 0) {
      if (plan.empty === null) {
        if (this.status === OK) this.status = NEEDS_JSON;
      } else this.text = plan.empty;
    } else {
      this.text = this.check(plan, buf, ca, cb, quoted, escaped);
      if (plan.keyPart >= 0) {
        const text = this.text;
        this.keyParts[plan.keyPart] =
          plan.kind === K_UUID
            ? text !== null ? text.toString('latin1') : this.status === REFUSED ? null : buf.toString('latin1', ca, cb)
            : plan.kind === K_JSON && plan.keyList
              ? fieldText(buf, ca, cb, escaped) // a credits cell's names, read by the match stage (--create-missing)
              : keyPart(plan.kind, fieldText(buf, ca, cb, escaped));
      }
    }
  }

  /** Whether buf[ca, ca+len) is the null token. */
  protected isNull(buf: Buffer, ca: number, len: number): boolean {
    const tok = this.nullToken;
    if (tok === null || len !== tok.length) return false;
    for (let i = 0; i < len; i++) if (buf[ca + i] !== tok[i]) return false;
    return true;
  }

  /** A non-empty cell checked by its column's codec (src/schema/codecs.ts): its replacement text, or null to write it as it is; a refusal sets `status`. */
  private check(plan: FieldPlan, buf: Buffer, ca: number, cb: number, quoted: boolean, escaped: boolean): Buffer | null {
    switch (plan.kind) {
      case K_JSON:
        if (!validJson(buf, ca, cb, escaped)) {
          // keys as text (`ISRC;ISRC`): a JSON string, CSV-quoted, for the database to resolve
          if (plan.keyList) return Buffer.from(copyText(JSON.stringify(fieldText(buf, ca, cb, escaped))));
          this.status = REFUSED;
          return null;
        }
        // one key of a link field that reads as a JSON number or boolean (a track key `2`): a list of one key
        if (plan.keyList && scalarJson(buf, ca, cb)) return Buffer.from(copyText(JSON.stringify(fieldText(buf, ca, cb, escaped))));
        return textCell(buf, ca, cb, quoted);
      case K_TEXT:
        return textCell(buf, ca, cb, quoted);
      case K_UUID: {
        if (!quoted && canonicalUuid(buf, ca, cb)) return null;
        const u = normalizeUuid(fieldText(buf, ca, cb, escaped));
        if (u === null) this.status = REFUSED;
        return u === null ? null : Buffer.from(u);
      }
      case K_BOOL: {
        const v = booleanWord(fieldText(buf, ca, cb, escaped));
        if (v === null) this.status = REFUSED;
        return v === null ? null : v ? T : F;
      }
      case K_DATE: {
        const d = dateText(fieldText(buf, ca, cb, escaped));
        if (d === 'syntax' || d === 'range') this.status = REFUSED;
        else if (quoted || d.length !== cb - ca) return Buffer.from(d);
        return null;
      }
      case K_TIMESTAMP: {
        if (!quoted && isoInstant(buf, ca, cb)) return null;
        const s = fieldText(buf, ca, cb, escaped);
        if (!validInstant(s)) this.status = REFUSED;
        else if (quoted || s.trim().length !== cb - ca) return Buffer.from(copyText(s.trim()));
        return null;
      }
    }
  }

  /** The key from the record's first `n` key parts (joined by NUL, as keyOf makes it), or null when one is missing. */
  leadKey(n: number): string | null {
    let key: string | null = null;
    for (let k = 0; k < n; k++) {
      const part = this.keyParts[k];
      if (part === null) return null;
      key = k === 0 ? part : `${key}\u0000${part}`;
    }
    return key;
  }
}

/** A text (or valid jsonb) cell: written as it is, but `\.` alone, which would end COPY's data, is quoted. */
function textCell(buf: Buffer, ca: number, cb: number, quoted: boolean): Buffer | null {
  return !quoted && cb - ca === 2 && buf[ca] === BACKSLASH && buf[ca + 1] === 46 ? QUOTED_END : null;
}

// the codecs' jsonb check, where the import's byte path has always exported it from
export { validJson } from '../../schema/codecs.js';

const EMPTY = Buffer.alloc(0);

function hasByte(buf: Uint8Array, a: number, b: number, byte: number): boolean {
  for (let i = a; i < b; i++) if (buf[i] === byte) return true;
  return false;
}
const T = Buffer.from('t');
const F = Buffer.from('f');
const QUOTED_END = Buffer.from('"\\."');

/**
 * A CSV file read in 1 MiB chunks for CopyTranscoder: skips the BOM, blank lines and the header
 * record, counts lines, and keeps a record whole across chunk ends.
 */
export class ByteCsvFile {
  buf: Buffer = Buffer.alloc(0);
  p = 0;
  /** Line the next record starts on; after `read`, `recLine` and `recStart` describe the record read. */
  line = 1;
  recLine = 0;
  recStart = 0;
  private filePos = 0;
  private eof = false;
  private headerDone = false;
  /** The whole buffer the last `fill` read into (`buf` is its filled part). */
  private store: Buffer | null = null;
  private check: ByteCheck | null = null;

  private constructor(
    private readonly fh: FileHandle,
    private readonly reuse: boolean,
    private readonly path: string,
  ) {}

  /**
   * `reuse`: nothing keeps a record's bytes after the next `fill` (a scan), so one buffer serves
   * the whole file; `check`: every byte read goes through it (the scan's UTF-8 check).
   */
  static async open(path: string, opts: { reuse?: boolean; check?: ByteCheck } = {}): Promise<ByteCsvFile> {
    const file = new ByteCsvFile(await open(path, 'r'), opts.reuse ?? false, path);
    file.check = opts.check ?? null;
    return file;
  }

  /** The next record's status (OK, REFUSED, …), MORE (call `fill`, then again), OVERFLOW (nothing consumed) or END. */
  read(tc: CopyTranscoder, out: Buffer | null, outPos: number): number {
    const buf = this.buf;
    const n = buf.length;
    while (this.p < n) {
      const p = this.p;
      const c = buf[p];
      if (c === LF) {
        this.p++;
        this.line++;
        continue;
      }
      if (c === CR && (p + 1 < n ? buf[p + 1] === LF : this.eof)) {
        this.p += p + 1 < n ? 2 : 1;
        this.line++;
        continue;
      }
      if (this.filePos - n + p === 0 && c === 0xef && n >= 3 && buf[1] === 0xbb && buf[2] === 0xbf) {
        this.p += 3;
        continue;
      }
      const status = tc.record(buf, p, n, this.eof, this.headerDone ? out : null, outPos);
      if (status === MORE) return MORE;
      if (status === OVERFLOW && this.headerDone) return OVERFLOW;
      this.recStart = p;
      this.recLine = this.line;
      this.line += tc.lines;
      this.p = tc.next;
      if (!this.headerDone) {
        if (status === MALFORMED) return MALFORMED;
        this.headerDone = true;
        continue;
      }
      return status;
    }
    return this.eof ? END : MORE;
  }

  /** Reads the next chunk (keeping the unread rest). */
  async fill(): Promise<void> {
    const CHUNK = 1 << 20;
    // the unread rest (a partial record) moves to the front of a new buffer and the file is read
    // in after it: the old buffer stays as it is (rows in flight may still point into it)
    const rest = this.buf.length - this.p;
    if (rest > MAX_RECORD_BYTES) throw tooLong(this.path, 'a record', this.line);
    const next = this.reuse && this.store !== null && this.store.length >= rest + CHUNK ? this.store : Buffer.allocUnsafe(rest + CHUNK);
    this.store = next;
    // (copy moves overlapping bytes correctly when `next` is the buffer being read)
    if (rest > 0) this.buf.copy(next, 0, this.p);
    // the scan reads a regular file (a stream was spooled to one) as fast as it can take it: a
    // megabyte read in place (~0.2 ms) costs less than the thread pool's round trip and the idle wait
    const bytesRead = this.reuse ? readSync(this.fh.fd, next, rest, CHUNK, this.filePos) : (await this.fh.read(next, rest, CHUNK, this.filePos)).bytesRead;
    this.filePos += bytesRead;
    if (bytesRead === 0) this.eof = true;
    if (this.check) await (bytesRead === 0 ? this.check.end() : this.check.push(next.subarray(rest, rest + bytesRead)));
    this.buf = next.subarray(0, rest + bytesRead);
    this.p = 0;
  }

  /** Whether the header record is behind: what follows is records. */
  get pastHeader(): boolean {
    return this.headerDone;
  }

  /** Records read by other means (the scan's bulk read) end at `next`, `lines` line ends on. */
  advance(next: number, lines: number): void {
    this.p = next;
    this.line += lines;
  }

  /** Bytes of the file consumed so far. */
  bytesRead(): number {
    return this.filePos - (this.buf.length - this.p);
  }

  close(): Promise<void> {
    return this.fh.close();
  }
}

/** Whether valid JSON in buf[ca, cb) is a number or a boolean (its first byte past white space says so). */
function scalarJson(buf: Buffer, ca: number, cb: number): boolean {
  let i = ca;
  while (i < cb && (buf[i] === 0x20 || buf[i] === 0x09 || buf[i] === 0x0a || buf[i] === 0x0d)) i++;
  const c = buf[i];
  return c === 0x2d || (c >= 0x30 && c <= 0x39) || c === 0x74 || c === 0x66; // - 0-9 t f
}
