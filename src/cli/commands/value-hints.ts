import { compileQuery } from '../../grammar/compile.js';
import type { Condition, Query } from '../../grammar/types.js';
import { didYouMean } from '../../format/suggest.js';
import type { SchemaModel, TableDef } from '../../schema/model.js';
import type { Context } from '../context.js';
import { pathOf } from './shared.js';

/**
 * Did-you-mean for filter values, when a read matched nothing (issue 37): `--where genre=Hosue`
 * says `no genre is "Hosue"; did you mean "House"?` on stderr, the rows and the exit code as they
 * were. Which fields: a text field named after a collection that is a list of names (`genre`,
 * `subgenre`, `label`, `country`, `language`: the singular of a collection with a `name` field,
 * genres, subgenres, labels, countries, languages), and such a collection's own `name`, at the
 * root or embedded (`labels.name=…`). The names come from that collection, read once (its
 * `name`s, at most MAX_NAMES: a collection with more is no short list, and gets no hint). Only
 * `eq` and `in` values are looked at, not negated ones.
 */

/** Names read from one collection at most; a longer one is no list of a few values. */
export const MAX_NAMES = 2000;

/** One value a filter asks for on a field that names a record of `collection`. */
interface Asked {
  field: string;
  collection: TableDef;
  value: string;
}

/** The collection whose names a field holds: itself for its `name`, else the collection it is named after. */
function namedCollection(field: string, own: TableDef, schema: SchemaModel): TableDef | undefined {
  const hasName = (t: TableDef) => t.columns.some((c) => c.name === 'name' && c.type === 'text');
  if (field === 'name') return hasName(own) ? own : undefined;
  for (const t of schema.tables.values()) if (t !== own && t.singular === field && hasName(t)) return t;
  return undefined;
}

/** The eq and in values of a condition's filters (not under a negation). */
function equalities(c: Condition, out: Array<{ field: string; values: string[] }>): void {
  if (c.negated) return;
  if (c.kind !== 'filter') {
    for (const sub of c.conditions) equalities(sub, out);
    return;
  }
  if (c.field.jsonPath.length > 0 || c.modifier) return;
  if (c.op === 'eq') out.push({ field: c.field.name, values: [String(c.value)] });
  if (c.op === 'in' && Array.isArray(c.value)) out.push({ field: c.field.name, values: c.value });
}

/** The values a query's filters ask for on name fields, each once. */
function askedValues(query: Query, table: TableDef, schema: SchemaModel): Asked[] {
  const out: Asked[] = [];
  for (const w of query.where) {
    const at = w.path.length === 0 ? table : w.path.length === 1 ? schema.tables.get(w.path[0]) : undefined;
    if (!at) continue;
    const found: Array<{ field: string; values: string[] }> = [];
    equalities(w.condition, found);
    for (const { field, values } of found) {
      const collection = namedCollection(field, at, schema);
      if (!collection) continue;
      const shown = w.path.length ? `${w.path[0]}.${field}` : field;
      for (const value of values) if (!out.some((a) => a.field === shown && a.value === value)) out.push({ field: shown, collection, value });
    }
  }
  return out;
}

/** The names of a collection, or null when it has more than MAX_NAMES or cannot be read. */
async function namesOf(collection: TableDef, ctx: Context): Promise<string[] | null> {
  try {
    const query = compileQuery({ select: [{ type: 'field', field: { name: 'name', jsonPath: [] } }], where: [], order: [], page: [{ path: [], limit: MAX_NAMES + 1 }] });
    const res = await ctx.send({ method: 'GET', path: pathOf(collection), query });
    if (!res) return null;
    const rows = JSON.parse(res.body || '[]') as Array<{ name?: unknown }>;
    if (rows.length > MAX_NAMES) return null;
    return rows.map((r) => r.name).filter((n): n is string => typeof n === 'string');
  } catch {
    // a hint is a courtesy: a collection this token may not read, or a service that fails, gives none
    return null;
  }
}

/**
 * The hints for a read that matched nothing: one line per value that no record of its collection
 * has as its name, with the closest name when one is close.
 * @example await valueHints(query, tracks, schema, ctx) // ['no genre is "Hosue"; did you mean "House"?']
 */
export async function valueHints(query: Query, table: TableDef, schema: SchemaModel, ctx: Context): Promise<string[]> {
  if (ctx.dryRun) return [];
  const asked = askedValues(query, table, schema);
  const names = new Map<TableDef, string[] | null>();
  const hints: string[] = [];
  for (const a of asked) {
    if (!names.has(a.collection)) names.set(a.collection, await namesOf(a.collection, ctx));
    const known = names.get(a.collection);
    if (!known || known.includes(a.value)) continue;
    const guess = didYouMean(a.value, known);
    const noun = a.field.endsWith('name') ? `${a.collection.singular} is named` : `${a.field} is`;
    hints.push(`no ${noun} ${JSON.stringify(a.value)}${guess ? `; did you mean ${JSON.stringify(guess)}?` : ` (${a.collection.name} has ${known.length} names: catalog ${a.collection.name} list)`}`);
  }
  return hints;
}
