import { type CollectionFacts, factsFor, TITLE_FIELDS } from './facts.js';
import { COMPUTED_RELATIONSHIPS } from './links.js';

/**
 * The one table model: what the tool knows of a collection, whether it comes from the compiled
 * catalog (`TABLES` in catalog.ts: the embedded store, migrations, the service) or from a
 * service's root description (`schemaFromOpenApi`). Commands, import, export and check take a
 * `TableDef` (or the whole `SchemaModel`) as input and never look a table up by name themselves.
 */

/** PostgreSQL types the compiled catalog uses, as PostgreSQL prints them in `format_type`. */
export type ColumnType = 'uuid' | 'text' | 'boolean' | 'date' | 'timestamp with time zone' | 'jsonb';

export interface ForeignKey {
  table: string;
  column: string;
  /** The constraint's name; from a root description (which does not show it), PostgreSQL's default `<table>_<column>_fkey`. */
  constraint: string;
}

export interface ColumnDef {
  name: string;
  /** PostgreSQL type name: a ColumnType for the compiled catalog, anything a service reports (`integer`, `numeric`, …) otherwise. */
  type: string;
  nullable: boolean;
  /**
   * The DEFAULT expression as PostgreSQL prints it (`''::text`, `now()`, `false`), or undefined.
   * From a root description, rebuilt from the shown value (sqlDefault); displayDefault shows it.
   */
  default?: string;
  primaryKey?: boolean;
  foreignKey?: ForeignKey;
  /**
   * A link field (src/schema/links.ts) that also takes its keys as text: `;`-separated ISRCs or
   * track ids (`tracks`), artist names or ids (`artists`). Import sends such a cell as a JSON
   * string, which the database resolves. From a root description: what the column's comment says
   * it accepts on write.
   */
  keyList?: 'tracks' | 'artists';
  /** The column's comment (a root description's property description before its key notes). */
  description?: string;
}

/**
 * A collection: its columns, and what the catalog knows of it beyond them (CollectionFacts,
 * src/schema/facts.ts: title field, natural key, name column, references by name, removed fields).
 */
export interface TableDef extends CollectionFacts {
  name: string;
  /** Singular noun for messages ("label", "release"). */
  singular: string;
  columns: ColumnDef[];
  primaryKey: string[];
  /**
   * Read only: the service answers reads and refuses writes (`removals`; from a root
   * description, a collection whose path offers no POST). Not one of the catalog's collections
   * to import into, seed or check.
   */
  readOnly?: boolean;
}

/** What the tool knows about the service's collections. */
export interface SchemaModel {
  /** Interface version the service reports (`info.version`), null when unknown. */
  version: string | null;
  tables: Map<string, TableDef>;
  /** Where it came from: built in (embedded catalog), the service, or the cache. */
  source: 'builtin' | 'service' | 'cache';
}

/**
 * A column default as the root description renders it: quotes and `::type` dropped from
 * string defaults, numbers and booleans as values.
 * @example displayDefault("''::text") // ''
 */
export function displayDefault(expr: string | undefined): unknown {
  if (expr === undefined) return undefined;
  const literal = /^'((?:[^']|'')*)'(::[\w ]+)?$/.exec(expr);
  if (literal) return literal[1].replace(/''/g, "'");
  if (expr === 'true' || expr === 'false') return expr === 'true';
  if (/^-?\d+(\.\d+)?$/.test(expr)) return Number(expr);
  return expr;
}

/**
 * The DEFAULT expression behind a value a root description shows (displayDefault's inverse for
 * the defaults it can tell apart): booleans and numbers as they are, a function call as it is,
 * any other string as a literal of the column's type.
 * @example sqlDefault('', 'text') // "''::text"
 */
