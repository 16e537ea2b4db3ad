/**
 * One codec per column type (uuid, text, boolean, date, timestamp with time zone, jsonb): how a
 * value of the type is read from text, checked as bytes in the import's hot loop, normalised as a
 * natural key part, and written in a COPY CSV line. The import's coercion, its byte transcoder,
 * the CLI's value checks and the key comparisons all read a type's rules here, so they agree.
 *
 * Timestamps: a `timestamp with time zone` must say its zone (`Z`, `+01`, `+01:00`). PostgreSQL
 * would read a zone-less text in the session's time zone, which differs between the embedded
 * catalog, a server and the machine that wrote the file, so the same file could land at different
 * instants; import refuses it (22007) and so does the CLI.
 */
import { BACKSLASH, QUOTE } from '../format/byte-codes.js';
import { jsonTextTooDeep, MAX_JSON_DEPTH, tooDeepMessage } from './json-depth.js';

/** What a column's type is, for the checks here (every type not named reads as text). */
export const K_TEXT = 0;
export const K_UUID = 1;
export const K_BOOL = 2;
export const K_DATE = 3;
export const K_TIMESTAMP = 4;
export const K_JSON = 5;
export type Kind = 0 | 1 | 2 | 3 | 4 | 5;

/**
 * The one switch on a column's PostgreSQL type.
 * @example columnKind('timestamp with time zone') === K_TIMESTAMP // true
 */
export function columnKind(type: string): Kind {
  switch (type) {
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

/** A value read from text, or why the text is not one (code and message as PostgreSQL gives them). */
export type Parsed = { ok: true; value: unknown } | { ok: false; code: string; message: string };

const ok = (value: unknown): Parsed => ({ ok: true, value });
const bad = (code: string, message: string): Parsed => ({ ok: false, code, message });

// ---- uuid

/** A uuid as PostgreSQL prints it (either case): what the ids in tables, links and id files look like. */
export const UUID_TEXT = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const UUID = /^\{?([0-9a-f]{8})-?([0-9a-f]{4})-?([0-9a-f]{4})-?([0-9a-f]{4})-?([0-9a-f]{12})\}?$/i;

/**
 * Normalises a uuid (braces, no hyphens, upper case) to PostgreSQL's output form, or null.
 * @example normalizeUuid('{A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11}') // 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'
 */
export function normalizeUuid(s: string): string | null {
  const m = UUID.exec(s.trim());
  return m ? `${m[1]}-${m[2]}-${m[3]}-${m[4]}-${m[5]}`.toLowerCase() : null;
}

/**
 * Whether a text is a uuid in a spelling PostgreSQL reads (what normalizeUuid accepts).
 * @example isUuid('3f2a9c1e8b1d4e7a9c550d6f1b2a4e10') // true
 */
export function isUuid(s: string): boolean {
  return normalizeUuid(s) !== null;
}

/**
 * Whether buf[a, b) is 36 bytes of lower-case hex in 8-4-4-4-12 groups: PostgreSQL's own output form.
 * @example canonicalUuid(Buffer.from('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'), 0, 36) // true
 */
export function canonicalUuid(buf: Uint8Array, a: number, b: number): boolean {
  if (b - a !== 36) return false;
  for (let i = 0; i < 36; i++) if (UUID_CLASS[buf[a + i]] !== UUID_SHAPE[i]) return false;
  return true;
}

/** canonicalUuid's tables (one load and compare per byte, the import's hot loop): a byte's class (1 lower-case hex, 2 `-`, else 0) and the class each place of the form wants. */
const UUID_CLASS = new Uint8Array(256);
for (const c of '0123456789abcdef') UUID_CLASS[c.charCodeAt(0)] = 1;
UUID_CLASS[45] = 2;
const UUID_SHAPE = new Uint8Array(36).fill(1);
for (const i of [8, 13, 18, 23]) UUID_SHAPE[i] = 2;

// ---- boolean

const TRUE = new Set(['true', 't', 'yes', 'y', 'on', '1']);
const FALSE = new Set(['false', 'f', 'no', 'n', 'off', '0']);

/**
 * A boolean word (true/false, t/f, yes/no, y/n, on/off, 1/0, any case, spaces around) as a boolean, or null.
 * @example booleanWord(' Yes ') // true
 */
export function booleanWord(s: string): boolean | null {
  const v = s.trim().toLowerCase();
  return TRUE.has(v) ? true : FALSE.has(v) ? false : null;
}

// ---- date

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Whether y-m-d is a day of the calendar. */
export function validDate(y: number, m: number, d: number): boolean {
  if (m < 1 || m > 12 || d < 1) return false;
  return d <= (m === 2 && y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0) ? 29 : MONTH_DAYS[m - 1]);
}

const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * `YYYY-MM-DD` (spaces around allowed) of a real day, trimmed; 'syntax' or 'range' when not.
 * @example dateText(' 2024-02-29 ') // '2024-02-29'
 */
export function dateText(s: string): string | 'syntax' | 'range' {
  const t = s.trim();
  const m = DATE.exec(t);
  if (!m) return 'syntax';
  return validDate(+m[1], +m[2], +m[3]) ? t : 'range';
}

// ---- timestamp with time zone

const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)$/i;
/** Date and time without a zone: what the messages below point out. */
const ZONELESS = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?$/i;

