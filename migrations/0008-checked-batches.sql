
create or replace function catalog_tracks_links() returns trigger language plpgsql set plan_cache_mode = force_generic_plan as $$
declare v jsonb;
begin
  if pg_trigger_depth() > 1 then return new; end if;
  if new.primary_artists is not null and tg_op = 'INSERT' then
    if jsonb_typeof(new.primary_artists) <> 'array' or jsonb_path_exists(new.primary_artists, 'lax $[*] ? (@.type() != "object"
  || exists(@.keyvalue() ? (@.key != "id" && @.key != "name" && @.key != "role" && @.key != "share"))
  || exists(@.* ? (@.type() == "null"))
  || !exists(@.name) || @.name.type() != "string" || @.name like_regex "^[ ]*$"
  || (exists(@.id) && (@.id.type() != "string" || !(@.id like_regex "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")))
  || (exists(@.role) && @.role.type() != "string")
  || (exists(@.share) && (@.share.type() != "number" || @.share < 0 || @.share > 100)))') then new.primary_artists := catalog_credits('primary_artists', new.primary_artists);
    else new.primary_artists := catalog_credits_named(new.primary_artists);
    end if;
  elsif new.primary_artists is not null and new.primary_artists is distinct from old.primary_artists then
    select case when jsonb_typeof(new.primary_artists) = 'array' then (
    select case when bool_and(y.ok) is not false then coalesce(jsonb_agg(y.item order by y.n), '[]'::jsonb) end
    from (select x.n, case when jsonb_typeof(x.e) = 'object' then (x.e - '{id,name,role,share}'::text[]) = '{}'::jsonb
      and coalesce(jsonb_typeof(x.e->'name'), 'null') in ('null', 'string')
      and (case when coalesce(jsonb_typeof(x.e->'id'), 'null') = 'null' then coalesce(btrim(x.e->>'name'), '') <> '' else a.id is not null end)
      and coalesce(jsonb_typeof(x.e->'role'), 'null') in ('null', 'string')
      and (case coalesce(jsonb_typeof(x.e->'share'), 'null') when 'null' then true when 'number' then (x.e->'share')::numeric between 0 and 100 else false end)
    else false end as ok, jsonb_strip_nulls(jsonb_build_object('name', case when a.id is not null then coalesce(a.stage_name, '') else x.e->>'name' end,
      'id', a.id, 'role', x.e->'role', 'share', x.e->'share')) as item
      from jsonb_array_elements(new.primary_artists) with ordinality as x(e, n) left join artists a on a.id = catalog_link_uuid(x.e->'id')) as y) end into v;
    new.primary_artists := coalesce(v, catalog_credits('primary_artists', new.primary_artists));
  end if;
  if new.featuring_artists is not null and tg_op = 'INSERT' then
    if jsonb_typeof(new.featuring_artists) <> 'array' or jsonb_path_exists(new.featuring_artists, 'lax $[*] ? (@.type() != "object"
  || exists(@.keyvalue() ? (@.key != "id" && @.key != "name" && @.key != "role" && @.key != "share"))
  || exists(@.* ? (@.type() == "null"))
  || !exists(@.name) || @.name.type() != "string" || @.name like_regex "^[ ]*$"
  || (exists(@.id) && (@.id.type() != "string" || !(@.id like_regex "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")))
  || (exists(@.role) && @.role.type() != "string")
  || (exists(@.share) && (@.share.type() != "number" || @.share < 0 || @.share > 100)))') then new.featuring_artists := catalog_credits('featuring_artists', new.featuring_artists);
    else new.featuring_artists := catalog_credits_named(new.featuring_artists);
    end if;
  elsif new.featuring_artists is not null and new.featuring_artists is distinct from old.featuring_artists then
    select case when jsonb_typeof(new.featuring_artists) = 'array' then (
    select case when bool_and(y.ok) is not false then coalesce(jsonb_agg(y.item order by y.n), '[]'::jsonb) end
    from (select x.n, case when jsonb_typeof(x.e) = 'object' then (x.e - '{id,name,role,share}'::text[]) = '{}'::jsonb
      and coalesce(jsonb_typeof(x.e->'name'), 'null') in ('null', 'string')
      and (case when coalesce(jsonb_typeof(x.e->'id'), 'null') = 'null' then coalesce(btrim(x.e->>'name'), '') <> '' else a.id is not null end)
      and coalesce(jsonb_typeof(x.e->'role'), 'null') in ('null', 'string')
      and (case coalesce(jsonb_typeof(x.e->'share'), 'null') when 'null' then true when 'number' then (x.e->'share')::numeric between 0 and 100 else false end)
    else false end as ok, jsonb_strip_nulls(jsonb_build_object('name', case when a.id is not null then coalesce(a.stage_name, '') else x.e->>'name' end,
      'id', a.id, 'role', x.e->'role', 'share', x.e->'share')) as item
      from jsonb_array_elements(new.featuring_artists) with ordinality as x(e, n) left join artists a on a.id = catalog_link_uuid(x.e->'id')) as y) end into v;
    new.featuring_artists := coalesce(v, catalog_credits('featuring_artists', new.featuring_artists));
  end if;
  if new.remix_artists is not null and tg_op = 'INSERT' then
    if jsonb_typeof(new.remix_artists) <> 'array' or jsonb_path_exists(new.remix_artists, 'lax $[*] ? (@.type() != "object"
  || exists(@.keyvalue() ? (@.key != "id" && @.key != "name" && @.key != "role" && @.key != "share"))
  || exists(@.* ? (@.type() == "null"))
  || !exists(@.name) || @.name.type() != "string" || @.name like_regex "^[ ]*$"
  || (exists(@.id) && (@.id.type() != "string" || !(@.id like_regex "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")))
  || (exists(@.role) && @.role.type() != "string")
  || (exists(@.share) && (@.share.type() != "number" || @.share < 0 || @.share > 100)))') then new.remix_artists := catalog_credits('remix_artists', new.remix_artists);
    else new.remix_artists := catalog_credits_named(new.remix_artists);
    end if;
  elsif new.remix_artists is not null and new.remix_artists is distinct from old.remix_artists then
    select case when jsonb_typeof(new.remix_artists) = 'array' then (
    select case when bool_and(y.ok) is not false then coalesce(jsonb_agg(y.item order by y.n), '[]'::jsonb) end
    from (select x.n, case when jsonb_typeof(x.e) = 'object' then (x.e - '{id,name,role,share}'::text[]) = '{}'::jsonb
      and coalesce(jsonb_typeof(x.e->'name'), 'null') in ('null', 'string')
      and (case when coalesce(jsonb_typeof(x.e->'id'), 'null') = 'null' then coalesce(btrim(x.e->>'name'), '') <> '' else a.id is not null end)
      and coalesce(jsonb_typeof(x.e->'role'), 'null') in ('null', 'string')
      and (case coalesce(jsonb_typeof(x.e->'share'), 'null') when 'null' then true when 'number' then (x.e->'share')::numeric between 0 and 100 else false end)
    else false end as ok, jsonb_strip_nulls(jsonb_build_object('name', case when a.id is not null then coalesce(a.stage_name, '') else x.e->>'name' end,
      'id', a.id, 'role', x.e->'role', 'share', x.e->'share')) as item
      from jsonb_array_elements(new.remix_artists) with ordinality as x(e, n) left join artists a on a.id = catalog_link_uuid(x.e->'id')) as y) end into v;
    new.remix_artists := coalesce(v, catalog_credits('remix_artists', new.remix_artists));
  end if;
  if new.writer_artists is not null and tg_op = 'INSERT' then
    if jsonb_typeof(new.writer_artists) <> 'array' or jsonb_path_exists(new.writer_artists, 'lax $[*] ? (@.type() != "object"
  || exists(@.keyvalue() ? (@.key != "id" && @.key != "name" && @.key != "role" && @.key != "share"))
  || exists(@.* ? (@.type() == "null"))
  || !exists(@.name) || @.name.type() != "string" || @.name like_regex "^[ ]*$"
  || (exists(@.id) && (@.id.type() != "string" || !(@.id like_regex "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")))
  || (exists(@.role) && @.role.type() != "string")
  || (exists(@.share) && (@.share.type() != "number" || @.share < 0 || @.share > 100)))') then new.writer_artists := catalog_credits('writer_artists', new.writer_artists);
    else new.writer_artists := catalog_credits_named(new.writer_artists);
    end if;
  elsif new.writer_artists is not null and new.writer_artists is distinct from old.writer_artists then
    select case when jsonb_typeof(new.writer_artists) = 'array' then (
    select case when bool_and(y.ok) is not false then coalesce(jsonb_agg(y.item order by y.n), '[]'::jsonb) end
    from (select x.n, case when jsonb_typeof(x.e) = 'object' then (x.e - '{id,name,role,share}'::text[]) = '{}'::jsonb
      and coalesce(jsonb_typeof(x.e->'name'), 'null') in ('null', 'string')
      and (case when coalesce(jsonb_typeof(x.e->'id'), 'null') = 'null' then coalesce(btrim(x.e->>'name'), '') <> '' else a.id is not null end)
      and coalesce(jsonb_typeof(x.e->'role'), 'null') in ('null', 'string')
      and (case coalesce(jsonb_typeof(x.e->'share'), 'null') when 'null' then true when 'number' then (x.e->'share')::numeric between 0 and 100 else false end)
    else false end as ok, jsonb_strip_nulls(jsonb_build_object('name', case when a.id is not null then coalesce(a.stage_name, '') else x.e->>'name' end,
      'id', a.id, 'role', x.e->'role', 'share', x.e->'share')) as item
      from jsonb_array_elements(new.writer_artists) with ordinality as x(e, n) left join artists a on a.id = catalog_link_uuid(x.e->'id')) as y) end into v;
    new.writer_artists := coalesce(v, catalog_credits('writer_artists', new.writer_artists));
  end if;
  if new.performer_artists is not null and tg_op = 'INSERT' then
    if jsonb_typeof(new.performer_artists) <> 'array' or jsonb_path_exists(new.performer_artists, 'lax $[*] ? (@.type() != "object"
  || exists(@.keyvalue() ? (@.key != "id" && @.key != "name" && @.key != "role" && @.key != "share"))
  || exists(@.* ? (@.type() == "null"))
  || !exists(@.name) || @.name.type() != "string" || @.name like_regex "^[ ]*$"
  || (exists(@.id) && (@.id.type() != "string" || !(@.id like_regex "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")))
  || (exists(@.role) && @.role.type() != "string")
  || (exists(@.share) && (@.share.type() != "number" || @.share < 0 || @.share > 100)))') then new.performer_artists := catalog_credits('performer_artists', new.performer_artists);
    else new.performer_artists := catalog_credits_named(new.performer_artists);
    end if;
  elsif new.performer_artists is not null and new.performer_artists is distinct from old.performer_artists then
    select case when jsonb_typeof(new.performer_artists) = 'array' then (
    select case when bool_and(y.ok) is not false then coalesce(jsonb_agg(y.item order by y.n), '[]'::jsonb) end
    from (select x.n, case when jsonb_typeof(x.e) = 'object' then (x.e - '{id,name,role,share}'::text[]) = '{}'::jsonb
      and coalesce(jsonb_typeof(x.e->'name'), 'null') in ('null', 'string')
      and (case when coalesce(jsonb_typeof(x.e->'id'), 'null') = 'null' then coalesce(btrim(x.e->>'name'), '') <> '' else a.id is not null end)
      and coalesce(jsonb_typeof(x.e->'role'), 'null') in ('null', 'string')
      and (case coalesce(jsonb_typeof(x.e->'share'), 'null') when 'null' then true when 'number' then (x.e->'share')::numeric between 0 and 100 else false end)
    else false end as ok, jsonb_strip_nulls(jsonb_build_object('name', case when a.id is not null then coalesce(a.stage_name, '') else x.e->>'name' end,
      'id', a.id, 'role', x.e->'role', 'share', x.e->'share')) as item
      from jsonb_array_elements(new.performer_artists) with ordinality as x(e, n) left join artists a on a.id = catalog_link_uuid(x.e->'id')) as y) end into v;
    new.performer_artists := coalesce(v, catalog_credits('performer_artists', new.performer_artists));
  end if;
  if new.engineer_artists is not null and tg_op = 'INSERT' then
    if jsonb_typeof(new.engineer_artists) <> 'array' or jsonb_path_exists(new.engineer_artists, 'lax $[*] ? (@.type() != "object"
  || exists(@.keyvalue() ? (@.key != "id" && @.key != "name" && @.key != "role" && @.key != "share"))
  || exists(@.* ? (@.type() == "null"))
  || !exists(@.name) || @.name.type() != "string" || @.name like_regex "^[ ]*$"
  || (exists(@.id) && (@.id.type() != "string" || !(@.id like_regex "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")))
  || (exists(@.role) && @.role.type() != "string")
  || (exists(@.share) && (@.share.type() != "number" || @.share < 0 || @.share > 100)))') then new.engineer_artists := catalog_credits('engineer_artists', new.engineer_artists);
    else new.engineer_artists := catalog_credits_named(new.engineer_artists);
    end if;
  elsif new.engineer_artists is not null and new.engineer_artists is distinct from old.engineer_artists then
    select case when jsonb_typeof(new.engineer_artists) = 'array' then (
    select case when bool_and(y.ok) is not false then coalesce(jsonb_agg(y.item order by y.n), '[]'::jsonb) end
    from (select x.n, case when jsonb_typeof(x.e) = 'object' then (x.e - '{id,name,role,share}'::text[]) = '{}'::jsonb
      and coalesce(jsonb_typeof(x.e->'name'), 'null') in ('null', 'string')
      and (case when coalesce(jsonb_typeof(x.e->'id'), 'null') = 'null' then coalesce(btrim(x.e->>'name'), '') <> '' else a.id is not null end)
      and coalesce(jsonb_typeof(x.e->'role'), 'null') in ('null', 'string')
      and (case coalesce(jsonb_typeof(x.e->'share'), 'null') when 'null' then true when 'number' then (x.e->'share')::numeric between 0 and 100 else false end)
    else false end as ok, jsonb_strip_nulls(jsonb_build_object('name', case when a.id is not null then coalesce(a.stage_name, '') else x.e->>'name' end,
      'id', a.id, 'role', x.e->'role', 'share', x.e->'share')) as item
      from jsonb_array_elements(new.engineer_artists) with ordinality as x(e, n) left join artists a on a.id = catalog_link_uuid(x.e->'id')) as y) end into v;
    new.engineer_artists := coalesce(v, catalog_credits('engineer_artists', new.engineer_artists));
  end if;
  return new;
