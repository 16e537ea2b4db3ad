
drop index if exists tracks_credit_ids_idx;
drop index if exists releases_tracks_links_idx;

create or replace function catalog_link_uuid(v jsonb) returns uuid language sql immutable parallel safe as $$
  select case when jsonb_typeof(v) = 'string' and (v #>> '{}') ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
    then (v #>> '{}')::uuid end
$$;
create or replace function catalog_link_count(v jsonb) returns integer language sql immutable parallel safe as $$
  select case when jsonb_typeof(v) = 'number' then
    case when v::numeric = trunc(v::numeric) and v::numeric between 1 and 2147483647 then v::numeric::integer end end
$$;
create or replace function catalog_link_array(v jsonb) returns jsonb language sql immutable parallel safe as $$
  select case when jsonb_typeof(v) = 'array' then v else '[]'::jsonb end
$$;
create or replace function catalog_link_raise(code text, path text, reason text, hint text, element jsonb) returns void language plpgsql as $$
begin
  -- RAISE refuses a null option, so each combination is spelled out
  if hint is null and element is null then raise exception '%: %', path, reason using errcode = code;
  elsif hint is null then raise exception '%: %', path, reason using errcode = code, detail = 'the element: ' || left(element::text, 200);
  elsif element is null then raise exception '%: %', path, reason using errcode = code, hint = hint;
  else raise exception '%: %', path, reason using errcode = code, hint = hint, detail = 'the element: ' || left(element::text, 200);
  end if;
end $$;

create or replace function catalog_key_list(links jsonb) returns jsonb language sql immutable as $$
  select case when jsonb_typeof(links) = 'string' then coalesce(
    (select jsonb_agg(btrim(k) order by n) from unnest(string_to_array(links #>> '{}', ';')) with ordinality as x(k, n) where btrim(k) <> ''),
    '[]'::jsonb) else links end
$$;
create or replace function catalog_name_key(name text) returns text language sql immutable parallel safe as $$
  select lower(btrim(regexp_replace(regexp_replace(normalize(name, NFKD), '[\u0300-\u036f]', '', 'g'), '\s+', ' ', 'g')))
$$;
create or replace function catalog_track_by_key(k text, path text) returns uuid language plpgsql stable as $$
declare ids uuid[]; ukey text := upper(regexp_replace(k, '[\s._-]', '', 'g')); near text;
begin
  if k ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' then return k::uuid; end if;
  select array_agg(t.id order by t.id) into ids from tracks t where t.isrc_code in (k, ukey);
  if ids is null then
    -- the nearest ISRCs of the same registrant: at most two characters differ
    select string_agg(isrc_code, ', ' order by d, isrc_code) into near from (select t.isrc_code, d.d from tracks t,
      lateral (select count(*) as d from generate_series(1, 12) as i where substr(t.isrc_code, i, 1) <> substr(ukey, i, 1)) as d
      where t.isrc_code between left(ukey, 5) and left(ukey, 5) || 'ZZZZZZZ' and d.d <= 2
      order by d.d, t.isrc_code limit 3) as c;
    if near is null then perform catalog_link_raise('23503', path, format('no track has ISRC %s', k), null, to_jsonb(k));
    else perform catalog_link_raise('23503', path, format('no track has ISRC %s', k), 'did you mean ' || near || '?', to_jsonb(k));
    end if;
  end if;
  if cardinality(ids) > 1 then
    perform catalog_link_raise('23514', path, format('ISRC %s names %s tracks (%s): give the track id', k, cardinality(ids), array_to_string(ids, ', ')), null, to_jsonb(k));
  end if;
  return ids[1];
end $$;
create or replace function catalog_artist_by_key(k text, path text) returns uuid language plpgsql stable as $$
declare ids uuid[]; key text := catalog_name_key(k); near text;
begin
  if k ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' then return k::uuid; end if;
  select array_agg(a.id order by a.id) into ids from artists a where catalog_name_key(a.stage_name) = key;
  if ids is null then
    select string_agg('"' || stage_name || '"', ', ') into near from (select a.stage_name from artists a
      where catalog_name_key(a.stage_name) like left(key, 3) || '%' or key like left(catalog_name_key(a.stage_name), 3) || '%'
      order by length(a.stage_name) limit 3) as c;
    if near is null then perform catalog_link_raise('23503', path, format('no artist is named "%s"', k), null, to_jsonb(k));
    else perform catalog_link_raise('23503', path, format('no artist is named "%s"', k), 'did you mean ' || near || '?', to_jsonb(k));
    end if;
  end if;
  if cardinality(ids) > 1 then
    perform catalog_link_raise('23514', path, format('%s artists are named "%s" (%s): give the artist id', cardinality(ids), k, array_to_string(ids, ', ')), null, to_jsonb(k));
  end if;
  return ids[1];
end $$;
create index if not exists artists_name_key_idx on artists (catalog_name_key(stage_name));

create or replace function catalog_release_tracks(links jsonb) returns jsonb language plpgsql stable as $$
declare
  el jsonb; i integer := -1; k text; tid uuid; pos integer; disc integer; slot text;
  seen jsonb := '{}'; out jsonb := '[]'; hint constant text := 'releases.tracks is an array of {"id": a track id, "position": 1, 2, …, "disc": 1, 2, … (optional)}';
begin
  if links is null or jsonb_typeof(links) = 'null' then return null; end if;
  links := catalog_key_list(links);
  if jsonb_typeof(links) <> 'array' then
    perform catalog_link_raise('23514', 'tracks', 'must be an array, not ' || jsonb_typeof(links), hint, null);
  end if;
  for el in select value from jsonb_array_elements(links) loop
    i := i + 1;
    if jsonb_typeof(el) = 'string' then
      el := jsonb_build_object('id', catalog_track_by_key(el #>> '{}', format('tracks[%s]', i)), 'position', i + 1);
    end if;
    if jsonb_typeof(el) <> 'object' then
      perform catalog_link_raise('23514', format('tracks[%s]', i), 'must be an object, not ' || jsonb_typeof(el), hint, el);
    end if;
    select min(key) into k from jsonb_object_keys(el) as key where key not in ('id', 'position', 'disc');
    if k is not null then
      perform catalog_link_raise('23514', format('tracks[%s]', i), format('unknown key "%s" (a track link has id, position, disc)', k), hint, el);
    end if;
    tid := catalog_link_uuid(el->'id');
    if tid is null then perform catalog_link_raise('23514', format('tracks[%s].id', i), 'must be a track id (a uuid)', hint, el); end if;
    pos := catalog_link_count(el->'position');
    if pos is null then perform catalog_link_raise('23514', format('tracks[%s].position', i), 'must be a whole number from 1', hint, el); end if;
    disc := null;
    if coalesce(jsonb_typeof(el->'disc'), 'null') <> 'null' then
      disc := catalog_link_count(el->'disc');
      if disc is null then perform catalog_link_raise('23514', format('tracks[%s].disc', i), 'must be a whole number from 1', hint, el); end if;
    end if;
    slot := coalesce(disc, 1) || '/' || pos;
    if seen ? slot then
      perform catalog_link_raise('23514', format('tracks[%s].position', i),
        format('repeats position %s of disc %s (tracks[%s])', pos, coalesce(disc, 1), seen->>slot), hint, el);
    end if;
    seen := seen || jsonb_build_object(slot, i);
    if not exists (select 1 from tracks t where t.id = tid) then
      perform catalog_link_raise('23503', format('tracks[%s].id', i), format('no track has id %s', tid), null, el);
    end if;
    out := out || jsonb_build_array(jsonb_strip_nulls(jsonb_build_object('id', tid, 'position', pos, 'disc', disc)));
  end loop;
  return (select coalesce(jsonb_agg(e order by coalesce((e->>'disc')::integer, 1), (e->>'position')::integer), '[]')
    from jsonb_array_elements(out) as e);
end $$;

create or replace function catalog_credits(field text, links jsonb) returns jsonb language plpgsql stable as $$
declare
  el jsonb; i integer := -1; k text; aid uuid; aname text; item jsonb; share numeric;
  out jsonb := '[]'; hint constant text := 'a credits list is an array of {"id": an artist id (optional), "name": text, "role": text (optional), "share": 0–100 (optional)}';
begin
  if links is null or jsonb_typeof(links) = 'null' then return null; end if;
  links := catalog_key_list(links);
  if jsonb_typeof(links) <> 'array' then
    perform catalog_link_raise('23514', field, 'must be an array, not ' || jsonb_typeof(links), hint, null);
  end if;
  for el in select value from jsonb_array_elements(links) loop
    i := i + 1;
    if jsonb_typeof(el) = 'string' then
      el := jsonb_build_object('id', catalog_artist_by_key(el #>> '{}', format('%s[%s]', field, i)));
    end if;
    if jsonb_typeof(el) <> 'object' then
      perform catalog_link_raise('23514', format('%s[%s]', field, i), 'must be an object, not ' || jsonb_typeof(el), hint, el);
    end if;
    select min(key) into k from jsonb_object_keys(el) as key where key not in ('id', 'name', 'role', 'share');
    if k is not null then
      perform catalog_link_raise('23514', format('%s[%s]', field, i), format('unknown key "%s" (a credit has id, name, role, share)', k), hint, el);
    end if;
    if coalesce(jsonb_typeof(el->'name'), 'null') not in ('null', 'string') then
      perform catalog_link_raise('23514', format('%s[%s].name', field, i), 'must be text, not ' || jsonb_typeof(el->'name'), hint, el);
    end if;
    aid := null;
    aname := el->>'name';
    if coalesce(jsonb_typeof(el->'id'), 'null') <> 'null' then
      aid := catalog_link_uuid(el->'id');
      if aid is null then perform catalog_link_raise('23514', format('%s[%s].id', field, i), 'must be an artist id (a uuid)', hint, el); end if;
      select coalesce(a.stage_name, '') into aname from artists a where a.id = aid;
      if not found then perform catalog_link_raise('23503', format('%s[%s].id', field, i), format('no artist has id %s', aid), null, el); end if;
    elsif coalesce(btrim(aname), '') = '' then
      perform catalog_link_raise('23514', format('%s[%s]', field, i), 'needs a "name" (or the "id" of an artist in the catalog)', hint, el);
    end if;
    item := jsonb_build_object('name', aname);
    if aid is not null then item := item || jsonb_build_object('id', aid); end if;
    if coalesce(jsonb_typeof(el->'role'), 'null') <> 'null' then
      if jsonb_typeof(el->'role') <> 'string' then
        perform catalog_link_raise('23514', format('%s[%s].role', field, i), 'must be text, not ' || jsonb_typeof(el->'role'), hint, el);
      end if;
      item := item || jsonb_build_object('role', el->'role');
    end if;
    if coalesce(jsonb_typeof(el->'share'), 'null') <> 'null' then
      share := case when jsonb_typeof(el->'share') = 'number' then (el->'share')::numeric end;
      if share is null or share < 0 or share > 100 then
        perform catalog_link_raise('23514', format('%s[%s].share', field, i), 'must be a number from 0 to 100', hint, el);
      end if;
      item := item || jsonb_build_object('share', el->'share');
    end if;
    out := out || jsonb_build_array(item);
  end loop;
  return out;
end $$;

create or replace function catalog_releases_links() returns trigger language plpgsql set plan_cache_mode = force_generic_plan as $$
declare v jsonb;
begin
  if new.tracks is not null and (tg_op = 'INSERT' or new.tracks is distinct from old.tracks) then
    select case when jsonb_typeof(new.tracks) = 'array' then (
    select case when bool_and(y.ok) is not false and count(*) = count(distinct (y.d, y.p))
      then coalesce(jsonb_agg(y.item order by y.d, y.p), '[]'::jsonb) end
    from (select case when jsonb_typeof(x.e) = 'object' then (x.e - '{id,position,disc}'::text[]) = '{}'::jsonb
      and t.id is not null and catalog_link_count(x.e->'position') is not null
      and (coalesce(jsonb_typeof(x.e->'disc'), 'null') = 'null' or catalog_link_count(x.e->'disc') is not null)
    else false end as ok, coalesce(catalog_link_count(x.e->'disc'), 1) as d, catalog_link_count(x.e->'position') as p,
        jsonb_strip_nulls(jsonb_build_object('id', t.id, 'position', catalog_link_count(x.e->'position'), 'disc', catalog_link_count(x.e->'disc'))) as item
      from jsonb_array_elements(new.tracks) with ordinality as x(e, n) left join tracks t on t.id = catalog_link_uuid(x.e->'id')) as y) end into v;
    new.tracks := coalesce(v, catalog_release_tracks(new.tracks));
  end if;
  return new;
end $$;
drop trigger if exists releases_links on releases;
create trigger releases_links before insert or update on releases for each row execute function catalog_releases_links();
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
  || (exists(@.share) && (@.share.type() != "number" || @.share < 0 || @.share > 100)))') then new.primary_artists := catalog_credits('primary_artists', new.primary_artists); end if;
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
  || (exists(@.share) && (@.share.type() != "number" || @.share < 0 || @.share > 100)))') then new.featuring_artists := catalog_credits('featuring_artists', new.featuring_artists); end if;
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
  || (exists(@.share) && (@.share.type() != "number" || @.share < 0 || @.share > 100)))') then new.remix_artists := catalog_credits('remix_artists', new.remix_artists); end if;
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
  || (exists(@.share) && (@.share.type() != "number" || @.share < 0 || @.share > 100)))') then new.writer_artists := catalog_credits('writer_artists', new.writer_artists); end if;
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
  || (exists(@.share) && (@.share.type() != "number" || @.share < 0 || @.share > 100)))') then new.performer_artists := catalog_credits('performer_artists', new.performer_artists); end if;
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
  || (exists(@.share) && (@.share.type() != "number" || @.share < 0 || @.share > 100)))') then new.engineer_artists := catalog_credits('engineer_artists', new.engineer_artists); end if;
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
drop trigger if exists tracks_links on tracks;
create trigger tracks_links before insert or update on tracks for each row execute function catalog_tracks_links();
create or replace function catalog_credits_named(links jsonb) returns jsonb language sql stable as $$
  select case when jsonb_typeof(links) = 'array' then (
    select coalesce(jsonb_agg(case when a.id is null then x.e else jsonb_set(x.e, '{name}', to_jsonb(coalesce(a.stage_name, ''))) end order by x.n), '[]'::jsonb)
    from jsonb_array_elements(links) with ordinality as x(e, n) left join artists a on a.id = catalog_link_uuid(x.e->'id')) else links end
$$;
create or replace function catalog_tracks_inserted() returns trigger language plpgsql as $$
declare bad record;
begin
  if pg_trigger_depth() > 1 then return null; end if;
  select c.field, c.n - 1 as i, c.e->>'id' as id into bad from (select r.id as row_id, v.field, x.n, x.e from new_rows as r
    cross join lateral (values ('primary_artists', r.primary_artists), ('featuring_artists', r.featuring_artists), ('remix_artists', r.remix_artists), ('writer_artists', r.writer_artists), ('performer_artists', r.performer_artists), ('engineer_artists', r.engineer_artists)) as v(field, arr)
    cross join lateral jsonb_array_elements(case when jsonb_typeof(v.arr) = 'array' then v.arr else '[]'::jsonb end) with ordinality as x(e, n)) as c
    where c.e ? 'id' and not exists (select 1 from artists a where a.id = catalog_link_uuid(c.e->'id')) limit 1;
  if found then perform catalog_link_raise('23503', format('%s[%s].id', bad.field, bad.i), format('no artist has id %s', bad.id), null, null); end if;
  update tracks t set primary_artists = catalog_credits_named(t.primary_artists), featuring_artists = catalog_credits_named(t.featuring_artists), remix_artists = catalog_credits_named(t.remix_artists), writer_artists = catalog_credits_named(t.writer_artists), performer_artists = catalog_credits_named(t.performer_artists), engineer_artists = catalog_credits_named(t.engineer_artists)
    where t.id in (select c.row_id from (select r.id as row_id, v.field, x.n, x.e from new_rows as r
    cross join lateral (values ('primary_artists', r.primary_artists), ('featuring_artists', r.featuring_artists), ('remix_artists', r.remix_artists), ('writer_artists', r.writer_artists), ('performer_artists', r.performer_artists), ('engineer_artists', r.engineer_artists)) as v(field, arr)
    cross join lateral jsonb_array_elements(case when jsonb_typeof(v.arr) = 'array' then v.arr else '[]'::jsonb end) with ordinality as x(e, n)) as c join artists a on a.id = catalog_link_uuid(c.e->'id')
      where c.e->>'name' is distinct from coalesce(a.stage_name, ''));
  return null;
end $$;
drop trigger if exists tracks_links_inserted on tracks;
create trigger tracks_links_inserted after insert on tracks referencing new table as new_rows
  for each statement execute function catalog_tracks_inserted();
create or replace function catalog_credit_renamed(links jsonb, aid uuid, aname text) returns jsonb language sql immutable as $$
  select case when jsonb_typeof(links) = 'array' then (
    select jsonb_agg(case when e->>'id' = aid::text then jsonb_set(e, '{name}', to_jsonb(coalesce(aname, ''))) else e end order by n)
    from jsonb_array_elements(links) with ordinality as x(e, n)) else links end
$$;
create or replace function catalog_artist_renamed() returns trigger language plpgsql as $$
begin
  -- tested here, not in a WHEN clause: a column a trigger's WHEN names cannot change type in a later migration
  if new.stage_name is not distinct from old.stage_name then return null; end if;
  update tracks set primary_artists = catalog_credit_renamed(primary_artists, new.id, new.stage_name), featuring_artists = catalog_credit_renamed(featuring_artists, new.id, new.stage_name), remix_artists = catalog_credit_renamed(remix_artists, new.id, new.stage_name), writer_artists = catalog_credit_renamed(writer_artists, new.id, new.stage_name), performer_artists = catalog_credit_renamed(performer_artists, new.id, new.stage_name), engineer_artists = catalog_credit_renamed(engineer_artists, new.id, new.stage_name)
  where (coalesce(jsonb_path_query_array(primary_artists, '$[*].id'), '[]'::jsonb) || coalesce(jsonb_path_query_array(featuring_artists, '$[*].id'), '[]'::jsonb) || coalesce(jsonb_path_query_array(remix_artists, '$[*].id'), '[]'::jsonb) || coalesce(jsonb_path_query_array(writer_artists, '$[*].id'), '[]'::jsonb) || coalesce(jsonb_path_query_array(performer_artists, '$[*].id'), '[]'::jsonb) || coalesce(jsonb_path_query_array(engineer_artists, '$[*].id'), '[]'::jsonb)) @> jsonb_build_array(new.id);
  return null;
end $$;
drop trigger if exists artists_renamed on artists;
create trigger artists_renamed after update on artists for each row execute function catalog_artist_renamed();

create or replace function tracks(the_release releases) returns setof tracks language sql stable as $$
  select t.* from jsonb_array_elements(catalog_link_array(the_release.tracks)) with ordinality as l(el, n)
  join tracks t on t.id = catalog_link_uuid(l.el->'id')
  order by coalesce(catalog_link_count(l.el->'disc'), 1), catalog_link_count(l.el->'position'), l.n
$$;
create or replace function releases(the_track tracks) returns setof releases language sql stable as $$
  select r.* from releases r where r.tracks @> jsonb_build_array(jsonb_build_object('id', the_track.id))
  order by r.release_date, r.id
$$;
create or replace function tracks(the_artist artists) returns setof tracks language sql stable as $$
  select t.* from tracks t where (coalesce(jsonb_path_query_array(t.primary_artists, '$[*].id'), '[]'::jsonb) || coalesce(jsonb_path_query_array(t.featuring_artists, '$[*].id'), '[]'::jsonb) || coalesce(jsonb_path_query_array(t.remix_artists, '$[*].id'), '[]'::jsonb) || coalesce(jsonb_path_query_array(t.writer_artists, '$[*].id'), '[]'::jsonb) || coalesce(jsonb_path_query_array(t.performer_artists, '$[*].id'), '[]'::jsonb) || coalesce(jsonb_path_query_array(t.engineer_artists, '$[*].id'), '[]'::jsonb)) @> jsonb_build_array(the_artist.id)
  order by t.track_title, t.id
$$;
create or replace function artists(the_track tracks) returns setof artists language sql stable as $$
  select a.* from artists a join (
    select catalog_link_uuid(c.el->'id') as id, min(v.k * 1000000 + c.n) as o
    from (values (1, the_track.primary_artists), (2, the_track.featuring_artists), (3, the_track.remix_artists), (4, the_track.writer_artists), (5, the_track.performer_artists), (6, the_track.engineer_artists)) as v(k, arr),
      jsonb_array_elements(catalog_link_array(v.arr)) with ordinality as c(el, n)
    group by 1
  ) as x on a.id = x.id
  order by x.o
$$;
create index if not exists releases_tracks_links_idx on releases using gin (tracks jsonb_path_ops) with (fastupdate = off);
create index if not exists tracks_credit_ids_idx on tracks using gin ((coalesce(jsonb_path_query_array(primary_artists, '$[*].id'), '[]'::jsonb) || coalesce(jsonb_path_query_array(featuring_artists, '$[*].id'), '[]'::jsonb) || coalesce(jsonb_path_query_array(remix_artists, '$[*].id'), '[]'::jsonb) || coalesce(jsonb_path_query_array(writer_artists, '$[*].id'), '[]'::jsonb) || coalesce(jsonb_path_query_array(performer_artists, '$[*].id'), '[]'::jsonb) || coalesce(jsonb_path_query_array(engineer_artists, '$[*].id'), '[]'::jsonb)) jsonb_path_ops) with (fastupdate = off);
comment on column releases.tracks is 'Link to tracks: [{"id": track id, "position": n, "disc": n?}], kept in disc and position order, embed with tracks(...). Keys accepted on write: track ids or ISRCs, as an array or one string separated by semicolons.';
comment on column tracks.primary_artists is 'Credits: [{"id": artist id?, "name": text, "role"?: text, "share"?: 0-100}], with an id the name is the artist''s stage name, kept current, embed with artists(...). Keys accepted on write: artist ids or stage names.';
comment on column tracks.featuring_artists is 'Credits: [{"id": artist id?, "name": text, "role"?: text, "share"?: 0-100}], with an id the name is the artist''s stage name, kept current, embed with artists(...). Keys accepted on write: artist ids or stage names.';
comment on column tracks.remix_artists is 'Credits: [{"id": artist id?, "name": text, "role"?: text, "share"?: 0-100}], with an id the name is the artist''s stage name, kept current, embed with artists(...). Keys accepted on write: artist ids or stage names.';
comment on column tracks.writer_artists is 'Credits: [{"id": artist id?, "name": text, "role"?: text, "share"?: 0-100}], with an id the name is the artist''s stage name, kept current, embed with artists(...). Keys accepted on write: artist ids or stage names.';
comment on column tracks.performer_artists is 'Credits: [{"id": artist id?, "name": text, "role"?: text, "share"?: 0-100}], with an id the name is the artist''s stage name, kept current, embed with artists(...). Keys accepted on write: artist ids or stage names.';
comment on column tracks.engineer_artists is 'Credits: [{"id": artist id?, "name": text, "role"?: text, "share"?: 0-100}], with an id the name is the artist''s stage name, kept current, embed with artists(...). Keys accepted on write: artist ids or stage names.';
comment on column artists.tracks is 'Not a link: an artist''s tracks are derived from the tracks'' credits, embed with tracks(...).';

drop function if exists catalog_credit_ids(jsonb, jsonb, jsonb, jsonb, jsonb, jsonb);
