import { type FileHandle, open } from 'node:fs/promises';
import type { ColumnDef } from '../schema/catalog.js';
import { copyRange } from '../io/bytes.js';
import { DATE, FALSE, TRUE, normalizeUuid, validDate, validInstant } from './coerce.js';
import { knownDefault } from '../schema/conventions.js';
import { MAX_JSON_DEPTH } from '../schema/json-depth.js';
import { MAX_RECORD_BYTES, tooLong } from './readers/input.js';

/**
 * CSV bytes in, COPY CSV bytes out, one record at a time, without making strings or objects for
 * the cells: the import's hot path when the service takes COPY bodies. RFC 4180 quoting is what
 * COPY's CSV format reads, so a text or JSON cell goes out byte for byte as it came in (quotes and
 * all); only empty cells (the column default), the null token (NULL), uuids that are not in
 * canonical form, booleans, dates and timestamps are rewritten, and those are validated as the
 * import's coercion validates them (src/import/coerce.ts). jsonb text is syntax-checked in place
 * (validJson); the database has the last word on the rest (a refused row's batch is then split
 * down to the row).
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

const COMMA = 44;
const QUOTE = 34;
const LF = 10;
const CR = 13;
const BACKSLASH = 92;
const DOT = 46;
/** Bytes that end or break an unquoted field (the delimiter, LF, CR, `"`): one table load per byte instead of four compares. */
function specialBytes(delim: number): Uint8Array {
  const t = new Uint8Array(256);
  t[delim] = 1;
  t[LF] = 1;
  t[CR] = 1;
  t[QUOTE] = 1;
  t[0] = 1; // NUL: PostgreSQL text cannot hold it; the field takes the record path (a local reject)
  return t;
}
const SPECIAL_COMMA = specialBytes(COMMA);
/** Bytes a quoted field's scan stops at (`"`, and LF to count lines). */
const IN_QUOTES = new Uint8Array(256);
IN_QUOTES[QUOTE] = 1;
IN_QUOTES[LF] = 1;
IN_QUOTES[0] = 1;

const K_TEXT = 0;
const K_UUID = 1;
const K_BOOL = 2;
const K_DATE = 3;
const K_TIMESTAMP = 4;
const K_JSON = 5;

/** How one input field is written. */
export interface FieldPlan {
  kind: number;
  nullable: boolean;
  /** COPY text of the column's constant default, or null when it is volatile. */
  empty: Buffer | null;
  /** Position of this field in the conflict key, or -1. */
  keyPart: number;
  /** A link field that takes `;`-separated keys: a cell that is not JSON goes as a JSON string. */
  keyList: boolean;
}

function kindOf(col: ColumnDef): number {
  switch (col.type) {
    case 'uuid':
      return K_UUID;
    case 'boolean':
      return K_BOOL;
    case 'date':
      return K_DATE;
    case 'timestamp with time zone':
      return K_TIMESTAMP;
    case 'jsonb':
      return K_JSON;
    default:
      return K_TEXT;
  }
}

function emptyText(col: ColumnDef): Buffer | null {
  const d = knownDefault(col);
  if (d === undefined) return null;
  if (d === null) return Buffer.alloc(0);
  if (typeof d === 'boolean') return Buffer.from(d ? 't' : 'f');
  const s = String(d);
  return Buffer.from(s === '' ? '""' : `"${s.replace(/"/g, '""')}"`);
}

/**
 * The plan of every input field (null for fields the import does not write), for a header whose
 * fields resolve to `cols` (null where unmapped), with the conflict key's columns in key order.
 */
export function fieldPlans(cols: Array<ColumnDef | null>, keyColumns: string[] | null): Array<FieldPlan | null> {
  return cols.map((col) =>
    col ? { kind: kindOf(col), nullable: col.nullable, empty: emptyText(col), keyPart: keyColumns ? keyColumns.indexOf(col.name) : -1, keyList: col.keyList !== undefined } : null,
  );
}

function isHex(b: number): boolean {
  return (b >= 48 && b <= 57) || (b >= 97 && b <= 102);
}