end $$;
create or replace function catalog_tracks_link_ids() returns trigger language plpgsql as $$
declare bad record;
begin
  if pg_trigger_depth() > 1 then return null; end if;
  select v.field, c.n - 1 as i, c.e->>'id' as id into bad
    from (values (0, 'primary_artists', new.primary_artists), (1, 'featuring_artists', new.featuring_artists), (2, 'remix_artists', new.remix_artists), (3, 'writer_artists', new.writer_artists), (4, 'performer_artists', new.performer_artists), (5, 'engineer_artists', new.engineer_artists)) as v(k, field, arr)
    cross join lateral jsonb_array_elements(case when jsonb_typeof(v.arr) = 'array' then v.arr else '[]'::jsonb end) with ordinality as c(e, n)
    where c.e ? 'id' and not exists (select 1 from artists a where a.id = catalog_link_uuid(c.e->'id'))
    order by v.k, c.n limit 1;
  if found then perform catalog_link_raise('23503', format('%s[%s].id', bad.field, bad.i), format('no artist has id %s', bad.id), null, null); end if;
  return null;
end $$;

drop trigger if exists tracks_links_inserted on tracks;
drop function if exists catalog_tracks_inserted();
drop trigger if exists tracks_links on tracks;
create trigger tracks_links before insert or update on tracks for each row
  when (coalesce(current_setting('catalog.checked_batch', true), '') = '' and (new.primary_artists is not null or new.featuring_artists is not null or new.remix_artists is not null or new.writer_artists is not null or new.performer_artists is not null or new.engineer_artists is not null))
  execute function catalog_tracks_links();
