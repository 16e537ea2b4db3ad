import { compileQuery } from '../../grammar/compile.js';
import type { Filter, Query, SelectItem } from '../../grammar/types.js';
import type { Context } from '../context.js';
import { accentPattern } from '../flags/accents.js';
import { type TableDef, titleOf } from '../../schema/model.js';

/** A record a foreign key can point at, by its id and readable name. */
export interface Reference {
  id: string;
  name: string;
  /** Extra context shown beside the name (a subgenre's genre). */
  detail?: string;
  /** The name as stored, when `name` was made one line for the list. */
  full?: string;
}

/** How many matches the searchable list shows per search. */
export const LOOKUP_LIMIT = 50;

const field = (name: string) => ({ name, jsonPath: [] });

const filter = (name: string, op: Filter['op'], value: string): Filter => ({ kind: 'filter', field: field(name), negated: false, op, value });

/** The field that names records of a table (its title: `name` for labels, genres and subgenres), else its key. */
export function nameFieldOf(table: TableDef): string {
  return titleOf(table) ?? table.primaryKey[0] ?? 'id';
}

/**
 * The query of one search: the records whose name contains `term` (ignoring case and accents), by name.
 * @example referenceQuery(labels, 'blue') // select=id,name&name=imatch.^.*[bB][lĺļľŀłLĹĻĽĿŁ]….*$&order=name&limit=50
 */
export function referenceQuery(table: TableDef, term: string | undefined, byId?: string, scope?: { field: string; value: string }): string {
  const nameField = nameFieldOf(table);
  const extra = table.name === 'subgenres' && table.columns.some((f) => f.name === 'genre') ? ['genre'] : [];
  const select: SelectItem[] = ['id', nameField, ...extra].map((n) => ({ type: 'field', field: field(n) }));
  const q: Query = { select, where: [], order: [{ path: [], terms: [{ field: field(nameField) }] }], page: [{ path: [], limit: LOOKUP_LIMIT }] };
  const t = term?.trim();
  if (scope && !byId) q.where.push({ path: [], condition: filter(scope.field, 'eq', scope.value) });
  if (byId) q.where.push({ path: [], condition: filter('id', 'eq', byId) });
  // ignoring case and accents, as the short form's `~` does: "cafe" finds "Café Tacvba"
  else if (t) q.where.push({ path: [], condition: filter(nameField, 'imatch', accentPattern(`*${t}*`)) });
  return compileQuery(q);
}

/**
 * Finds records of the referenced table by name on the service. The requests go straight to the
 * client (also under --dry-run, where only the final write is printed instead of sent).
 */
export function referenceFinder(ctx: Context, table: TableDef, scope?: { field: string; value: string }) {
  const nameField = nameFieldOf(table);
  const get = async (query: string, signal?: AbortSignal): Promise<Reference[]> => {
    const { client } = await ctx.endpoint();
    if (signal?.aborted) return [];
    const res = await client.request({ method: 'GET', path: `/${table.name}`, query, headers: { accept: 'application/json' } });
    const rows = JSON.parse(res.body || '[]') as Array<Record<string, unknown>>;
    return rows.map((r) => ({
      id: String(r.id),
      // a name with line breaks stays one line of the list
      name: r[nameField] === null || r[nameField] === undefined || r[nameField] === '' ? '(no name)' : String(r[nameField]).replace(/\s*[\r\n]+\s*/g, ' ⏎ '),
      detail: typeof r.genre === 'string' && r.genre ? r.genre : undefined,
      ...(typeof r[nameField] === 'string' && /[\r\n]/.test(r[nameField] as string) ? { full: r[nameField] as string } : {}),
    }));
  };
  return {
    /** Records whose name contains `term`, by name (the first ones when there is no term). */
    search: (term: string | undefined, signal?: AbortSignal) => get(referenceQuery(table, term, undefined, scope), signal),
    /** One record by id; null when it does not exist. */
    byId: async (id: string) => (await get(referenceQuery(table, undefined, id)))[0] ?? null,
  };
}
