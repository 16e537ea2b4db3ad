
create or replace function catalog_isrc_key(code text) returns text language sql immutable parallel safe as $$
  select case when code ~ '^[A-Z]{2}[A-Z0-9]{3}[0-9]{7}$' then code
    when upper(regexp_replace(code, '[\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff._-]', '', 'g')) ~ '^[A-Z]{2}[A-Z0-9]{3}[0-9]{7}$'
    then upper(regexp_replace(code, '[\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff._-]', '', 'g'))
    else upper(regexp_replace(code, '^[\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]+|[\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]+$', '', 'g')) end
$$;
create or replace function catalog_upc_key(code text) returns text language sql immutable parallel safe as $$
  select regexp_replace(code, '[\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff-]', '', 'g')
$$;

create index if not exists tracks_isrc_code_key_idx on tracks using hash (catalog_isrc_key(isrc_code)) where isrc_code !~ '^[A-Z]{2}[A-Z0-9]{3}[0-9]{7}$';
create index if not exists releases_upc_code_key_idx on releases using hash (catalog_upc_key(upc_code)) where upc_code ~ '[\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff-]';
create index if not exists releases_catalog_number_key_idx on releases using hash (catalog_name_key(catalog_number));
create index if not exists labels_name_key_idx on labels using hash (catalog_name_key(name));
create index if not exists genres_name_key_idx on genres using hash (catalog_name_key(name));
create index if not exists countries_name_key_idx on countries using hash (catalog_name_key(name));
create index if not exists languages_name_key_idx on languages using hash (catalog_name_key(name));
create index if not exists subgenres_genre_name_key_idx on subgenres using hash (coalesce(catalog_name_key(name), ''));

do $$
declare
  s text := current_schema();
  side text := format('%I.%I', 'catalog_source_ids', current_schema());
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
    create schema if not exists catalog_source_ids;
  exception when duplicate_schema or unique_violation then null;
  end;
  execute format('create table if not exists %s of %I.catalog_source_id (
      collection not null, source not null, source_id not null, record not null,
      primary key (collection, source, source_id),
      unique (collection, record, source),
      constraint source_check check (source ~ %L),
      constraint source_id_check check (source_id <> %L and length(source_id) <= 512)
    )', side, s, '^[A-Za-z0-9_-]{1,64}$', '');
  execute format('comment on table %s is %L', side, 'Source ids (issue 35) of the catalog in schema ' || s || ': the id each record has in another system, shown as the computed field source_ids of each collection. Not a collection.');
  execute format('create or replace function %I.catalog_source_ids_deleted() returns trigger language plpgsql as %L', s,
    format('begin delete from %s x using gone g where x.collection = TG_TABLE_NAME and x.record = g.id; return null; end', side));
  execute format('create or replace function %I.catalog_source_ids_truncated() returns trigger language plpgsql as %L', s,
    format('begin delete from %s x where x.collection = TG_TABLE_NAME; return null; end', side));
  execute format('create or replace function %I.catalog_source_ids_moved() returns trigger language plpgsql as %L', s,
    format('begin update %s x set record = new.id where x.collection = TG_TABLE_NAME and x.record = old.id; return null; end', side));
  foreach c in array array['countries', 'languages', 'genres', 'subgenres', 'labels', 'artists', 'releases', 'tracks'] loop
    execute format('drop trigger if exists %I on %I.%I', c || '_source_ids_deleted', s, c);
    execute format('create trigger %I after delete on %I.%I referencing old table as gone for each statement execute function %I.catalog_source_ids_deleted()', c || '_source_ids_deleted', s, c, s);
    execute format('drop trigger if exists %I on %I.%I', c || '_source_ids_truncated', s, c);
    execute format('create trigger %I after truncate on %I.%I for each statement execute function %I.catalog_source_ids_truncated()', c || '_source_ids_truncated', s, c, s);
    execute format('drop trigger if exists %I on %I.%I', c || '_source_ids_moved', s, c);
    execute format('create trigger %I after update of id on %I.%I for each row when (old.id is distinct from new.id) execute function %I.catalog_source_ids_moved()', c || '_source_ids_moved', s, c, s);
    -- the computed field: PostgREST calls source_ids(row) for select=source_ids, and filters and order on it
    execute format('create or replace function %I.source_ids(%I.%I) returns jsonb language sql stable parallel safe as %L',
      s, s, c, format('select coalesce(jsonb_object_agg(x.source, x.source_id), %L::jsonb) from %s x where x.collection = %L and x.record = $1.id', '{}', side, c));
  end loop;
end $$;

comment on table countries is 'Computed field source_ids (jsonb, not part of select=*): the record''s id in each source system it came from, {"<source>": "<id>"}, {} when none. Read it with select=id,source_ids or select=id,source_ids->>legacy, filter with source_ids->>legacy=eq.201. Written (catalog serve): a source_ids object in a POST or PATCH body, or a COPY column of JSON text.';
comment on table languages is 'Computed field source_ids (jsonb, not part of select=*): the record''s id in each source system it came from, {"<source>": "<id>"}, {} when none. Read it with select=id,source_ids or select=id,source_ids->>legacy, filter with source_ids->>legacy=eq.201. Written (catalog serve): a source_ids object in a POST or PATCH body, or a COPY column of JSON text.';
comment on table genres is 'Computed field source_ids (jsonb, not part of select=*): the record''s id in each source system it came from, {"<source>": "<id>"}, {} when none. Read it with select=id,source_ids or select=id,source_ids->>legacy, filter with source_ids->>legacy=eq.201. Written (catalog serve): a source_ids object in a POST or PATCH body, or a COPY column of JSON text.';
comment on table subgenres is 'Computed field source_ids (jsonb, not part of select=*): the record''s id in each source system it came from, {"<source>": "<id>"}, {} when none. Read it with select=id,source_ids or select=id,source_ids->>legacy, filter with source_ids->>legacy=eq.201. Written (catalog serve): a source_ids object in a POST or PATCH body, or a COPY column of JSON text.';
comment on table labels is 'Computed field source_ids (jsonb, not part of select=*): the record''s id in each source system it came from, {"<source>": "<id>"}, {} when none. Read it with select=id,source_ids or select=id,source_ids->>legacy, filter with source_ids->>legacy=eq.201. Written (catalog serve): a source_ids object in a POST or PATCH body, or a COPY column of JSON text.';
comment on table artists is 'Computed field source_ids (jsonb, not part of select=*): the record''s id in each source system it came from, {"<source>": "<id>"}, {} when none. Read it with select=id,source_ids or select=id,source_ids->>legacy, filter with source_ids->>legacy=eq.201. Written (catalog serve): a source_ids object in a POST or PATCH body, or a COPY column of JSON text.';
comment on table releases is 'Computed field source_ids (jsonb, not part of select=*): the record''s id in each source system it came from, {"<source>": "<id>"}, {} when none. Read it with select=id,source_ids or select=id,source_ids->>legacy, filter with source_ids->>legacy=eq.201. Written (catalog serve): a source_ids object in a POST or PATCH body, or a COPY column of JSON text.';
comment on table tracks is 'Computed field source_ids (jsonb, not part of select=*): the record''s id in each source system it came from, {"<source>": "<id>"}, {} when none. Read it with select=id,source_ids or select=id,source_ids->>legacy, filter with source_ids->>legacy=eq.201. Written (catalog serve): a source_ids object in a POST or PATCH body, or a COPY column of JSON text.';