drop trigger if exists tracks_link_ids on tracks;
create trigger tracks_link_ids after insert on tracks for each row
  when (coalesce(current_setting('catalog.checked_batch', true), '') = '' and (new.primary_artists is not null or new.featuring_artists is not null or new.remix_artists is not null or new.writer_artists is not null or new.performer_artists is not null or new.engineer_artists is not null))
  execute function catalog_tracks_link_ids();
drop trigger if exists releases_links on releases;
create trigger releases_links before insert or update on releases for each row
  when (coalesce(current_setting('catalog.checked_batch', true), '') = '' and new.tracks is not null)
  execute function catalog_releases_links();

do $$
declare
  s text := current_schema();
  keys text := format('%I.%I', 'catalog_private', current_schema());
  c text;
begin
  begin
    create type catalog_batch_key as (key text);
  exception when duplicate_object then null;
  end;
  perform pg_advisory_xact_lock(hashtext('catalog_create_schema'));
  begin
    create schema if not exists catalog_private;
  exception when duplicate_schema or unique_violation then null;
  end;
  revoke all on schema catalog_private from public;
  execute format('create table if not exists %s of %I.catalog_batch_key (key not null)', keys, s);
  execute format('revoke all on %s from public', keys);
  execute format('comment on table %s is %L', keys, 'The key of catalog serve''s checked batches (issue 36) for the catalog in schema ' || s || '. Not a collection.');
  execute format('insert into %s (key) select replace(gen_random_uuid()::text, ''-'', '''') || replace(gen_random_uuid()::text, ''-'', '''') where not exists (select 1 from %s)', keys, keys);
  execute format('create or replace function %I.catalog_checked_batch_guard() returns trigger language plpgsql security definer set search_path = pg_catalog, pg_temp as %L',
    s, format('begin
  if coalesce(current_setting(''catalog.checked_batch'', true), '''') <> ''''
    and not exists (select 1 from %s k where k.key = current_setting(''catalog.checked_batch'', true)) then
    raise exception ''catalog.checked_batch is set, and is not this catalog''''s key'' using errcode = ''42501'',
      hint = ''only catalog serve sets it, for batches it has checked as the link triggers would: reset catalog.checked_batch'';
  end if;
  return null;
end', keys));
  foreach c in array array['tracks', 'releases'] loop
    execute format('drop trigger if exists %I on %I.%I', c || '_checked_batch', s, c);
    execute format('create trigger %I before insert or update on %I.%I for each statement execute function %I.catalog_checked_batch_guard()', c || '_checked_batch', s, c, s);
  end loop;
end $$;