/** 36 bytes of lower-case hex in 8-4-4-4-12 groups: PostgreSQL's own output form. */
function canonicalUuid(buf: Uint8Array, a: number, b: number): boolean {
  if (b - a !== 36) return false;
  for (let i = 0; i < 36; i++) {
    const c = buf[a + i];
    if (i === 8 || i === 13 || i === 18 || i === 23) {
      if (c !== 45) return false;
    } else if (!isHex(c)) return false;
  }
  return true;
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
  key: string | null = null;
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
  private readonly special: Uint8Array;

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
    this.delim = delimiter.charCodeAt(0);
    this.special = this.delim === COMMA ? SPECIAL_COMMA : specialBytes(this.delim);
    this.nullToken = nullToken === null ? null : Buffer.from(nullToken);
    this.keyParts = new Array<string | null>(keyLength).fill(null);
    this.allMapped = plans.every((plan) => plan !== null);
  }

  /**
   * The record at buf[p..n). With `out`, writes its COPY line at out[o..]; without, only reads it
   * (the key scan). `eof`: no more input follows `n`.
   *
   * One function of ~240 lines on purpose: it is the import's hot loop (every byte of a CSV file
   * passes through it once), and its state (position, quote state, field index, key parts) lives in
   * locals rather than fields or closures read on every byte. (Not split for that reason.)
   */
  record(buf: Buffer, p: number, n: number, eof: boolean, out: Buffer | null, o: number): number {
    const plans = this.plans;
    const nFields = plans.length;
    const DELIM = this.delim;
    const SPECIAL = this.special;
    // a MALFORMED record gives up the rest of the buffer (the import stops there)
    this.next = n;
    this.lines = 0;
    this.key = null;
    let status = OK;
    let lines = 0;
    let field = 0;
    let wrote = 0;
    const start = o;
    // with every field in the output, the COPY line is the record's own bytes but for the fields
    // rewritten: [runStart, field start) is copied in one go when a rewritten field (or the end) comes
    // (only for comma input: another delimiter's lines are written field by field, with commas)
    const run = out !== null && this.allMapped && DELIM === COMMA;
    let runStart = p;
    let lastEnd = p;
    const cap = out ? out.length : 0;
    for (let k = 0; k < this.keyParts.length; k++) this.keyParts[k] = null;
    for (;;) {
      // ---- find the field: [a, b) is its raw text (quotes included), [ca, cb) its content
      let a = p;
      let b: number;
      let ca: number;
      let cb: number;
      let quoted = false;
      let escaped = false;
      let nul = false;
      let end: number; // what follows: DELIM, LF (record end), or -1 (end of input)
      let after: number; // position after the separator / line end
      if (p < n && buf[p] === QUOTE) {
        quoted = true;
        // one pass to the closing quote, counting line ends on the way (a doubled quote is content)
        let close = p + 1;
        let nl = 0;
        for (;;) {
          while (close < n && IN_QUOTES[buf[close]] === 0) close++;
          if (close < n && buf[close] === LF) {
            nl++;
            close++;
            continue;
          }
          if (close < n && buf[close] === 0) {
            nul = true;
            close++;
            continue;
          }
          if (close >= n || (close + 1 >= n && !eof)) {
            if (!eof) return MORE;
            return MALFORMED;
          }
          if (close + 1 < n && buf[close + 1] === QUOTE) {
            escaped = true;
            close += 2;
            continue;
          }
          break;
        }
        lines += nl;
        ca = p + 1;
        cb = close;
        b = close + 1;
        if (b >= n) {
          end = -1;
          after = b;
        } else {
          const c = buf[b];
          if (c === DELIM) {
            end = DELIM;
            after = b + 1;
          } else if (c === LF) {
            end = LF;
            after = b + 1;
          } else if (c === CR) {
            if (b + 1 >= n && !eof) return MORE;
            if (b + 1 >= n) {
              end = -1;
              after = b + 1;
            } else if (buf[b + 1] === LF) {
              end = LF;
              after = b + 2;
            } else return MALFORMED;
          } else return MALFORMED;
        }
      } else {
        let i = p;
        for (; i < n; i++) {
          while (i < n && SPECIAL[buf[i]] === 0) i++;
          if (i >= n) break;
          const c = buf[i];
          if (c === DELIM || c === LF) break;
          if (c === CR && i + 1 < n && buf[i + 1] === LF) break;
          if (c === QUOTE) return MALFORMED;
          if (c === 0) nul = true;
        }
        if (i >= n) {
          if (!eof) return MORE;
          end = -1;
          after = n;
        } else if (buf[i] === CR) {
          end = LF;
          after = i + 2;
        } else {
          end = buf[i];
          after = i + 1;
        }
        // a lone CR at the very end of the buffer: the record may end with CRLF
        if (end === -1 && i > p && buf[i - 1] === CR) i--;
        b = i;
        ca = a;
        cb = b;
      }
      if (end === DELIM && after >= n) {
        // a separator at the very end of the buffer: one more (empty) field follows
        if (!eof) return MORE;
      }

      // ---- write it
      if (field >= nFields) {
        if (status !== MALFORMED) status = RAGGED;
      } else {
        const plan = plans[field];
        if (plan !== null && status !== RAGGED && (!this.keysOnly || plan.keyPart >= 0 || (this.checkDates && plan.kind === K_DATE))) {
          let text: Buffer | null = null; // a replacement; null = the raw bytes [a, b)
          let raw = true;
          const len = cb - ca;
          const tok = this.nullToken;
          let isNull = false;
          if (tok !== null && len === tok.length && !escaped) {
            isNull = true;
            for (let i = 0; i < len; i++) {
              if (buf[ca + i] !== tok[i]) {
                isNull = false;
                break;
              }
            }
          }
          if (nul) status = REFUSED;
          else if (isNull) {
            if (!plan.nullable) status = REFUSED;
            text = EMPTY;
          } else if (len === 0) {
            if (plan.empty === null) {
              if (status === OK) status = NEEDS_JSON;
            } else text = plan.empty;
          } else {
            switch (plan.kind) {
              case K_JSON:
                if (!validJson(buf, ca, cb, escaped)) {
                  // keys as text (`ISRC;ISRC`): a JSON string, CSV-quoted, for the database to resolve
                  if (plan.keyList) text = Buffer.from(`"${JSON.stringify(content(buf, ca, cb, escaped)).replace(/"/g, '""')}"`);
                  else status = REFUSED;
                  break;
                }
              // falls through
              case K_TEXT:
                // `\.` alone would end COPY's data: quote it
                if (!quoted && len === 2 && buf[ca] === BACKSLASH && buf[ca + 1] === DOT) text = QUOTED_END;
                break;
              case K_UUID:
                if (quoted || !canonicalUuid(buf, ca, cb)) {
                  const u = normalizeUuid(content(buf, ca, cb, escaped));
                  if (u === null) status = REFUSED;
                  else text = Buffer.from(u);
                }
                break;
              case K_BOOL: {
                const s = content(buf, ca, cb, escaped).trim().toLowerCase();
                if (TRUE.has(s)) text = T;
                else if (FALSE.has(s)) text = F;
                else status = REFUSED;
                break;
              }
              case K_DATE: {
                const s = content(buf, ca, cb, escaped).trim();
                const m = DATE.exec(s);
                if (!m || !validDate(+m[1], +m[2], +m[3])) status = REFUSED;
                else if (quoted || s.length !== len) text = Buffer.from(s);
                break;
              }
              case K_TIMESTAMP: {
                if (!quoted && isoInstant(buf, ca, cb)) break;
                const s = content(buf, ca, cb, escaped);
                if (!validInstant(s)) status = REFUSED;
                else if (quoted || s.trim().length !== len) text = Buffer.from(`"${s.trim().replace(/"/g, '""')}"`);
                break;
              }
            }
            if (plan.keyPart >= 0) {
              this.keyParts[plan.keyPart] =
                plan.kind === K_UUID ? (text !== null ? text.toString('latin1') : status === REFUSED ? null : buf.toString('latin1', ca, cb)) : keyText(plan, buf, ca, cb, escaped);
            }
          }
          if (run && status === OK) {
            lastEnd = b;
            if (text !== null && !(text.length === 0 && a === b)) {
              const len = a - runStart;
              if (o + len + text.length + 2 > cap) status = OVERFLOW;
              else {
                o = copyRange(buf, runStart, a, out as Buffer, o);
                o = copyRange(text, 0, text.length, out as Buffer, o);
                runStart = b;
              }
            }
          } else if (out !== null && status === OK) {
            if (text !== null) raw = false;
            // an unquoted field of a `;`/tab/`|` file may hold commas: quoted in the comma-separated COPY line
            const wrap = raw && !quoted && DELIM !== COMMA && hasByte(buf, a, b, COMMA) ? 2 : 0;
            const size = raw ? b - a : (text as Buffer).length;
            if (o + size + wrap + 2 > cap) status = OVERFLOW;
            else {
              if (wrote > 0) out[o++] = COMMA;
              if (wrap) out[o++] = QUOTE;
              if (raw) o = copyRange(buf, a, b, out, o);
              else o = copyRange(text as Buffer, 0, size, out, o);
              if (wrap) out[o++] = QUOTE;
              wrote++;
            }
          }
        }
      }
      field++;
      p = after;
      if (end !== DELIM) {
        lines++;
        break;
      }
    }
    if (field !== nFields && status !== MALFORMED) status = RAGGED;
    if (run && status === OK) {
      if (o + (lastEnd - runStart) + 1 > cap) status = OVERFLOW;
      else {
        o = copyRange(buf, runStart, lastEnd, out as Buffer, o);
        (out as Buffer)[o++] = LF;
      }
    } else if (out !== null && status === OK) {
      if (o + 1 > cap) status = OVERFLOW;
      else out[o++] = LF;
    }
    this.next = p;
    this.lines = lines;
    this.outEnd = status === OK ? o : start;
    let key: string | null = null;
    for (let k = 0; k < this.keyParts.length; k++) {
      const part = this.keyParts[k];
      if (part === null) {
        key = null;
        break;
      }
      key = k === 0 ? part : `${key}\u0000${part}`;
    }
    this.key = key;
    return status;
  }
}

