import { TABLES } from './catalog.js';
import { ISRC_PATTERN as ISRC, keyExpressions, notOwnKey, WS } from './match.js';
import { MAX_SOURCE_ID, SOURCE_IDS, SOURCE_IDS_COMMENT, SOURCE_IDS_SCHEMA } from './source-ids.js';

/**
 * Migration 6 (issue 35): source ids and the natural-key indexes `Prefer: match=` looks up.
 *
 * - `catalog_source_ids.<catalog schema>`: one row per (collection, source, source id) → record
 *   id, unique on (collection, source, source_id) (a source id names one record) and on
 *   (collection, record, source) (a record has one id per source; also the index `source_ids(row)`
 *   reads); a record's rows go with it (triggers, below). It is no collection: the service's
 *   schema cache is the eight tables (src/schema/catalog.ts).
 * - `source_ids(<table>) returns jsonb` for each collection: the PostgREST computed field.
 * - `catalog_isrc_key`, `catalog_upc_key`: the ISRC and UPC comparison forms of src/schema/keys.ts
 *   (isrcKey after trimming, upcKey), beside migration 4's `catalog_name_key` (nameKey).
 * - expression indexes on the collections' default natural keys (TableDef.naturalKey, src/schema/facts.ts),
 *   written as the service's lookups write them (src/schema/match.ts keyPartSql), so a match is an
 *   index scan at any size.
 * - a table comment per collection naming the computed field (PostgREST's root description shows it).
 *
 * Frozen once released, like every migration: the texts it uses must not change under it.
 */

/**
 * isrcKey(raw.trim()): the form without separators and in upper case when that is a valid ISRC
 * (a valid ISRC has no separators, so it is its own bare form: the first case, one match and no
 * copy, is what nearly every stored ISRC takes, at every insert into the index), else the trimmed
 * text in upper case. One expression each, built-in functions only: inlinable, and safe in an index.
 */
const KEY_FUNCTIONS = `
create or replace function catalog_isrc_key(code text) returns text language sql immutable parallel safe as $$
  select case when code ~ '${ISRC}' then code
    when upper(regexp_replace(code, '[${WS}._-]', '', 'g')) ~ '${ISRC}'
    then upper(regexp_replace(code, '[${WS}._-]', '', 'g'))
    else upper(regexp_replace(code, '^[${WS}]+|[${WS}]+$', '', 'g')) end
$$;
create or replace function catalog_upc_key(code text) returns text language sql immutable parallel safe as $$
  select regexp_replace(code, '[${WS}-]', '', 'g')
$$;
`;

/** The natural keys indexed for matching: each collection's default key alternatives (artists keep migration 4's stage-name index). */
const KEY_INDEXES: ReadonlyArray<[table: string, columns: string[]]> = [
  ['tracks', ['isrc_code']],
  ['releases', ['upc_code']],
  ['releases', ['catalog_number']],
  ['labels', ['name']],
  ['genres', ['name']],
  ['countries', ['name']],
  ['languages', ['name']],
  ['subgenres', ['genre', 'name']],
];

/**
 * The key indexes; an ISRC's and a UPC's index only the values that are not their own key (match.ts
 * notOwnKey). Hash indexes: a lookup is by equality only, and a hash index keeps a key's hash, so a
 * name of any length can be stored (a B-tree entry over 2,704 bytes refused a 3 KB label name). A
 * hash index has one column: a key of several (a subgenre's genre and name) is indexed on its last
 * part, which the lookup's equality on that part uses.
 */
const KEY_INDEX_SQL = KEY_INDEXES.map(([table, columns]) => {
  const exprs = keyExpressions(columns.map((name) => ({ name, type: 'text' })), (c) => c.name);
  const partial = columns.length === 1 ? notOwnKey(columns[0], columns[0]) : null;
  return `create index if not exists ${table}_${columns.join('_')}_key_idx on ${table} using hash (${exprs[exprs.length - 1]})${partial ? ` where ${partial}` : ''};`;
}).join('\n');

const COLLECTIONS = TABLES.map((t) => `'${t.name}'`).join(', ');

