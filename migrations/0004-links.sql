
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
create or replace function catalog_credit_ids(primary_artists jsonb, featuring_artists jsonb, remix_artists jsonb, writer_artists jsonb, performer_artists jsonb, engineer_artists jsonb) returns uuid[]
language sql immutable parallel safe as $$
  select coalesce(array_agg(distinct (e->>'id')::uuid) filter (where e->>'id' ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'), '{}')
  from (values (primary_artists), (featuring_artists), (remix_artists), (writer_artists), (performer_artists), (engineer_artists)) as v(arr),
    jsonb_array_elements(case when jsonb_typeof(v.arr) = 'array' then v.arr else '[]'::jsonb end) as e
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

create or replace function catalog_legacy_release_tracks(links jsonb) returns jsonb language plpgsql immutable as $$
declare el jsonb; n integer := 0; out jsonb := '[]'; id jsonb; pos jsonb; disc jsonb;
begin
  if jsonb_typeof(links) <> 'array' then return null; end if;
  for el in select value from jsonb_array_elements(links) loop
    n := n + 1;
    if jsonb_typeof(el) = 'string' then el := jsonb_build_object('id', el); end if;
    if jsonb_typeof(el) <> 'object' or exists (select 1 from jsonb_object_keys(el) k
      where k not in ('id', 'track_id', 'position', 'track_number', 'number', 'disc', 'disc_number')) then return null; end if;
    id := coalesce(el->'id', el->'track_id');
    pos := coalesce(el->'position', el->'track_number', el->'number', to_jsonb(n));
    disc := coalesce(el->'disc', el->'disc_number');
    if jsonb_typeof(pos) = 'string' and pos #>> '{}' ~ '^[0-9]+$' then pos := to_jsonb((pos #>> '{}')::integer); end if;
    if jsonb_typeof(disc) = 'string' and disc #>> '{}' ~ '^[0-9]+$' then disc := to_jsonb((disc #>> '{}')::integer); end if;
    if catalog_link_uuid(id) is null or catalog_link_count(pos) is null then return null; end if;
    out := out || jsonb_build_array(jsonb_strip_nulls(jsonb_build_object('id', catalog_link_uuid(id), 'position', pos, 'disc', disc)));
  end loop;
  return out;
end $$;
create or replace function catalog_legacy_credits(links jsonb) returns jsonb language plpgsql immutable as $$
declare el jsonb; out jsonb := '[]';
begin
  if jsonb_typeof(links) = 'object' or jsonb_typeof(links) = 'string' then links := jsonb_build_array(links); end if;
  if jsonb_typeof(links) <> 'array' then return null; end if;
  for el in select value from jsonb_array_elements(links) loop
    if jsonb_typeof(el) = 'string' then el := jsonb_build_object('name', el); end if;
    if jsonb_typeof(el) <> 'object' or exists (select 1 from jsonb_object_keys(el) k
      where k not in ('id', 'artist_id', 'name', 'artist', 'artist_name', 'role', 'share')) then return null; end if;
    el := jsonb_strip_nulls(jsonb_build_object('id', coalesce(el->'id', el->'artist_id'), 'name', coalesce(el->'name', el->'artist', el->'artist_name'),
      'role', el->'role', 'share', el->'share'));
    if el ? 'id' and catalog_link_uuid(el->'id') is null then return null; end if;
    if el ? 'id' then el := el || jsonb_build_object('id', catalog_link_uuid(el->'id')); end if;
    out := out || jsonb_build_array(el);
  end loop;
  return out;
end $$;
update releases set tracks = catalog_legacy_release_tracks(tracks)
  where tracks is not null and catalog_legacy_release_tracks(tracks) is not null and catalog_legacy_release_tracks(tracks) <> tracks;
update tracks set primary_artists = catalog_legacy_credits(primary_artists)
  where primary_artists is not null and catalog_legacy_credits(primary_artists) is not null and catalog_legacy_credits(primary_artists) <> primary_artists;
update tracks set featuring_artists = catalog_legacy_credits(featuring_artists)
  where featuring_artists is not null and catalog_legacy_credits(featuring_artists) is not null and catalog_legacy_credits(featuring_artists) <> featuring_artists;
update tracks set remix_artists = catalog_legacy_credits(remix_artists)
  where remix_artists is not null and catalog_legacy_credits(remix_artists) is not null and catalog_legacy_credits(remix_artists) <> remix_artists;
update tracks set writer_artists = catalog_legacy_credits(writer_artists)
  where writer_artists is not null and catalog_legacy_credits(writer_artists) is not null and catalog_legacy_credits(writer_artists) <> writer_artists;
update tracks set performer_artists = catalog_legacy_credits(performer_artists)
  where performer_artists is not null and catalog_legacy_credits(performer_artists) is not null and catalog_legacy_credits(performer_artists) <> performer_artists;
update tracks set engineer_artists = catalog_legacy_credits(engineer_artists)
  where engineer_artists is not null and catalog_legacy_credits(engineer_artists) is not null and catalog_legacy_credits(engineer_artists) <> engineer_artists;
drop function catalog_legacy_release_tracks(jsonb);
drop function catalog_legacy_credits(jsonb);

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

create or replace function catalog_releases_links() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' or new.tracks is distinct from old.tracks then new.tracks := catalog_release_tracks(new.tracks); end if;
  return new;
end $$;
drop trigger if exists releases_links on releases;
create trigger releases_links before insert or update on releases for each row execute function catalog_releases_links();
create or replace function catalog_tracks_links() returns trigger language plpgsql as $$
begin
  if pg_trigger_depth() > 1 then return new; end if;
  if new.primary_artists is not null and (tg_op = 'INSERT' or new.primary_artists is distinct from old.primary_artists) then new.primary_artists := catalog_credits('primary_artists', new.primary_artists); end if;
  if new.featuring_artists is not null and (tg_op = 'INSERT' or new.featuring_artists is distinct from old.featuring_artists) then new.featuring_artists := catalog_credits('featuring_artists', new.featuring_artists); end if;
  if new.remix_artists is not null and (tg_op = 'INSERT' or new.remix_artists is distinct from old.remix_artists) then new.remix_artists := catalog_credits('remix_artists', new.remix_artists); end if;
  if new.writer_artists is not null and (tg_op = 'INSERT' or new.writer_artists is distinct from old.writer_artists) then new.writer_artists := catalog_credits('writer_artists', new.writer_artists); end if;
  if new.performer_artists is not null and (tg_op = 'INSERT' or new.performer_artists is distinct from old.performer_artists) then new.performer_artists := catalog_credits('performer_artists', new.performer_artists); end if;
  if new.engineer_artists is not null and (tg_op = 'INSERT' or new.engineer_artists is distinct from old.engineer_artists) then new.engineer_artists := catalog_credits('engineer_artists', new.engineer_artists); end if;
  return new;
end $$;
drop trigger if exists tracks_links on tracks;
create trigger tracks_links before insert or update on tracks for each row execute function catalog_tracks_links();
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
  where catalog_credit_ids(primary_artists, featuring_artists, remix_artists, writer_artists, performer_artists, engineer_artists) @> array[new.id];
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
  select t.* from tracks t where catalog_credit_ids(t.primary_artists, t.featuring_artists, t.remix_artists, t.writer_artists, t.performer_artists, t.engineer_artists) @> array[the_artist.id]
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
create index if not exists releases_tracks_links_idx on releases using gin (tracks jsonb_path_ops);
create index if not exists tracks_credit_ids_idx on tracks using gin (catalog_credit_ids(primary_artists, featuring_artists, remix_artists, writer_artists, performer_artists, engineer_artists));
