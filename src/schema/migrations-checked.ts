import { CREDIT_FIELDS } from './links.js';
import { CREDIT_SHAPE_PATH, fastCredits } from './migrations-links.js';
import { sqlString } from './model.js';

/**
 * Migration 8 (issue 36): the link checks cost nothing on rows without links, and the service's
 * own batches, checked set-based before they are written (src/server/link-batch.ts), skip them.
 *
 * - The row triggers `tracks_links` and `releases_links` fire only for a row that has a link value
 *   (a WHEN clause, evaluated without calling PL/pgSQL): a track whose six credit lists are null
 *   and a release without tracks pay what a plain row pays. A column a trigger's WHEN names cannot
 *   change type in a later migration without the trigger being made again.
 * - `tracks_links_inserted`, the statement trigger that checked an insert's artist ids and names
 *   over its transition table, goes: capturing the transition table cost every insert into tracks,
 *   links or not, 1.5 s of a 300k-row COPY. Row triggers do its part for the rows with credits
 *   (below), with the same codes, paths and messages.
 * - The service's skip: a batch the service has checked (every link value canonical, every id
 *   present, every name the artist's) is written with `catalog.checked_batch` set, for that
 *   statement, to this catalog's key; the row triggers' WHEN skips them then. The key is a random
 *   value in `catalog_private.<catalog schema>`, readable by its owner only (the role that migrated,
 *   which the service runs as); a statement trigger (SECURITY DEFINER) refuses any statement run
 *   with the setting at another value (42501), so a writer who cannot read the key cannot switch
 *   the checks off: psql, a real PostgREST (whose clients set no settings) and the service running
 *   as another role all get the row triggers. A role that can read the key owns the tables and
 *   could drop the triggers anyway.
 *
 * Frozen once released, like every migration.
 */

/** The setting a checked batch carries (the service sets it with set_config, transaction-local). */
export const CHECKED_BATCH_SETTING = 'catalog.checked_batch';

/** The schema of the catalogs' batch keys (one typed table per catalog schema, dropped with it). */
export const CHECKED_BATCH_SCHEMA = 'catalog_private';

const UNSET = `coalesce(current_setting('${CHECKED_BATCH_SETTING}', true), '') = ''`;

/**
 * The tracks trigger functions. An update's credits as migration 5 checks them (fastCredits). An
 * insert's as migration 5 did, with the statement trigger's part done for the row: before the
 * insert, a list whose shape needs more than a glance goes through catalog_credits (its path,
 * message and element), the others get their names from the artists; after it (a row an upsert
 * updated instead is not inserted), the first id that names no artist is refused as the
 * statement trigger refused it (23503, path and message, without the element).
 */
const TRACKS_FUNCTIONS = `
create or replace function catalog_tracks_links() returns trigger language plpgsql set plan_cache_mode = force_generic_plan as $$
declare v jsonb;
begin
  if pg_trigger_depth() > 1 then return new; end if;
${CREDIT_FIELDS.map((f) => `  if new.${f} is not null and tg_op = 'INSERT' then
    if jsonb_typeof(new.${f}) <> 'array' or jsonb_path_exists(new.${f}, '${CREDIT_SHAPE_PATH}') then new.${f} := catalog_credits('${f}', new.${f});
    else new.${f} := catalog_credits_named(new.${f});
    end if;
  elsif new.${f} is not null and new.${f} is distinct from old.${f} then
    ${fastCredits(`new.${f}`)} into v;
    new.${f} := coalesce(v, catalog_credits('${f}', new.${f}));
  end if;`).join('\n')}
  return new;
end $$;
create or replace function catalog_tracks_link_ids() returns trigger language plpgsql as $$
declare bad record;
begin
  if pg_trigger_depth() > 1 then return null; end if;
  select v.field, c.n - 1 as i, c.e->>'id' as id into bad
    from (values ${CREDIT_FIELDS.map((f, k) => `(${k}, '${f}', new.${f})`).join(', ')}) as v(k, field, arr)
    cross join lateral jsonb_array_elements(case when jsonb_typeof(v.arr) = 'array' then v.arr else '[]'::jsonb end) with ordinality as c(e, n)
    where c.e ? 'id' and not exists (select 1 from artists a where a.id = catalog_link_uuid(c.e->'id'))
    order by v.k, c.n limit 1;
  if found then perform catalog_link_raise('23503', format('%s[%s].id', bad.field, bad.i), format('no artist has id %s', bad.id), null, null); end if;
  return null;
end $$;
`;