/**
 * The side table, made for the schema the migration runs in (current_schema(), the catalog's): in
 * the schema `catalog_source_ids` (shared by the catalogs of one database, made by the first),
 * named after the catalog's schema, so that it is no table of the catalog's schema (which holds the
 * eight collections and catalog_migrations only, as the store contract test checks, and a
 * PostgREST exposing that schema does not list it). It is a typed table of the catalog schema's
 * type `catalog_source_id`: dropping the catalog's schema (with cascade) drops it too. The
 * computed field's functions and the triggers read it by that name, fixed when they are made.
 *
 * A record's source ids go with it through triggers on each collection rather than a foreign key
 * per collection: a foreign key would make `truncate tracks` fail ("cannot truncate a table
 * referenced in a foreign key constraint"; the bench and people do it), and check every deleted
 * row one by one where the statement trigger deletes a bulk delete's source ids in one join. After
 * a DELETE (the statement's deleted rows), after a TRUNCATE (all of that collection's), and when a
 * record's id changes (moved to the new id). Only the service writes the table, for records its
 * write has just written or locked, so no entry names a record that is not there.
 */
const SIDE_TABLE = `
do $$
declare
  s text := current_schema();
  side text := format('%I.%I', '${SOURCE_IDS_SCHEMA}', current_schema());
  c text;
begin
  begin
    create type catalog_source_id as (collection text, source text, source_id text, record uuid);
  exception when duplicate_object then null;
  end;
  -- catalogs of one database migrate side by side: the shared schema is made by one at a time (as
  -- openPostgres makes catalog schemas), and one that waited may still find it missing and then collide
  perform pg_advisory_xact_lock(hashtext('catalog_create_schema'));
  begin
    create schema if not exists ${SOURCE_IDS_SCHEMA};
  exception when duplicate_schema or unique_violation then null;
  end;
  execute format('create table if not exists %s of %I.catalog_source_id (
      collection not null, source not null, source_id not null, record not null,
      primary key (collection, source, source_id),
      unique (collection, record, source),
      constraint source_check check (source ~ %L),
      constraint source_id_check check (source_id <> %L and length(source_id) <= ${MAX_SOURCE_ID})
    )', side, s, '^[A-Za-z0-9_-]{1,64}$', '');
  execute format('comment on table %s is %L', side, 'Source ids (issue 35) of the catalog in schema ' || s || ': the id each record has in another system, shown as the computed field ${SOURCE_IDS} of each collection. Not a collection.');
  execute format('create or replace function %I.catalog_source_ids_deleted() returns trigger language plpgsql as %L', s,
    format('begin delete from %s x using gone g where x.collection = TG_TABLE_NAME and x.record = g.id; return null; end', side));
  execute format('create or replace function %I.catalog_source_ids_truncated() returns trigger language plpgsql as %L', s,
    format('begin delete from %s x where x.collection = TG_TABLE_NAME; return null; end', side));
  execute format('create or replace function %I.catalog_source_ids_moved() returns trigger language plpgsql as %L', s,
    format('begin update %s x set record = new.id where x.collection = TG_TABLE_NAME and x.record = old.id; return null; end', side));
  foreach c in array array[${COLLECTIONS}] loop
    execute format('drop trigger if exists %I on %I.%I', c || '_source_ids_deleted', s, c);
    execute format('create trigger %I after delete on %I.%I referencing old table as gone for each statement execute function %I.catalog_source_ids_deleted()', c || '_source_ids_deleted', s, c, s);
    execute format('drop trigger if exists %I on %I.%I', c || '_source_ids_truncated', s, c);
    execute format('create trigger %I after truncate on %I.%I for each statement execute function %I.catalog_source_ids_truncated()', c || '_source_ids_truncated', s, c, s);
    execute format('drop trigger if exists %I on %I.%I', c || '_source_ids_moved', s, c);
    execute format('create trigger %I after update of id on %I.%I for each row when (old.id is distinct from new.id) execute function %I.catalog_source_ids_moved()', c || '_source_ids_moved', s, c, s);
    -- the computed field: PostgREST calls ${SOURCE_IDS}(row) for select=${SOURCE_IDS}, and filters and order on it
    execute format('create or replace function %I.${SOURCE_IDS}(%I.%I) returns jsonb language sql stable parallel safe as %L',
      s, s, c, format('select coalesce(jsonb_object_agg(x.source, x.source_id), %L::jsonb) from %s x where x.collection = %L and x.record = $1.id', '{}', side, c));
  end loop;
end $$;
`;

/** Each collection's comment: PostgREST's root description shows it (the computed field is no property). */
const COMMENTS = TABLES.map((t) => `comment on table ${t.name} is '${SOURCE_IDS_COMMENT.replace(/'/g, "''")}';`).join('\n');

/** Migration 6's SQL. */
export const SOURCE_IDS_MIGRATION_SQL = `${KEY_FUNCTIONS}
${KEY_INDEX_SQL}
${SIDE_TABLE}
${COMMENTS}
`;
