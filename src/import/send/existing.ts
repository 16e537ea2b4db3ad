import type { ColumnDef } from '../../schema/catalog.js';
import { columnKind, instantKey, K_JSON, K_TIMESTAMP, K_UUID, normalizeUuid, UUID_TEXT } from '../../schema/codecs.js';
import { keyList } from '../../schema/links.js';
import { faultOf, type Transport } from '../../client/transport.js';
import { SOURCE_IDS } from '../../schema/source-ids.js';
import { inListChunks } from '../../client/in-list.js';
import { inListQuery, rangeQuery } from '../requests.js';

async function getRows(transport: Transport, table: string, query: string): Promise<Record<string, unknown>[]> {
  const res = await transport.send({ method: 'GET', path: `/${table}`, query, headers: { Accept: 'application/json' } });
  if (res.status !== 200 && res.status !== 206) throw faultOf(res, `GET /${table}?${query}`); // the import stops on it
  return JSON.parse(res.body) as Record<string, unknown>[];
}

function keyText(col: ColumnDef, v: unknown): string | null {
  if (v === null || v === undefined) return null;
  return col.type === 'uuid' ? (normalizeUuid(String(v)) ?? String(v)) : String(v);
}

/**
 * Fetches the rows whose `keyColumn` is one of `keys`, selecting `select`, in as many
 * `key=in.(…)` GETs as the URL length needs. Returns key → row.
 */
export async function fetchExisting(
  transport: Transport,
  table: string,
  keyColumn: ColumnDef,
  keys: string[],
  select: string[],
): Promise<Map<string, Record<string, unknown>>> {
  const found = new Map<string, Record<string, unknown>>();
  const fixed = select.join(',').length * 3 + keyColumn.name.length * 3 + 20;
  for (const part of inListChunks(keys, fixed)) {
    const rows = await getRows(transport, table, inListQuery(select, keyColumn.name, part));
    for (const row of rows) {
      const k = keyText(keyColumn, row[keyColumn.name]);
      if (k !== null) found.set(k, row);
    }
  }
  return found;
}

/**
 * Finds which keys of each batch already exist, in as few requests as it can. For uuid keys it
 * first asks for the batch's key range (`id=gte.<min>&id=lte.<max>`, capped at twice the batch):
 * one short request that answers for an empty table (initial loads) and for files sorted by id
 * (exports). When the range holds too many other rows it falls back to `id=in.(…)` lists, and
 * tries the range again every 16 batches.
 */
export class ExistingLookup {
  private rangeUseful = true;
  private sinceMiss = 0;

  constructor(
    private readonly transport: Transport,
    private readonly table: string,
    private readonly keyColumn: ColumnDef,
    private readonly select: string[],
  ) {}

  /** Key → stored row, for the keys that exist. */
  async find(keys: string[]): Promise<Map<string, Record<string, unknown>>> {
    if (keys.length === 0) return new Map();
    const col = this.keyColumn;
    // range order must match the database's: uuids compare bytewise, like their lower-case text
    if (col.type === 'uuid' && keys.length >= 20 && (this.rangeUseful || ++this.sinceMiss >= 16)) {
      let min = keys[0];
      let max = keys[0];
      for (const k of keys) {
        if (k < min) min = k;
        if (k > max) max = k;
      }
      const cap = keys.length * 2;
      const rows = await getRows(this.transport, this.table, rangeQuery(this.select, col.name, min, max, cap));
      if (rows.length < cap) {
        this.rangeUseful = true;
        const wanted = new Set(keys);
        const found = new Map<string, Record<string, unknown>>();
        for (const row of rows) {
          const k = keyText(col, row[col.name]);
          if (k !== null && wanted.has(k)) found.set(k, row);
        }
        return found;
      }
      this.rangeUseful = false;
      this.sinceMiss = 0;
    }
    return fetchExisting(this.transport, this.table, col, keys, this.select);
  }
}

/** JSON values equal as jsonb compares them: object key order does not matter, array order does. */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let n = 0;
  for (const k in x) {
    if (!Object.hasOwn(y, k) || !sameJson(x[k], y[k])) return false;
    n++;
  }
  for (const _ in y) n--;
  return n === 0;
}

/**
 * True when a value the import would write equals the stored one, by the column's type
 * (uuids case-insensitively, timestamps as instants, jsonb ignoring key order).
 * @example sameValue(tsCol, '2024-01-15T09:00:00Z', '2024-01-15T09:00:00+00:00') // true
 */
export function sameValue(col: ColumnDef, mine: unknown, theirs: unknown): boolean {
  if (col.keyList && mine !== null && mine !== undefined) return sameLinks(col.keyList, mine, theirs);
  // source ids are merged by the service: the ones written must be there, others may be too
  if (col.name === SOURCE_IDS && isObject(mine) && isObject(theirs)) return Object.entries(mine).every(([k, v]) => v === null ? !(k in theirs) : theirs[k] === v);
  if (mine === null || theirs === null || mine === undefined || theirs === undefined) return (mine ?? null) === (theirs ?? null);
  switch (columnKind(col.type)) {
    case K_JSON:
      return sameJson(mine, theirs);
    case K_TIMESTAMP:
      return mine === theirs || (instantKey(String(mine)) ?? 'a') === (instantKey(String(theirs)) ?? 'b');
    case K_UUID:
      return String(mine).toLowerCase() === String(theirs).toLowerCase();
    default:
      return mine === theirs;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A link value as the database stores it, for comparing (null when it cannot be told without the
 * database: a key written as text, an ISRC or a name). A release's tracks: `disc:position:id` in
 * disc and position order, a key's position its place in the list; credits: each element's id
 * (its name is refreshed from the artist, so it does not count), or its name when it has no id,
 * with its role and share.
 */
function storedLinks(kind: 'tracks' | 'artists', v: unknown): string[] | null {
  const list = keyList(v);
  if (!Array.isArray(list)) return null;
  const out: string[] = [];
  for (let i = 0; i < list.length; i++) {
    const el = list[i] as unknown;
    if (typeof el === 'string') {
      if (!UUID_TEXT.test(el.trim())) return null;
      out.push(kind === 'tracks' ? `1:${i + 1}:${el.trim().toLowerCase()}` : `id:${el.trim().toLowerCase()}||`);
      continue;
    }
    if (!isObject(el)) return null;
    const id = typeof el.id === 'string' ? el.id.toLowerCase() : null;
    if (kind === 'tracks') {
      if (!id) return null;
      out.push(`${String(el.disc ?? 1)}:${String(el.position ?? i + 1)}:${id}`);
    } else out.push(`${id ? `id:${id}` : `name:${String(el.name ?? '')}`}|${String(el.role ?? '')}|${String(el.share ?? '')}`);
  }
  if (kind === 'tracks') out.sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
  return out;
}

/** Two link values equal as stored (storedLinks); a value that cannot be told is not equal. */
function sameLinks(kind: 'tracks' | 'artists', mine: unknown, theirs: unknown): boolean {
  const a = storedLinks(kind, mine);
  const b = storedLinks(kind, theirs ?? []);
  return a !== null && b !== null && a.length === b.length && a.every((x, i) => x === b[i]);
}
