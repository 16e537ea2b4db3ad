import { INTERFACE_VERSION, SERVED_TABLES, TABLES, type ColumnDef, type TableDef } from '../schema/catalog.js';
import { LINK_COMMENTS } from '../schema/links.js';
import { REMOVALS_COMMENT } from '../schema/in-database.js';
import { SOURCE_IDS_COMMENT } from '../schema/source-ids.js';

/**
 * The root description (OpenAPI 2.0), generated from the schema as PostgREST 12.2.3 does
 * (reference §10): one definition per table with formats, defaults, required and key notes,
 * paths per table, and the shared parameters.
 */
export function openApiDocument(opts: { host?: string; basePath?: string } = {}): Record<string, unknown> {
  const tables = [...SERVED_TABLES].sort((a, b) => a.name.localeCompare(b.name));
  const paths: Record<string, unknown> = {
    '/': {
      get: {
        tags: ['Introspection'],
        summary: 'OpenAPI description (this document)',
        produces: ['application/openapi+json', 'application/json'],
        responses: { '200': { description: 'OK' } },
      },
    },
  };
  const definitions: Record<string, unknown> = {};
  const parameters: Record<string, unknown> = {
    preferParams: pref('params=single-object'),
    preferReturn: pref('return=representation', 'return=minimal', 'return=none'),
    preferCount: pref('count=none'),
    preferPost: pref('return=representation', 'return=minimal', 'return=none', 'resolution=ignore-duplicates', 'resolution=merge-duplicates'),
    select: query('select', 'Filtering Columns'),
    on_conflict: query('on_conflict', 'On Conflict'),
    order: query('order', 'Ordering'),
    range: { name: 'Range', in: 'header', required: false, type: 'string', description: 'Limiting and Pagination' },
    rangeUnit: { name: 'Range-Unit', in: 'header', required: false, type: 'string', description: 'Limiting and Pagination', default: 'items' },
    offset: query('offset', 'Limiting and Pagination'),
    limit: query('limit', 'Limiting and Pagination'),
  };
  for (const t of tables) {
    definitions[t.name] = definition(t);
    if (!t.readOnly) parameters[`body.${t.name}`] = { name: t.name, in: 'body', required: false, description: t.name, schema: { $ref: `#/definitions/${t.name}` } };
    for (const c of t.columns) {
      parameters[`rowFilter.${t.name}.${c.name}`] = { name: c.name, in: 'query', required: false, type: 'string', format: c.type };
    }
    paths[`/${t.name}`] = tablePaths(t);
  }
  return {
    swagger: '2.0',
    info: {
      description: 'Music Catalog Service: artists, releases, tracks, labels, genres, subgenres, countries and languages.',
      title: 'Music Catalog Service',
      version: INTERFACE_VERSION,
    },
    host: opts.host ?? '0.0.0.0:3000',
    basePath: opts.basePath ?? '/',
    schemes: ['http'],
    consumes: ['application/json', 'application/vnd.pgrst.object+json;nulls=stripped', 'application/vnd.pgrst.object+json', 'text/csv'],
    produces: ['application/json', 'application/vnd.pgrst.object+json;nulls=stripped', 'application/vnd.pgrst.object+json', 'text/csv'],
    externalDocs: { description: 'PostgREST Documentation', url: 'https://postgrest.org/en/v12/references/api.html' },
    paths,
    definitions,
    parameters,
  };
}

function pref(...values: string[]) {
  return { name: 'Prefer', in: 'header', required: false, type: 'string', description: 'Preference', enum: values };
}

function query(name: string, description: string) {
  return { name, in: 'query', required: false, type: 'string', description };
}

/**
 * Each collection's table comment (migration 6 sets it in the database, so a PostgREST over the
 * same database shows the same): it names the computed field `source_ids`, which is no property.
 * PostgREST lists a table's columns as its properties and never its computed fields; listing it
 * there would also tell clients `select=*` gives it and a write stores it as a column.
 */
