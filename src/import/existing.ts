import type { ColumnDef } from '../schema/catalog.js';
import { instantKey, normalizeUuid } from './coerce.js';
import type { Transport } from './transport.js';
import { faultOf } from './transport.js';

/** Longest query string a lookup builds; proxies and node:http cap request lines near 8–16 KB. */
const MAX_QUERY_CHARS = 6000;
/** Most keys per lookup, so a server's max-rows cap (if any) does not truncate the answer. */
const MAX_KEYS = 200;

/**
 * Quotes a value for a PostgREST `in.(…)` list when it contains reserved characters.
 * @example inListValue('a,b') // '"a,b"'
 */
export function inListValue(v: string): string {
  return /[,()"\\:\s]/.test(v) || v === '' ? `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"` : v;
}

/** Lookup failed: the server answered something other than rows. */
export class LookupError extends Error {
  constructor(readonly status: number, readonly code: string, message: string) {
    super(message);
    this.name = 'LookupError';
  }
}

/**
 * Fetches the rows whose `keyColumn` is one of `keys`, selecting `select`, in as many GETs as the
 * URL length needs. Returns key → row.
 */
export async function fetchExisting(
  transport: Transport,
  table: string,
  keyColumn: ColumnDef,
  keys: string[],
  select: string[],
): Promise<Map<string, Record<string, unknown>>> {
  const found = new Map<string, Record<string, unknown>>();
  const selectPart = `select=${select.map(encodeURIComponent).join(',')}`;
  let i = 0;
  while (i < keys.length) {
    const parts: string[] = [];
    let len = selectPart.length + keyColumn.name.length + 10;
    while (i < keys.length && parts.length < MAX_KEYS) {
      const p = encodeURIComponent(inListValue(keys[i]));
      if (parts.length > 0 && len + p.length + 1 > MAX_QUERY_CHARS) break;
      parts.push(p);
      len += p.length + 1;
      i++;
    }
    const res = await transport.send({
      method: 'GET',
      path: `/${table}`,
      query: `${selectPart}&${encodeURIComponent(keyColumn.name)}=in.(${parts.join(',')})`,
      headers: { Accept: 'application/json' },
    });
    if (res.status !== 200 && res.status !== 206) {
      const f = faultOf(res);
      throw new LookupError(res.status, f.code, `looking up existing ${table} failed: ${f.code} ${f.message}`);
    }
    for (const row of JSON.parse(res.body) as Record<string, unknown>[]) {
      const k = row[keyColumn.name];
      if (k !== null && k !== undefined) found.set(keyColumn.type === 'uuid' ? (normalizeUuid(String(k)) ?? String(k)) : String(k), row);
    }
  }
  return found;
}

function canonicalJson(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
    .join(',')}}`;
}

/**
 * True when a value the import would write equals the stored one, by the column's type
 * (uuids case-insensitively, timestamps as instants, jsonb ignoring key order).
 * @example sameValue(tsCol, '2024-01-15T09:00:00Z', '2024-01-15T09:00:00+00:00') // true
 */
export function sameValue(col: ColumnDef, mine: unknown, theirs: unknown): boolean {
  if (mine === null || theirs === null || mine === undefined || theirs === undefined) return (mine ?? null) === (theirs ?? null);
  switch (col.type) {
    case 'jsonb':
      return canonicalJson(mine) === canonicalJson(theirs);
    case 'timestamp with time zone':
      return mine === theirs || (instantKey(String(mine)) ?? 'a') === (instantKey(String(theirs)) ?? 'b');
    case 'uuid':
      return String(mine).toLowerCase() === String(theirs).toLowerCase();
    default:
      return mine === theirs;
  }
}

/**
 * The value a column takes when the import leaves it out (`missing=default`), when it is known
 * without asking the database; `undefined` for volatile defaults such as now().
 */
export function knownDefault(col: ColumnDef): unknown {
  if (col.default === undefined) return null;
  if (col.default === "''::text") return '';
  if (col.default === 'false') return false;
  if (col.default === 'true') return true;
  return undefined;
}