const EMPTY = Buffer.alloc(0);

function hasByte(buf: Uint8Array, a: number, b: number, byte: number): boolean {
  for (let i = a; i < b; i++) if (buf[i] === byte) return true;
  return false;
}
const T = Buffer.from('t');
const F = Buffer.from('f');
const QUOTED_END = Buffer.from('"\\."');

function digits(buf: Uint8Array, a: number, n: number): number {
  let v = 0;
  for (let i = a; i < a + n; i++) {
    const d = buf[i] - 48;
    if (d < 0 || d > 9) return -1;
    v = v * 10 + d;
  }
  return v;
}

/**
 * The common spelling of a timestamptz, checked as bytes: `YYYY-MM-DDTHH:MM:SS[.f{1,6}]` then `Z`
 * or `±HH:MM` (what PostgreSQL, JavaScript and most exports write). Anything else takes the text
 * check (validInstant), which accepts more.
 */
function isoInstant(buf: Uint8Array, a: number, b: number): boolean {
  if (b - a < 20) return false;
  const y = digits(buf, a, 4);
  const mo = digits(buf, a + 5, 2);
  const d = digits(buf, a + 8, 2);
  const h = digits(buf, a + 11, 2);
  const mi = digits(buf, a + 14, 2);
  const sec = digits(buf, a + 17, 2);
  if (y < 0 || mo < 0 || d < 0 || h < 0 || mi < 0 || sec < 0) return false;
  if (buf[a + 4] !== 45 || buf[a + 7] !== 45 || (buf[a + 10] !== 84 && buf[a + 10] !== 32) || buf[a + 13] !== 58 || buf[a + 16] !== 58) return false;
  if (!validDate(y, mo, d) || h > 24 || mi > 59 || sec > 60) return false;
  let i = a + 19;
  if (buf[i] === DOT) {
    const f = ++i;
    while (i < b && buf[i] >= 48 && buf[i] <= 57) i++;
    if (i === f || i - f > 6) return false;
  }
  if (i === b - 1) return buf[i] === 90 || buf[i] === 122; // Z z
  if (i !== b - 6 || (buf[i] !== 43 && buf[i] !== 45) || buf[i + 3] !== 58) return false;
  return digits(buf, i + 1, 2) >= 0 && digits(buf, i + 4, 2) >= 0;
}

