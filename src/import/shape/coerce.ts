import type { ColumnDef } from '../../schema/catalog.js';
import { columnKind, jsonValue, K_BOOL, K_JSON, K_TEXT, parseJsonText, parseText, type Parsed } from '../../schema/codecs.js';
import { tooDeepMessage, valueTooDeep } from '../../schema/json-depth.js';

/** Marker: leave the key out so the column takes its DEFAULT (`Prefer: missing=default`). */
export const OMIT: unique symbol = Symbol('omit');

/** A coerced value, or why the source value cannot go into the column (code mimics PostgreSQL's). */
export type Coerced = Parsed;

// the type rules live with the codecs (src/schema/codecs.ts); re-exported for the import's other modules
export { instantKey, normalizeUuid } from '../../schema/codecs.js';

const ok = (value: unknown): Coerced => ({ ok: true, value });
const bad = (code: string, message: string): Coerced => ({ ok: false, code, message });

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
  const kind = columnKind(col.type);
  if (kind === K_JSON) return fromText ? jsonCell(col, raw as string) : valueTooDeep(raw) ? bad('54001', tooDeepMessage()) : jsonValue(raw);
  if (typeof raw === 'string') return parseText(kind, raw);
  if (kind === K_TEXT) {
    if (typeof raw === 'number' || typeof raw === 'boolean') return ok(String(raw));
    return bad('22P02', `invalid text for ${col.name}: expected a string, got ${JSON.stringify(raw)}`);
  }
  if (kind === K_BOOL) return typeof raw === 'boolean' ? ok(raw) : parseText(kind, String(raw));
  // a number or object for a uuid, date or timestamp: its JSON text, which is never one, names it in the message
  return parseText(kind, JSON.stringify(raw));
}

/** A jsonb cell's text: JSON, or (for a link field) keys as text for the database to resolve. */
function jsonCell(col: ColumnDef, raw: string): Coerced {
  const r = parseJsonText(raw);
  if (!r.ok && r.code === '22P02' && col.keyList) return jsonValue(raw);
  // one key that reads as a JSON number or boolean (a track key `2`): a list of one key
  if (r.ok && col.keyList && (typeof r.value === 'number' || typeof r.value === 'boolean')) return jsonValue(raw.trim());
  return r;
}
