import { COMPUTED_RELATIONSHIPS } from '../../schema/links.js';
import { INTERFACE_VERSION, TABLES, type TableDef } from '../../schema/catalog.js';

/** One field of a collection, as the root description tells it. */
export interface FieldInfo {
  name: string;
  /** PostgreSQL type name (`uuid`, `text`, `date`, `timestamp with time zone`, `jsonb`, …). */
  type: string;
  /** NOT NULL (the root description's `required`). */
  required: boolean;
  /** Default as the root description shows it (`""`, `now()`, `false`), or undefined. */
  default?: unknown;
  primaryKey: boolean;
  foreignKey?: { table: string; column: string };
  description?: string;
}

export interface TableInfo {
  name: string;
  fields: FieldInfo[];
  primaryKey: string[];
}

/** What the tool knows about the service's collections. */
export interface SchemaModel {
  /** Interface version the service reports (`info.version`), null when unknown. */
  version: string | null;
  tables: Map<string, TableInfo>;
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

/** The model of one built-in table. */
export function tableInfo(t: TableDef): TableInfo {
  return {
    name: t.name,
    primaryKey: t.primaryKey,
    fields: t.columns.map((c) => ({
      name: c.name,
      type: c.type,
      required: !c.nullable,
      default: displayDefault(c.default),
      primaryKey: Boolean(c.primaryKey),
      foreignKey: c.foreignKey ? { table: c.foreignKey.table, column: c.foreignKey.column } : undefined,
    })),
  };
}

/** The built-in schema (the embedded catalog, and the fallback when a service has no description). */
export function builtinSchema(): SchemaModel {
  return { version: INTERFACE_VERSION, tables: new Map(TABLES.map((t) => [t.name, tableInfo(t)])), source: 'builtin' };
}

interface OpenApiProperty {
  format?: string;
  type?: string;
  default?: unknown;
  description?: string;
}

/**
 * Reads the collections out of a PostgREST root description (OpenAPI 2.0): `definitions` give
 * fields, `format` the PostgreSQL type, `required` the NOT NULL fields, and the description
 * notes `<pk/>` and `<fk table='labels' column='id'/>` the keys.
 */
export function schemaFromOpenApi(doc: Record<string, unknown>, source: SchemaModel['source'] = 'service'): SchemaModel {
  const defs = (doc.definitions ?? {}) as Record<string, { properties?: Record<string, OpenApiProperty>; required?: string[] }>;
  const tables = new Map<string, TableInfo>();
  for (const [name, def] of Object.entries(defs)) {
    const required = new Set(def.required ?? []);
    const fields: FieldInfo[] = Object.entries(def.properties ?? {}).map(([field, p]) => {
      const desc = p.description ?? '';
      const fk = /<fk table='([^']+)' column='([^']+)'\/>/.exec(desc);
      const comment = desc.split(/\n*Note:\n/)[0].trim();
      return {
        name: field,
        type: p.format ?? p.type ?? 'text',
        required: required.has(field),
        default: p.default,
        primaryKey: desc.includes('<pk/>'),
        foreignKey: fk ? { table: fk[1], column: fk[2] } : undefined,
        description: comment || undefined,
      };
    });
    tables.set(name, { name, fields, primaryKey: fields.filter((f) => f.primaryKey).map((f) => f.name) });
  }
  const info = (doc.info ?? {}) as { version?: unknown };
  const version = typeof info.version === 'string' ? info.version.split(' ')[0] : null;
  return { version, tables, source };
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
  for (const f of schema.tables.get(table)?.fields ?? []) {
    if (f.foreignKey) out.push({ table: f.foreignKey.table, cardinality: 'many-to-one', via: f.name });
  }
  for (const t of schema.tables.values()) {
    for (const f of t.fields) if (f.foreignKey?.table === table) out.push({ table: t.name, cardinality: 'one-to-many', via: f.name });
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