const ANY_CREDITS = CREDIT_FIELDS.map((f) => `new.${f} is not null`).join(' or ');

const TRIGGERS = `
drop trigger if exists tracks_links_inserted on tracks;
drop function if exists catalog_tracks_inserted();
drop trigger if exists tracks_links on tracks;
create trigger tracks_links before insert or update on tracks for each row
  when (${UNSET} and (${ANY_CREDITS}))
  execute function catalog_tracks_links();
drop trigger if exists tracks_link_ids on tracks;
create trigger tracks_link_ids after insert on tracks for each row
  when (${UNSET} and (${ANY_CREDITS}))
  execute function catalog_tracks_link_ids();
drop trigger if exists releases_links on releases;
create trigger releases_links before insert or update on releases for each row
  when (${UNSET} and new.tracks is not null)
  execute function catalog_releases_links();
`;

/** The guard's body; `%s` is the key table (filled in by format() when the migration runs). */
const GUARD_BODY = `begin
  if coalesce(current_setting('${CHECKED_BATCH_SETTING}', true), '') <> ''
    and not exists (select 1 from %s k where k.key = current_setting('${CHECKED_BATCH_SETTING}', true)) then
    raise exception '${CHECKED_BATCH_SETTING} is set, and is not this catalog''s key' using errcode = '42501',
      hint = 'only catalog serve sets it, for batches it has checked as the link triggers would: reset ${CHECKED_BATCH_SETTING}';
  end if;
  return null;
end`;

/** The key table, its key, the guard function and its statement triggers, for the schema the migration runs in. */
const KEY = `
do $$
declare
  s text := current_schema();
  keys text := format('%I.%I', '${CHECKED_BATCH_SCHEMA}', current_schema());
  c text;
begin
  begin
    create type catalog_batch_key as (key text);
  exception when duplicate_object then null;
  end;
  perform pg_advisory_xact_lock(hashtext('catalog_create_schema'));
  begin
    create schema if not exists ${CHECKED_BATCH_SCHEMA};
  exception when duplicate_schema or unique_violation then null;
  end;
  revoke all on schema ${CHECKED_BATCH_SCHEMA} from public;
  execute format('create table if not exists %s of %I.catalog_batch_key (key not null)', keys, s);
  execute format('revoke all on %s from public', keys);
  execute format('comment on table %s is %L', keys, 'The key of catalog serve''s checked batches (issue 36) for the catalog in schema ' || s || '. Not a collection.');
  execute format('insert into %s (key) select replace(gen_random_uuid()::text, ''-'', '''') || replace(gen_random_uuid()::text, ''-'', '''') where not exists (select 1 from %s)', keys, keys);
  execute format('create or replace function %I.catalog_checked_batch_guard() returns trigger language plpgsql security definer set search_path = pg_catalog, pg_temp as %L',
    s, format(${sqlString(GUARD_BODY)}, keys));
  foreach c in array array['tracks', 'releases'] loop
    execute format('drop trigger if exists %I on %I.%I', c || '_checked_batch', s, c);
    execute format('create trigger %I before insert or update on %I.%I for each statement execute function %I.catalog_checked_batch_guard()', c || '_checked_batch', s, c, s);
  end loop;
end $$;
`;

/** Migration 8's SQL. */
export const CHECKED_BATCH_MIGRATION_SQL = TRACKS_FUNCTIONS + TRIGGERS + KEY;
