import { compileQuery } from '../grammar/compile.js';
import { renderPrefer } from '../grammar/prefer.js';
import type { Filter, Preferences, Query, SelectItem, WhereClause } from '../grammar/types.js';

/**
 * Every query string and Prefer header the import sends, built through the grammar
 * (`compileQuery`, `renderPrefer`) so that the compile ↔ parse property test covers them.
 */

const field = (name: string) => ({ name, jsonPath: [] });
const selectOf = (columns: string[]): SelectItem[] => columns.map((c) => ({ type: 'field', field: field(c) }));
const where = (column: string, op: Filter['op'], value: string | string[]): WhereClause => ({
  path: [],
  condition: { kind: 'filter', field: field(column), negated: false, op, value },
});
const query = (q: Partial<Query>): string => compileQuery({ where: [], order: [], page: [], ...q });

/**
 * The query of a write: `columns=` (JSON bodies) and `on_conflict=` (upserts).
 * @example writeQuery(['id', 'name'], ['id']) // 'columns=id,name&on_conflict=id'
 */
export function writeQuery(columns: string[] | null, conflictKey: string[] | null): string {
  return query({ ...(columns ? { columns } : {}), ...(conflictKey ? { onConflict: conflictKey } : {}) });
}

/**
 * The Prefer header of a write.
 * @example writePrefer({ keyed: true, ignoreDuplicates: false, missingDefault: true, skipUnchanged: false }) // 'resolution=merge-duplicates, missing=default, return=minimal'
 */
export function writePrefer(o: { keyed: boolean; ignoreDuplicates: boolean; missingDefault: boolean; skipUnchanged: boolean; match?: string }): string {
  const p: Partial<Preferences> = { return: 'minimal' };
  if (o.keyed) p.resolution = o.ignoreDuplicates ? 'ignore-duplicates' : 'merge-duplicates';
  if (o.keyed && o.skipUnchanged) p.unchanged = 'skip';
  if (o.missingDefault) p.missing = 'default';
  // our extension (src/schema/match.ts), outside the grammar's preferences: the service decides the match where it writes
  return o.match ? `${renderPrefer(p)}, match=${o.match}` : renderPrefer(p);
}

/** `select=<cols>&<key>=in.(…)`: stored rows with one of the keys. */
export function inListQuery(select: string[], key: string, values: string[]): string {
  return query({ select: selectOf(select), where: [where(key, 'in', values)] });
}

/** `select=<cols>&<key>=gte.<min>&<key>=lte.<max>&limit=<n>`: stored rows in a key range. */
export function rangeQuery(select: string[], key: string, min: string, max: string, limit: number): string {
  return query({ select: selectOf(select), where: [where(key, 'gte', min), where(key, 'lte', max)], page: [{ path: [], limit }] });
}

/** `select=<key>&limit=1`: whether a table has any row. */
export function probeQuery(key: string): string {
  return query({ select: selectOf([key]), page: [{ path: [], limit: 1 }] });
}

/**
 * A whole table in id order (the client pager, `client/pages.ts`, pages it by keyset on id):
 * the given columns, with the caller's filters (a sync's scope).
 */
export function tableScan(select: string[], filters: WhereClause[] = []): Query {
  return { select: selectOf(select), where: filters, order: [], page: [] };
}

/** `<key>=in.(…)` alone: the rows a DELETE of a list removes. */
export function inFilterQuery(key: string, values: string[]): string {
  return query({ where: [where(key, 'in', values)] });
}