/**
 * A comparable key for a timestamptz text (the instant, to the microsecond), or null when it is
 * not ISO 8601 with a zone.
 * @example instantKey('2024-01-15 09:00:00+01') === instantKey('2024-01-15T08:00:00.000000Z') // true
 */
export function instantKey(s: string): string | null {
  const m = TIMESTAMP.exec(s.trim());
  if (!m) return null;
  const [, y, mo, d, h, mi, sec = '0', frac = '', zone] = m;
  if (!validDate(+y, +mo, +d) || +h > 24 || +mi > 59 || +sec > 60) return null;
  let offsetMin = 0;
  if (zone.toUpperCase() !== 'Z') {
    const z = zone.replace(':', '');
    offsetMin = (z[0] === '-' ? -1 : 1) * (Number(z.slice(1, 3)) * 60 + Number(z.slice(3, 5) || '0'));
  }
  const ms = Date.UTC(+y, +mo - 1, +d, +h, +mi, +sec) - offsetMin * 60_000;
  return `${ms}.${frac.padEnd(6, '0')}`;
}

/**
 * Whether a text is an ISO 8601 timestamp with a zone (what instantKey accepts), without computing the instant.
 * @example validInstant('2024-01-15T09:00:00') // false: no zone
 */
export function validInstant(s: string): boolean {
  const m = TIMESTAMP.exec(s);
  if (!m) return s !== s.trim() && instantKey(s) !== null;
  return validDate(+m[1], +m[2], +m[3]) && +m[4] <= 24 && +m[5] <= 59 && +(m[6] ?? 0) <= 60;
}

/** Why a text is not a timestamp with a zone, for a message: names the missing zone when that is all that is missing. */
export function timestampHint(s: string): string {
  return ZONELESS.test(s.trim())
    ? 'it has no time zone: add Z or an offset, e.g. 2024-01-31T12:00:00Z or 2024-01-31T12:00:00+01:00'
    : 'use ISO 8601 with a zone, e.g. 2024-01-31T12:00:00Z';
}

/** The number written in buf[a, a+n) as decimal digits, or -1. */
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
 * The common spelling of a timestamptz, checked as bytes: `YYYY-MM-DDTHH:MM:SS[.f{1,6}]` then `Z`,
 * `±HH:MM`, `±HHMM` or `±HH` (what PostgreSQL, JavaScript and most exports write: PostgreSQL's
 * `+00` took the regular expression, a tenth of an import's CPU for a file of its exports).
 * Anything else takes the text check (validInstant), which accepts more.
 * @example isoInstant(Buffer.from('2024-01-15T09:00:00Z'), 0, 20) // true
 */
export function isoInstant(buf: Uint8Array, a: number, b: number): boolean {
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
  if (buf[i] === 46) {
    const f = ++i;
    while (i < b && buf[i] >= 48 && buf[i] <= 57) i++;
    if (i === f || i - f > 6) return false;
  }
  if (i === b - 1) return buf[i] === 90 || buf[i] === 122; // Z z
  if (buf[i] !== 43 && buf[i] !== 45) return false;
  // ±HH (PostgreSQL's own output, `+00`), ±HH:MM, ±HHMM: the zones the text check takes
  if (i === b - 3) return digits(buf, i + 1, 2) >= 0;
  if (i === b - 5) return digits(buf, i + 1, 4) >= 0;
  if (i !== b - 6 || buf[i + 3] !== 58) return false;
  return digits(buf, i + 1, 2) >= 0 && digits(buf, i + 4, 2) >= 0;
}

// ---- jsonb

/** Whether a JSON value holds a NUL character in any string or key. */
export function jsonHasNul(v: unknown): boolean {
  if (typeof v === 'string') return v.includes('\u0000');
  if (v === null || typeof v !== 'object') return false;
  if (Array.isArray(v)) return v.some(jsonHasNul);
  for (const k in v as Record<string, unknown>) if (k.includes('\u0000') || jsonHasNul((v as Record<string, unknown>)[k])) return true;
  return false;
}

/**
 * JSON text as the jsonb value it is, or why not (too deep, not JSON, a `\u0000`).
 * @example parseJsonText('{"a":1}') // { ok: true, value: { a: 1 } }
 */
export function parseJsonText(text: string): Parsed {
  // before any recursive walk (JSON.parse, the database's parser): one row refused, not the import
  if (jsonTextTooDeep(text)) return bad('54001', tooDeepMessage());
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return bad('22P02', `invalid input syntax for type json: ${(err as Error).message}`);
  }
  return jsonValue(value);
}

