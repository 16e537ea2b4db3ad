import type { ColumnDef } from '../../schema/catalog.js';
import { OMIT, coerce } from './coerce.js';
import type { FieldResolver } from './mapping.js';
import type { SourceRecord } from '../types.js';

/** A record turned into the JSON object one array element of the POST body will be. */
export type RowResult = { ok: true; row: Record<string, unknown> } | { ok: false; code: string; message: string };

function where(key: string, col: ColumnDef): string {
  return key === col.name ? `column ${col.name}` : `column "${key}" (field ${col.name})`;
}

/**
 * Maps and coerces one record. Keys left out of `row` take their column DEFAULT on the server;
 * every bad value in the record is named in the message (column and source header).
 * @example buildRow({ index: 0, line: 2, values: { Name: 'x', is_signed: 'yes' } }, resolver, true, '\\N')
 *          // { ok: true, row: { name: 'x', is_signed: true } }
 */
export function buildRow(rec: SourceRecord, resolver: FieldResolver, fromText: boolean, nullToken: string | null): RowResult {
  if (rec.error) return { ok: false, code: '22P02', message: rec.error };
  const row: Record<string, unknown> = {};
  let errors: string[] | null = null;
  let code = '';
  const { cells, headers } = rec;
  if (cells && headers) {
    // CSV: by position, without building the header → cell object
    const n = Math.min(cells.length, headers.length);
    for (let i = 0; i < n; i++) {
      const col = resolver.resolve(headers[i]);
      if (!col) continue;
      const c = coerce(col, cells[i], fromText, nullToken);
      if (c === OMIT) continue;
      if (!c.ok) {
        (errors ??= []).push(`${where(headers[i], col)}: ${c.message}`);
        code ||= c.code;
        continue;
      }
      row[col.name] = c.value;
    }
    return errors ? { ok: false, code, message: errors.join('; ') } : { ok: true, row };
  }
  for (const key in rec.values) {
    const col = resolver.resolve(key);
    if (!col) continue;
    const c = coerce(col, rec.values[key], fromText, nullToken);
    if (c === OMIT) continue;
    if (!c.ok) {
      (errors ??= []).push(`${where(key, col)}: ${c.message}`);
      code ||= c.code;
      continue;
    }
    row[col.name] = c.value;
  }
  return errors ? { ok: false, code, message: errors.join('; ') } : { ok: true, row };
}

/**
 * The conflict key of a row as one string (uuids already normalised by coercion), or null when a
 * key column is absent (the row then gets a default key and cannot collide).
 * @example keyOf({ id: 'a0ee…' }, ['id']) // 'a0ee…'
 */
export function keyOf(row: Record<string, unknown>, keyColumns: string[]): string | null {
  if (keyColumns.length === 1) {
    const v = row[keyColumns[0]];
    return v === undefined || v === null ? null : typeof v === 'string' ? v : JSON.stringify(v);
  }
  const parts: string[] = [];
  for (const k of keyColumns) {
    const v = row[k];
    if (v === undefined || v === null) return null;
    parts.push(typeof v === 'string' ? v : JSON.stringify(v));
  }
  return parts.join('\u0000');
}

/**
 * Where the conflict key's cells are in a CSV header row, in key order; null when a key column has
 * no header (the rows then get default keys and cannot collide).
 */
export function keyCellIndexes(headers: string[], resolver: FieldResolver, keyColumns: string[]): Array<{ index: number; col: ColumnDef }> | null {
  const out: Array<{ index: number; col: ColumnDef }> = [];
  for (const name of keyColumns) {
    const index = headers.findIndex((h) => resolver.resolve(h)?.name === name);
    if (index < 0) return null;
    out.push({ index, col: resolver.resolve(headers[index])! });
  }
  return out;
}

/**
 * The conflict key of a CSV record from its key cells alone (as keyOf would give it for the whole
 * row), or null when a key cell is empty, null or invalid.
 */
export function csvKey(cells: string[], keyCells: Array<{ index: number; col: ColumnDef }>, fromText: boolean, nullToken: string | null): string | null {
  let key: string | null = null;
  for (const { index, col } of keyCells) {
    const c = coerce(col, cells[index], fromText, nullToken);
    if (c === OMIT || !c.ok || c.value === null || c.value === undefined) return null;
    const part = typeof c.value === 'string' ? c.value : JSON.stringify(c.value);
    key = key === null ? part : `${key}\u0000${part}`;
  }
  return key;
}