/**
 * Whether buf[a..b) is one JSON value (RFC 8259 syntax), read in place; in a quoted CSV field
 * (`escaped`) every `"` of the JSON text is written twice. PostgreSQL's own parser has the last
 * word (it also refuses `\u0000`); this only spares the round trip for what is plainly not JSON.
 */
export function validJson(buf: Uint8Array, a: number, b: number, escaped: boolean): boolean {
  jBuf = buf;
  jAt = a;
  jEnd = b;
  jQ = escaped ? 2 : 1;
  jDepth = 0;
  let ok = jValue();
  if (ok) {
    jWs();
    ok = jAt === b;
  }
  jBuf = EMPTY; // (the cell's chunk is not kept alive by this module)
  return ok;
}

// validJson's reader state: module-level (not closures made per call) so that checking 400k
// JSON cells allocates nothing
let jBuf: Uint8Array = EMPTY;
let jAt = 0;
let jEnd = 0;
let jQ = 1;
let jDepth = 0;

function jWs(): void {
  const buf = jBuf;
  while (jAt < jEnd) {
    const c = buf[jAt];
    if (c === 32 || c === 9 || c === 10 || c === 13) jAt++;
    else break;
  }
}

function jQuote(): boolean {
  return jBuf[jAt] === QUOTE && (jQ === 1 || jBuf[jAt + 1] === QUOTE);
}