export function sqlDefault(shown: unknown, type: string): string | undefined {
  if (shown === undefined || shown === null) return undefined;
  if (typeof shown === 'boolean' || typeof shown === 'number') return String(shown);
  const text = typeof shown === 'string' ? shown : JSON.stringify(shown);
  if (typeKind(type) !== 'text' && /^[a-z_][\w.]*\(.*\)$/i.test(text)) return text;
  return `${sqlString(text)}::${type}`;
}

/**
 * Text as a standard SQL string literal (quotes doubled; standard_conforming_strings, so a
 * backslash is itself).
 * @example sqlString("it's") // "'it''s'"
 */
export function sqlString(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

/**
 * The singular of a collection name, for messages (a root description does not tell it).
 * @example singularOf('countries') // 'country'
 */
export function singularOf(name: string): string {
  if (/[^aeiou]ies$/.test(name)) return `${name.slice(0, -3)}y`;
  if (/[^s]s$/.test(name)) return name.slice(0, -1);
  return name;
}

interface OpenApiProperty {
  format?: string;
  type?: string;
  default?: unknown;
  description?: string;
}

/** What a link column's comment says it accepts on write (src/schema/links.ts LINK_COMMENTS). */
const KEY_LISTS: ReadonlyArray<[RegExp, 'tracks' | 'artists']> = [
  [/Keys accepted on write: track ids/, 'tracks'],
  [/Keys accepted on write: artist ids/, 'artists'],
];

/** One column out of a root description's property. */
function columnFromOpenApi(table: string, name: string, p: OpenApiProperty, required: boolean): ColumnDef {
  const desc = p.description ?? '';
  const fk = /<fk table='([^']+)' column='([^']+)'\/>/.exec(desc);
  const comment = desc.split(/\n*Note:\n/)[0].trim();
  const type = p.format ?? p.type ?? 'text';
  const col: ColumnDef = { name, type, nullable: !required };
  const def = sqlDefault(p.default, type);
  if (def !== undefined) col.default = def;
  if (desc.includes('<pk/>')) col.primaryKey = true;
  if (fk) col.foreignKey = { table: fk[1], column: fk[2], constraint: `${table}_${name}_fkey` };
  const keyList = KEY_LISTS.find(([re]) => re.test(comment))?.[1];
  if (keyList) col.keyList = keyList;
  if (comment) col.description = comment;
  return col;
}

/**
 * Reads the collections out of a PostgREST root description (OpenAPI 2.0): `definitions` give
 * fields, `format` the PostgreSQL type, `required` the NOT NULL fields, and the description
 * notes `<pk/>` and `<fk table='labels' column='id'/>` the keys.
 */
export function schemaFromOpenApi(doc: Record<string, unknown>, source: SchemaModel['source'] = 'service'): SchemaModel {
  const defs = (doc.definitions ?? {}) as Record<string, { properties?: Record<string, OpenApiProperty>; required?: string[] }>;
  const tables = new Map<string, TableDef>();
  const paths = (doc.paths ?? {}) as Record<string, Record<string, unknown> | undefined>;
  for (const [name, def] of Object.entries(defs)) {
    const required = new Set(def.required ?? []);
    const columns = Object.entries(def.properties ?? {}).map(([field, p]) => columnFromOpenApi(name, field, p, required.has(field)));
    const table: TableDef = {
      name,
      singular: singularOf(name),
      columns,
      primaryKey: columns.filter((c) => c.primaryKey).map((c) => c.name),
      // what the description cannot tell (titles, keys, references by name), as the catalog knows its collections
      ...factsFor(name, columns.map((c) => c.name)),
    };
    // PostgREST lists the methods a relation allows: a read-only one (a view, a table granted select only) has no post
    const path = paths[`/${name}`];
    if (path && path.get && !path.post) table.readOnly = true;
    tables.set(name, table);
  }
  const info = (doc.info ?? {}) as { version?: unknown };
  const version = typeof info.version === 'string' ? info.version.split(' ')[0] : null;
  return { version, tables, source };
}

/** The tables a table's rows point at: its foreign keys' tables and its link columns' (ColumnDef.keyList), itself aside. */
function parentsOf(table: TableDef, all: readonly TableDef[]): TableDef[] {
  const names = table.columns.map((c) => c.foreignKey?.table ?? c.keyList).filter((n): n is string => n !== undefined && n !== table.name);
  return all.filter((t) => names.includes(t.name));
}

/**
 * The tables parents first: a table comes after every table its foreign keys and link columns
 * point at (releases after tracks, whose ids or ISRCs its `tracks` lists; tracks after artists),
 * so a directory imports in one pass. Otherwise the given order is kept. A cycle (a service whose
 * tables point at each other) is broken where it closes: the table reached again goes in as it
 * stands instead of looping.
 *
 * @example foreignKeyOrder([releases, tracks, labels]).map((t) => t.name) // ['tracks', 'labels', 'releases']
 */
export function foreignKeyOrder(tables: Iterable<TableDef>): TableDef[] {
  const all = [...tables];
  const out: TableDef[] = [];
  const placed = new Set<TableDef>();
  const visiting = new Set<TableDef>();
  const visit = (t: TableDef) => {
    if (placed.has(t) || visiting.has(t)) return;
    visiting.add(t);
    for (const parent of parentsOf(t, all)) visit(parent);
    visiting.delete(t);
    placed.add(t);
    out.push(t);
  };
  for (const t of all) visit(t);
  return out;
}

/**
 * The field that names a table's records to people: its title (src/schema/facts.ts), else, for a
 * table the catalog does not know, the first of the catalog's title fields it has.
 * @example titleOf(artists) // 'stage_name'
 */
export function titleOf(table: TableDef): string | undefined {
  return table.title ?? TITLE_FIELDS.find((n) => table.columns.some((c) => c.name === n));
}

/** A relationship a collection can embed. */
export interface Relation {
  /** The collection embedded. */
  table: string;
  cardinality: 'many-to-one' | 'one-to-many';
  /** The foreign-key column (on this table for many-to-one, on the other for one-to-many); for a computed relationship, what it follows. */
  via: string;
  /** A PostgREST computed relationship (the SQL function `table(collection)`), not a foreign key. */
  computed?: boolean;
}

/** The relationships of a collection, both directions, from the foreign keys in the schema. */
export function relationsOf(schema: SchemaModel, table: string): Relation[] {
  const out: Relation[] = [];
  for (const c of schema.tables.get(table)?.columns ?? []) {
    if (c.foreignKey) out.push({ table: c.foreignKey.table, cardinality: 'many-to-one', via: c.name });
  }
  for (const t of schema.tables.values()) {
    for (const c of t.columns) if (c.foreignKey?.table === table) out.push({ table: t.name, cardinality: 'one-to-many', via: c.name });
  }
  // The root description shows foreign keys only; the catalog's computed relationships are known
  // here, offered wherever both collections exist (a service without them answers PGRST200).
  for (const r of COMPUTED_RELATIONSHIPS) {
    if (r.from === table && schema.tables.has(r.to)) out.push({ table: r.to, cardinality: 'one-to-many', via: r.via, computed: true });
  }
  return out;
}

/** Type families the validator and the coercer work with. */
export type TypeKind = 'text' | 'uuid' | 'boolean' | 'date' | 'timestamp' | 'json' | 'integer' | 'number' | 'other';

/** The family of a PostgreSQL type name. */
export function typeKind(type: string): TypeKind {
  if (type === 'text' || type.startsWith('character')) return 'text';
  if (type === 'uuid') return 'uuid';
  if (type === 'boolean') return 'boolean';
  if (type === 'date') return 'date';
  if (type.startsWith('timestamp')) return 'timestamp';
  if (type === 'json' || type === 'jsonb') return 'json';
  if (type === 'smallint' || type === 'integer' || type === 'bigint') return 'integer';
  if (type === 'numeric' || type === 'real' || type === 'double precision') return 'number';
  return 'other';
}
