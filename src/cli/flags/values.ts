import { UsageError } from '../errors.js';
import { type ColumnDef as FieldInfo, typeKind } from '../../schema/model.js';
import { booleanWord, dateText, normalizeUuid, timestampHint, validInstant } from '../../schema/codecs.js';

/**
 * True for a real calendar date written YYYY-MM-DD (the date codec's rule, src/schema/codecs.ts).
 * @example isDate('2023-02-29') // false
 */
export function isDate(s: string): boolean {
  const d = dateText(s);
  return d !== 'syntax' && d !== 'range' && d === s;
}

/**
 * True for what a timestamp field takes on the command line: a timestamp with a time zone (the
 * import's rule, src/schema/codecs.ts), or a date alone, which `timestampText` makes the start of
 * that day here. A zone-less time is refused, as import refuses it: the server would read it in its
 * session's zone, not the user's.
 * @example isTimestamp('2024-05-17T12:00:00') // false
 */
export function isTimestamp(s: string): boolean {
  return validInstant(s.trim()) || isDate(s.trim());
}

/** A timestamp field's value as sent: with its zone as given, or a date alone as the start of that local day (as `today` is). */
function timestampText(s: string): string {
  if (!isDate(s.trim())) return s;
  const [y, m, d] = s.trim().split('-').map(Number);
  return new Date(y, m - 1, d).toISOString();
}

const bad = (field: FieldInfo, value: string, expected: string) =>
  new UsageError(`bad value for ${field.name} (${field.type}): '${value}'`, `expected ${expected}`);

/**
 * Checks one textual value against a field's type and returns it in the form PostgreSQL reads
 * (booleans normalised to true/false). Text passes through untouched.
 * @example checkText({ name: 'is_signed', type: 'boolean', … }, 'yes') // 'true'
 */
export function checkText(field: FieldInfo, value: string): string {
  switch (typeKind(field.type)) {
    case 'uuid': {
      const u = normalizeUuid(value);
      if (u === null) throw bad(field, value, 'a UUID such as 3f2a9c1e-8b1d-4e7a-9c55-0d6f1b2a4e10');
      return u;
    }
    case 'boolean': {
      const v = booleanWord(value);
      if (v === null) throw bad(field, value, 'true or false (also yes/no, 1/0)');
      return String(v);
    }
    case 'date':
      if (!isDate(value)) throw bad(field, value, 'a date YYYY-MM-DD, such as 2024-05-17 (in filters also today, yesterday, this-year, last-month, -30d, -2y)');
      return value;
    case 'timestamp':
      if (!isTimestamp(value)) throw bad(field, value, `a timestamp with a time zone such as 2024-05-17T12:00:00Z, or a date (in filters also now-6h, today, -30d): ${timestampHint(value)}`);
      return timestampText(value);
    case 'integer':
      if (!/^-?\d+$/.test(value)) throw bad(field, value, 'a whole number');
      return value;
    case 'number':
      if (!/^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(value)) throw bad(field, value, 'a number');
      return value;
    case 'json':
      try {
        JSON.parse(value);
      } catch {
        throw bad(field, value, 'JSON, such as {"key":"value"} or ["a","b"]');
      }
      return value;
    default:
      return value;
  }
}

/**
 * The JSON value of `FIELD=VALUE` for a request body: text stays text exactly as typed (leading
 * zeros, spaces and all); other types are checked and converted; an empty value of a non-text
 * field is null.
 * @example bodyValue({ name: 'is_signed', type: 'boolean', … }, 'no') // false
 */
export function bodyValue(field: FieldInfo, raw: string): unknown {
  const kind = typeKind(field.type);
  if (kind === 'text' || kind === 'other') return raw;
  if (raw === '' || raw === 'null') return null;
  const v = checkText(field, raw);
  if (kind === 'boolean') return v === 'true';
  if (kind === 'integer' || kind === 'number') return Number(v);
  if (kind === 'json') return JSON.parse(v) as unknown;
  return v;
}

/** Checks a JSON body value (from --json or --file) against a field's type. */
export function checkJsonValue(field: FieldInfo, value: unknown): void {
  if (value === null) return;
  const kind = typeKind(field.type);
  const shown = JSON.stringify(value);
  if (kind === 'json' || kind === 'other') return;
  if (kind === 'boolean') {
    if (typeof value !== 'boolean') throw bad(field, shown, 'true or false');
    return;
  }
  if (kind === 'integer' || kind === 'number') {
    if (typeof value !== 'number' && !(typeof value === 'string' && value.trim() !== '' && !Number.isNaN(Number(value)))) throw bad(field, shown, 'a number');
    return;
  }
  if (typeof value !== 'string') throw bad(field, shown, kind === 'text' ? 'a string' : `a ${field.type} as a string`);
  if (kind !== 'text') checkText(field, value);
}