function jStr(): boolean {
  const buf = jBuf;
  const q = jQ;
  const b = jEnd;
  let i = jAt + q;
  while (i < b) {
    const c = buf[i];
    if (c === QUOTE) {
      if (q === 2 && buf[i + 1] !== QUOTE) return false;
      jAt = i + q;
      return true;
    }
    if (c < 32) return false;
    if (c === BACKSLASH) {
      const e = buf[i + 1];
      if (e === QUOTE) i += 1 + q;
      else if (e === 117) {
        for (let k = 2; k < 6; k++) {
          const h = buf[i + k] | 32;
          if (!((h >= 48 && h <= 57) || (h >= 97 && h <= 102))) return false;
        }
        i += 6;
      } else if (e === BACKSLASH || e === 47 || e === 98 || e === 102 || e === 110 || e === 114 || e === 116) i += 2;
      else return false;
      continue;
    }
    i++;
  }
  return false;
}

function jDigits(): boolean {
  const f = jAt;
  while (jAt < jEnd && jBuf[jAt] >= 48 && jBuf[jAt] <= 57) jAt++;
  return jAt > f;
}

function jNum(): boolean {
  const buf = jBuf;
  if (buf[jAt] === 45) jAt++;
  if (buf[jAt] === 48) jAt++;
  else if (!jDigits()) return false;
  if (buf[jAt] === DOT) {
    jAt++;
    if (!jDigits()) return false;
  }
  if (buf[jAt] === 101 || buf[jAt] === 69) {
    jAt++;
    if (buf[jAt] === 43 || buf[jAt] === 45) jAt++;
    if (!jDigits()) return false;
  }
  return true;
}

function jWord(w: string): boolean {
  for (let k = 0; k < w.length; k++) if (jBuf[jAt + k] !== w.charCodeAt(k)) return false;
  jAt += w.length;
  return true;
}

function jValue(): boolean {
  jWs();
  if (jAt >= jEnd) return false;
  const c = jBuf[jAt];
  if (c === QUOTE) return jQuote() && jStr();
  if (c === 123 || c === 91) {
    if (++jDepth > MAX_JSON_DEPTH) return false;
    const close = c === 123 ? 125 : 93;
    jAt++;
    jWs();
    if (jBuf[jAt] === close) {
      jAt++;
      jDepth--;
      return true;
    }
    for (;;) {
      if (c === 123) {
        jWs();
        if (!(jQuote() && jStr())) return false;
        jWs();
        if (jBuf[jAt] !== 58) return false;
        jAt++;
      }
      if (!jValue()) return false;
      jWs();
      if (jBuf[jAt] === 44) {
        jAt++;
        continue;
      }
      if (jBuf[jAt] !== close) return false;
      jAt++;
      jDepth--;
      return true;
    }
  }
  if (c === 116) return jWord('true');
  if (c === 102) return jWord('false');
  if (c === 110) return jWord('null');
  return jNum();
}

/** A field's content as text (quotes removed, doubled quotes undone). */
function content(buf: Buffer, a: number, b: number, escaped: boolean): string {
  const s = buf.toString('utf8', a, b);
  return escaped ? s.replace(/""/g, '"') : s;
}

/** A key part as keyOf would make it from the coerced value (uuids in canonical form, booleans as JSON). */
function keyText(plan: FieldPlan, buf: Buffer, a: number, b: number, escaped: boolean): string | null {
  const s = content(buf, a, b, escaped);
  switch (plan.kind) {
    case K_UUID:
      return normalizeUuid(s);
    case K_BOOL: {
      const v = s.trim().toLowerCase();
      return TRUE.has(v) ? 'true' : FALSE.has(v) ? 'false' : null;
    }
    case K_DATE:
    case K_TIMESTAMP:
      return s.trim();
    case K_JSON:
      if (plan.keyList) return s; // a credits cell's names, read by the match stage (--create-missing)
      try {
        return JSON.stringify(JSON.parse(s));
      } catch {
        return null;
      }
    default:
      return s;
  }
}

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

  private constructor(
    private readonly fh: FileHandle,
    private readonly reuse: boolean,
    private readonly path: string,
  ) {}

  /** `reuse`: nothing keeps a record's bytes after the next `fill` (a scan), so one buffer serves the whole file. */
  static async open(path: string, opts: { reuse?: boolean } = {}): Promise<ByteCsvFile> {
    return new ByteCsvFile(await open(path, 'r'), opts.reuse ?? false, path);
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
    const { bytesRead } = await this.fh.read(next, rest, CHUNK, this.filePos);
    this.filePos += bytesRead;
    if (bytesRead === 0) this.eof = true;
    this.buf = next.subarray(0, rest + bytesRead);
    this.p = 0;
  }

  /** Bytes of the file consumed so far. */
  bytesRead(): number {
    return this.filePos - (this.buf.length - this.p);
  }

  close(): Promise<void> {
    return this.fh.close();
  }
}