/** A JSON value checked as jsonb takes it (no `\u0000` in any string: PostgreSQL's 22P05). */
export function jsonValue(value: unknown): Parsed {
  if (jsonHasNul(value)) return bad('22P05', 'unsupported Unicode escape sequence (\\u0000 cannot be converted to text.)');
  return ok(value);
}

/**
 * Whether buf[a..b) is one JSON value (RFC 8259 syntax), read in place; in a quoted CSV field
 * (`escaped`) every `"` of the JSON text is written twice. PostgreSQL's own parser has the last
 * word (it also refuses `\u0000`); this only spares the round trip for what is plainly not JSON.
 * @example validJson(Buffer.from('{"a":[1]}'), 0, 9, false) // true
 */
export function validJson(buf: Uint8Array, a: number, b: number, escaped: boolean): boolean {
  jBuf = buf;
  jAt = a;
  jEnd = b;
  jQ = escaped ? 2 : 1;
  jDepth = 0;
  let valid = jValue();
  if (valid) {
    jWs();
    valid = jAt === b;
  }
  jBuf = NONE; // (the cell's chunk is not kept alive by this module)
  return valid;
}

const NONE = new Uint8Array(0);
// validJson's reader state: module-level (not closures made per call) so that checking 400k
// JSON cells allocates nothing
let jBuf: Uint8Array = NONE;
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
  if (buf[jAt] === 46) {
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

/** An object's or array's members after its opening bracket `c` (jAt past it). */
function jMembers(c: number): boolean {
  if (++jDepth > MAX_JSON_DEPTH) return false;
  const close = c === 123 ? 125 : 93;
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

function jValue(): boolean {
  jWs();
  if (jAt >= jEnd) return false;
  const c = jBuf[jAt];
  if (c === QUOTE) return jQuote() && jStr();
  if (c === 123 || c === 91) {
    jAt++;
    return jMembers(c);
  }
  if (c === 116) return jWord('true');
  if (c === 102) return jWord('false');
  if (c === 110) return jWord('null');
  return jNum();
}

// ---- every type: text in, value out; key text; COPY text

/**
 * A cell's text (not empty, not the null token) as the value a column of kind `kind` takes, or
 * why not; jsonb text is parsed (a link field's key list is the caller's business).
 * @example parseText(K_BOOL, 'Yes') // { ok: true, value: true }
 */
export function parseText(kind: Kind, text: string): Parsed {
  switch (kind) {
    case K_UUID: {
      const u = normalizeUuid(text);
      return u ? ok(u) : bad('22P02', `invalid input syntax for type uuid: ${JSON.stringify(text)}`);
    }
    case K_BOOL: {
      const b = booleanWord(text);
      return b === null ? bad('22P02', `invalid input syntax for type boolean: ${JSON.stringify(text)} (use true or false)`) : ok(b);
    }
    case K_DATE: {
      const d = dateText(text);
      if (d === 'syntax') return bad('22007', `invalid input syntax for type date: ${JSON.stringify(text)} (use YYYY-MM-DD)`);
      if (d === 'range') return bad('22008', `date/time field value out of range: ${JSON.stringify(text)}`);
      return ok(d);
    }
    case K_TIMESTAMP:
      if (!validInstant(text)) return bad('22007', `invalid input syntax for type timestamp with time zone: ${JSON.stringify(text)} (${timestampHint(text)})`);
      return ok(text.trim());
    case K_JSON:
      return parseJsonText(text);
    default:
      // PostgreSQL text cannot hold NUL: refused here, so a dry run rejects what the real run would
      return text.includes('\u0000') ? bad('22021', NUL_MESSAGE) : ok(text);
  }
}

const NUL_MESSAGE = 'invalid byte sequence for encoding "UTF8": 0x00 (text cannot hold a NUL character)';

/**
 * A natural key part as the coerced value gives it (uuids in canonical form, booleans as JSON,
 * dates and timestamps trimmed, jsonb re-serialised), or null when the text is not a value of the type.
 * @example keyPart(K_UUID, 'A0EEBC999C0B4EF8BB6D6BB9BD380A11') // 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'
 */
export function keyPart(kind: Kind, text: string): string | null {
  switch (kind) {
    case K_UUID:
      return normalizeUuid(text);
    case K_BOOL: {
      const b = booleanWord(text);
      return b === null ? null : String(b);
    }
    case K_DATE:
    case K_TIMESTAMP:
      return text.trim();
    case K_JSON:
      try {
        return JSON.stringify(JSON.parse(text));
      } catch {
        return null;
      }
    default:
      return text;
  }
}

/**
 * A known value's text in a COPY CSV line (booleans `t`/`f`, the empty string `""`, quotes doubled).
 * @example copyText('a "b"') // '"a ""b"""'
 */
export function copyText(value: string | number | boolean): string {
  if (typeof value === 'boolean') return value ? 't' : 'f';
  const s = String(value);
  return `"${s.replaceAll('"', '""')}"`;
}
