import { TABLES, type ColumnDef } from './catalog.js';
import { quoteIdent } from './identifiers.js';

/**
 * Source ids: the id a record has in each other system it was imported from (issue 35), so that
 * the next import of that system's export finds the record again. docs/service.md ("Source ids").
 *
 * They live beside the collections, never in them: `select=*` and the eight collections' fields
 * stay exactly PostgREST's. The side table `catalog_source_ids.<catalog schema>` (migration 6,
 * migrations/0006-source-ids.sql) holds one row per (collection, source, source id) → record
 * id; each collection shows them as the PostgREST computed field `source_ids`, the SQL function
 * `source_ids(<table>) returns jsonb` (`{"legacy": "201", "discogs": "r8812"}`, `{}` when none),
 * which a real PostgREST over the same database answers the same way. `catalog serve` also takes
 * them on writes (a `source_ids` field or COPY column) and matches on them (`Prefer: match=`).
 */

/** The computed field's name, on every collection. */
export const SOURCE_IDS = 'source_ids';

/**
 * The schema of the side tables, one per catalog of the database, each named after its catalog's
 * schema (migration 6): so they are no table of the catalog's schema, which a PostgREST would expose.
 */
export const SOURCE_IDS_SCHEMA = 'catalog_source_ids';

/**
 * The side table of the catalog in `schema`, quoted: not a collection (not in the schema cache,
 * the root description or any path).
 * @example sourceIdsTable('public') // '"catalog_source_ids"."public"'
 */
export function sourceIdsTable(schema: string): string {
  return `${quoteIdent(SOURCE_IDS_SCHEMA)}.${quoteIdent(schema)}`;
}

/** A source's name: what `source_ids->>NAME` and `match=source_ids.NAME` address. */
export const SOURCE_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** The longest source id kept (an index entry must stay well under PostgreSQL's 2,704 bytes). */
export const MAX_SOURCE_ID = 512;

/** A computed field: a function `name(table) returns type` PostgREST lets `select`, filters and `order` use like a column. */
export interface ComputedField {
  name: string;
  type: string;
  /** One line for `describe`. */
  summary: string;
  description: string;
}

/**
 * The table comment each collection gets (migration 6): PostgREST shows a table's comment as its
 * definition's description in the root description (and its first line as each operation's
 * summary), which is where a client learns of a computed field: they are not properties.
 */
export const SOURCE_IDS_COMMENT =
  'Computed field source_ids (jsonb, not part of select=*): the record\'s id in each source system it came from, {"<source>": "<id>"}, {} when none. Read it with select=id,source_ids or select=id,source_ids->>legacy, filter with source_ids->>legacy=eq.201. Written (catalog serve): a source_ids object in a POST or PATCH body, or a COPY column of JSON text.';

/** The computed field every collection has. */
const FIELD: ComputedField = {
  name: SOURCE_IDS,
  type: 'jsonb',
  summary: 'the record\'s id in each source system, {"<source>": "<id>"} (select=id,source_ids, source_ids->>legacy=eq.201)',
  description: SOURCE_IDS_COMMENT,
};

/** Each collection's computed fields. */
export const COMPUTED_FIELDS: Readonly<Record<string, readonly ComputedField[]>> = Object.fromEntries(TABLES.map((t) => [t.name, [FIELD]]));

/** The computed field `name` of a collection, if it has one. */
export function computedField(table: string, name: string): ComputedField | undefined {
  return COMPUTED_FIELDS[table]?.find((f) => f.name === name);
}

/** A computed field as the planner sees it: a jsonb value no write sets. */
export function computedColumn(f: ComputedField): ColumnDef {
  return { name: f.name, type: f.type, nullable: false, description: f.description };
}

/** The rule a body's `source_ids` follows, for error hints. */
export const SOURCE_IDS_HINT =
  'source_ids is an object {"<source>": "<id>"}: each source named with letters, digits, _ or - (at most 64), each id non-empty text of at most 512 characters, or null to remove that source\'s id';

const typeOf = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v === 'object' ? 'object' : typeof v);

/**
 * What is wrong with a body's `source_ids` value, or null when it fits (null and absent: no change).
 * @example sourceIdsProblem({ legacy: 201 }) // { path: 'source_ids.legacy', reason: 'must be text (the id in that source), not number' }
 */
export function sourceIdsProblem(value: unknown): { path: string; reason: string } | null {
  if (value === null || value === undefined) return null;
  if (typeOf(value) !== 'object') return { path: SOURCE_IDS, reason: `must be an object of source names and ids, not ${typeOf(value)}` };
  for (const [source, id] of Object.entries(value as Record<string, unknown>)) {
    const path = `${SOURCE_IDS}.${source}`;
    if (!SOURCE_NAME.test(source)) return { path, reason: 'is not a source name (letters, digits, _ or -, at most 64)' };
    if (id === null) continue;
    if (typeof id !== 'string') return { path, reason: `must be text (the id in that source), not ${typeOf(id)}` };
    if (id === '') return { path, reason: 'must not be empty (null removes the id)' };
    // characters, as the database's length() counts them
    if (id.length > MAX_SOURCE_ID && [...id].length > MAX_SOURCE_ID) return { path, reason: `is longer than ${MAX_SOURCE_ID} characters` };
  }
  return null;
}