const TABLE_COMMENTS: Readonly<Record<string, string>> = { ...Object.fromEntries(TABLES.map((t) => [t.name, SOURCE_IDS_COMMENT])), removals: REMOVALS_COMMENT };

/** A table's path: GET for every table, POST, DELETE and PATCH for those that take writes (PostgREST lists what a relation allows). */
function tablePaths(t: TableDef): Record<string, unknown> {
  const rowFilters = t.columns.map((c) => ({ $ref: `#/parameters/rowFilter.${t.name}.${c.name}` }));
  const ref = (name: string) => ({ $ref: `#/parameters/${name}` });
  const op = operationNotes(TABLE_COMMENTS[t.name]);
  const get = {
    tags: [t.name],
    ...op,
    parameters: [...rowFilters, ...['select', 'order', 'range', 'rangeUnit', 'offset', 'limit', 'preferCount'].map(ref)],
    responses: {
      '200': { description: 'OK', schema: { type: 'array', items: { $ref: `#/definitions/${t.name}` } } },
      '206': { description: 'Partial Content' },
    },
  };
  if (t.readOnly) return { get };
  return {
    get,
    post: {
      tags: [t.name],
      ...op,
      parameters: [ref(`body.${t.name}`), ref('select'), ref('preferPost')],
      responses: { '201': { description: 'Created' } },
    },
    delete: { tags: [t.name], ...op, parameters: [...rowFilters, ref('preferReturn')], responses: { '204': { description: 'No Content' } } },
    patch: {
      tags: [t.name],
      ...op,
      parameters: [...rowFilters, ref(`body.${t.name}`), ref('preferReturn')],
      responses: { '204': { description: 'No Content' } },
    },
  };
}

/** PostgREST's operation summary and description from a table comment: its first line, and the rest (when there is more). */
function operationNotes(comment: string | undefined): { summary?: string; description?: string } {
  if (comment === undefined) return {};
  const nl = comment.indexOf('\n');
  if (nl < 0) return { summary: comment };
  const rest = comment.slice(nl).replace(/^\n+/, '');
  return rest === '' ? { summary: comment.slice(0, nl) } : { summary: comment.slice(0, nl), description: rest };
}

function definition(t: TableDef): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (const c of t.columns) properties[c.name] = property(c, t.name);
  const description = TABLE_COMMENTS[t.name];
  return {
    type: 'object',
    ...(description !== undefined ? { description } : {}),
    properties,
    required: t.columns.filter((c) => !c.nullable).map((c) => c.name),
  };
}

/** One column as PostgREST describes it: format = PG type name, no `type` for jsonb, defaults cleaned. */
function property(c: ColumnDef, table: string): Record<string, unknown> {
  const p: Record<string, unknown> = {};
  const d = defaultValue(c);
  if (d !== undefined) p.default = d;
  const notes: string[] = [];
  if (c.primaryKey) notes.push('This is a Primary Key.<pk/>');
  if (c.foreignKey) notes.push(`This is a Foreign Key to \`${c.foreignKey.table}.${c.foreignKey.column}\`.<fk table='${c.foreignKey.table}' column='${c.foreignKey.column}'/>`);
  // PostgREST: the column's comment, then the key notes
  const comment = LINK_COMMENTS[table]?.[c.name];
  if (comment !== undefined || notes.length) p.description = [comment, notes.length ? `Note:\n${notes.join('\n')}` : undefined].filter((x) => x !== undefined).join('\n\n');
  p.format = c.type;
  if (c.type === 'boolean') p.type = 'boolean';
  else if (c.type !== 'jsonb') p.type = 'string';
  return p;
}

function defaultValue(c: ColumnDef): unknown {
  if (c.default === undefined) return undefined;
  if (c.type === 'boolean') return c.default === 'true';
  // String-typed columns: strip the ::type suffix and the quotes (`''::text` → "").
  const m = /^'(.*)'::[a-z ]+$/s.exec(c.default);
  if (m) return m[1].replace(/''/g, "'");
  return c.default;
}
