import type { ColumnDef } from '../schema/catalog.js';
import { jsonTextTooDeep, tooDeepMessage, valueTooDeep } from '../schema/json-depth.js';

/** Marker: leave the key out so the column takes its DEFAULT (`Prefer: missing=default`). */
export const OMIT: unique symbol = Symbol('omit');

/** A coerced value, or why the source value cannot go into the column (code mimics PostgreSQL's). */
export type Coerced = { ok: true; value: unknown } | { ok: false; code: string; message: string };


export const UUID = /^\{?([0-9a-f]{8})-?([0-9a-f]{4})-?([0-9a-f]{4})-?([0-9a-f]{4})-?([0-9a-f]{12})\}?$/i;
export const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)$/i;
export const TRUE = new Set(['true', 't', 'yes', 'y', 'on', '1']);
export const FALSE = new Set(['false', 'f', 'no', 'n', 'off', '0']);

const ok = (value: unknown): Coerced => ({ ok: true, value });
const bad = (code: string, message: string): Coerced => ({ ok: false, code, message });

export function validDate(y: number, m: number, d: number): boolean {
  if (m < 1 || m > 12 || d < 1) return false;
  const days = [31, y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
  return d <= days[m - 1];
}

/**
 * Normalises a uuid (braces, no hyphens, upper case) to PostgreSQL's output form, or null.
 * @example normalizeUuid('{A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11}') // 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'
 */
export function normalizeUuid(s: string): string | null {
  const m = UUID.exec(s.trim());
  return m ? `${m[1]}-${m[2]}-${m[3]}-${m[4]}-${m[5]}`.toLowerCase() : null;
}

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

/** Whether a text is an ISO 8601 timestamp with a zone (what instantKey accepts), without computing the instant. */
export function validInstant(s: string): boolean {
  const m = TIMESTAMP.exec(s);
  if (!m) return s !== s.trim() && instantKey(s) !== null;
  return validDate(+m[1], +m[2], +m[3]) && +m[4] <= 24 && +m[5] <= 59 && +(m[6] ?? 0) <= 60;
}

/** Whether a JSON value holds a NUL character in any string or key. */
function hasNul(v: unknown): boolean {
  if (typeof v === 'string') return v.includes('\u0000');
  if (v === null || typeof v !== 'object') return false;
  if (Array.isArray(v)) return v.some(hasNul);
  for (const k in v as Record<string, unknown>) if (k.includes('\u0000') || hasNul((v as Record<string, unknown>)[k])) return true;
  return false;
}

const NUL_MESSAGE = 'invalid byte sequence for encoding "UTF8": 0x00 (text cannot hold a NUL character)';

/**
 * Coerces one source value into a column by the column's type. `fromText` means the value is a
 * CSV cell (text to parse, `''` = column default, `nullToken` = explicit null); otherwise it is a
 * parsed JSON/YAML value (`null` = explicit null, JSON values for jsonb taken as they are).
 * @example coerce(col('is_signed', 'boolean'), 'Yes', true, '\\N') // { ok: true, value: true }
 */
export function coerce(col: ColumnDef, raw: unknown, fromText: boolean, nullToken: string | null): Coerced | typeof OMIT {
  if (raw === undefined) return OMIT;
  if (fromText && nullToken !== null && raw === nullToken) raw = null;
  else if (raw === '' && (fromText || col.type !== 'text')) return OMIT;
  if (raw === null) {
    return col.nullable ? ok(null) : bad('23502', `null value in column "${col.name}" violates not-null constraint`);
  }
  switch (col.type) {
    case 'text':
      // PostgreSQL text cannot hold NUL: refused here, so a dry run rejects what the real run would
      if (typeof raw === 'string') return raw.includes('\u0000') ? bad('22021', NUL_MESSAGE) : ok(raw);
      if (typeof raw === 'number' || typeof raw === 'boolean') return ok(String(raw));
      return bad('22P02', `invalid text for ${col.name}: expected a string, got ${JSON.stringify(raw)}`);
    case 'uuid': {
      const u = typeof raw === 'string' ? normalizeUuid(raw) : null;
      return u ? ok(u) : bad('22P02', `invalid input syntax for type uuid: ${JSON.stringify(raw)}`);
    }
    case 'boolean': {
      if (typeof raw === 'boolean') return ok(raw);
      const s = String(raw).trim().toLowerCase();
      if (TRUE.has(s)) return ok(true);
      if (FALSE.has(s)) return ok(false);
      return bad('22P02', `invalid input syntax for type boolean: ${JSON.stringify(raw)} (use true or false)`);
    }
    case 'date': {
      const m = typeof raw === 'string' ? DATE.exec(raw.trim()) : null;
      if (!m) return bad('22007', `invalid input syntax for type date: ${JSON.stringify(raw)} (use YYYY-MM-DD)`);
      if (!validDate(+m[1], +m[2], +m[3])) return bad('22008', `date/time field value out of range: ${JSON.stringify(raw)}`);
      return ok((raw as string).trim());
    }
    case 'timestamp with time zone': {
      if (typeof raw !== 'string' || !validInstant(raw)) {
        return bad('22007', `invalid input syntax for type timestamp with time zone: ${JSON.stringify(raw)} (use ISO 8601 with a zone, e.g. 2024-01-31T12:00:00Z)`);
      }
      return ok(raw.trim());
    }
    case 'jsonb': {
      let value = raw;
      // before any recursive walk (hasNul, JSON.stringify, the database's parser): one row refused, not the import
      if (fromText ? typeof raw === 'string' && jsonTextTooDeep(raw) : valueTooDeep(raw)) return bad('54001', tooDeepMessage());
      if (fromText) {
        try {
          value = JSON.parse(raw as string);
        } catch (err) {
          // a link field's keys as text (`ISRC;ISRC`, `Name;Name`): the database resolves the string
          if (col.keyList) value = raw;
          else return bad('22P02', `invalid input syntax for type json: ${(err as Error).message}`);
        }
      }
      // jsonb refuses \u0000 in any string (PostgreSQL's 22P05)
      if (hasNul(value)) {
        return bad('22P05', 'unsupported Unicode escape sequence (\\u0000 cannot be converted to text.)');
      }
      return ok(value);
    }
    default:
      return ok(raw); // a type the catalog does not compile (a service's integer, numeric, …): the service parses it
  }
}
