import { CREDIT_FIELDS, LINK_COMMENTS, LINK_KEYS } from './links.js';

/**
 * Migration 5 (over migration 4, frozen in migrations-links-v4.ts): the link fields (`releases.tracks`, the six `tracks.*_artists`) get one shape each,
 * checked on write by triggers, and become navigable as PostgREST computed relationships.
 *
 * Everything lives in the database so that a real PostgREST over the same schema enforces and
 * answers exactly what `catalog serve` does: the triggers raise 23514 (400) with the path of the
 * bad element, 23503 (409, as for a foreign key) for an id that names nothing; the four functions
 * `tracks(releases)`, `releases(tracks)`, `artists(tracks)` and `tracks(artists)` are what both
 * servers call for `select=…,tracks(…)`. The SQL runs on PostgreSQL 15 and on PGlite's 18.
 *
 * `src/schema/links.ts` holds the same rules in TypeScript (for `catalog check`); the link test
 * feeds both the same bad values and compares the paths they report.
 */

/**
 * Every artist id a track credits, as one jsonb array of strings: the credits index's expression
 * (GIN jsonb_path_ops), and the condition `tracks(artists)` and the rename use, written the same
 * so the planner matches them. Built-in functions only: PostgreSQL 17+ builds and vacuums indexes
 * with search_path = pg_catalog. `alias` qualifies the columns (`t.`).
 */
function creditIds(alias = ''): string {
  return `(${CREDIT_FIELDS.map((f) => `coalesce(jsonb_path_query_array(${alias}${f}, '$[*].id'), '[]'::jsonb)`).join(' || ')})`;
}

export const UUID_RE = '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';

/**
 * Scalar helpers the triggers and the functions share (single expressions: PostgreSQL inlines them).
 */
const HELPERS = `
create or replace function catalog_link_uuid(v jsonb) returns uuid language sql immutable parallel safe as $$
  select case when jsonb_typeof(v) = 'string' and (v #>> '{}') ~* '${UUID_RE}'
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
`;

const TRACKS_HINT = `releases.tracks is an array of {"id": a track id, "position": 1, 2, …, "disc": 1, 2, … (optional)}`;
const CREDITS_HINT = `a credits list is an array of {"id": an artist id (optional), "name": text, "role": text (optional), "share": 0–100 (optional)}`;

/**
 * Keys written in place of link objects (what `catalog import` sends for a `tracks` cell of ISRCs
 * or a credits cell of names): a string of `;`-separated keys becomes an array of strings, and a
 * string element is resolved — a uuid as it is, else an ISRC (exactly, or written without
 * separators in upper case, as \`catalog check\` compares them) or an artist's stage name (case,
 * accents and spacing aside). An unknown key is refused with 23503 and a did-you-mean hint; one
 * that names two rows with 23514.
 */
const KEYS = `
create or replace function catalog_key_list(links jsonb) returns jsonb language sql immutable as $$
  select case when jsonb_typeof(links) = 'string' then coalesce(
    (select jsonb_agg(btrim(k) order by n) from unnest(string_to_array(links #>> '{}', ';')) with ordinality as x(k, n) where btrim(k) <> ''),
    '[]'::jsonb) else links end
$$;
create or replace function catalog_name_key(name text) returns text language sql immutable parallel safe as $$
  select lower(btrim(regexp_replace(regexp_replace(normalize(name, NFKD), '[\\u0300-\\u036f]', '', 'g'), '\\s+', ' ', 'g')))
$$;
create or replace function catalog_track_by_key(k text, path text) returns uuid language plpgsql stable as $$
declare ids uuid[]; ukey text := upper(regexp_replace(k, '[\\s._-]', '', 'g')); near text;
begin
  if k ~* '${UUID_RE}' then return k::uuid; end if;
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
  if k ~* '${UUID_RE}' then return k::uuid; end if;
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
`;

/** `releases.tracks`: checked, ids in canonical form, sorted by disc and position. */
const RELEASE_TRACKS = `
create or replace function catalog_release_tracks(links jsonb) returns jsonb language plpgsql stable as $$
declare
  el jsonb; i integer := -1; k text; tid uuid; pos integer; disc integer; slot text;
  seen jsonb := '{}'; out jsonb := '[]'; hint constant text := '${TRACKS_HINT}';
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
    select min(key) into k from jsonb_object_keys(el) as key where key not in (${LINK_KEYS.tracks.map((x) => `'${x}'`).join(', ')});
    if k is not null then
      perform catalog_link_raise('23514', format('tracks[%s]', i), format('unknown key "%s" (a track link has ${LINK_KEYS.tracks.join(', ')})', k), hint, el);
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
`;

/** A credits list: checked, ids canonical, an artist's name taken from the artist (one name, kept current). */
const CREDITS = `
create or replace function catalog_credits(field text, links jsonb) returns jsonb language plpgsql stable as $$
declare
  el jsonb; i integer := -1; k text; aid uuid; aname text; item jsonb; share numeric;
  out jsonb := '[]'; hint constant text := '${CREDITS_HINT}';
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
    select min(key) into k from jsonb_object_keys(el) as key where key not in (${LINK_KEYS.credits.map((x) => `'${x}'`).join(', ')});
    if k is not null then
      perform catalog_link_raise('23514', format('%s[%s]', field, i), format('unknown key "%s" (a credit has ${LINK_KEYS.credits.join(', ')})', k), hint, el);
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
`;

/**
 * A credits list's elements that need more than a glance (jsonpath, evaluated without a query; lax,
 * so a missing key is an empty sequence rather than an error that would make the test unknown):
 * anything but an object of known keys without nulls, with a text name that is not blank, an id
 * (if any) in canonical form, a text role and a share from 0 to 100. New rows whose lists have
 * none take the quick way: the statement trigger then checks their ids and names all at once.
 */
export const CREDIT_SHAPE_PATH = `lax $[*] ? (@.type() != "object"
  || exists(@.keyvalue() ? (${LINK_KEYS.credits.map((k) => `@.key != "${k}"`).join(' && ')}))
  || exists(@.* ? (@.type() == "null"))
  || !exists(@.name) || @.name.type() != "string" || @.name like_regex "^[ ]*$"
  || (exists(@.id) && (@.id.type() != "string" || !(@.id like_regex "${UUID_RE}")))
  || (exists(@.role) && @.role.type() != "string")
  || (exists(@.share) && (@.share.type() != "number" || @.share < 0 || @.share > 100)))`;

/** Every credit element of a transition table's rows: row_id, field, n (from 1), e. */
function creditElements(rows: string): string {
  return `select r.id as row_id, v.field, x.n, x.e from ${rows} as r
    cross join lateral (values ${CREDIT_FIELDS.map((f) => `('${f}', r.${f})`).join(', ')}) as v(field, arr)
    cross join lateral jsonb_array_elements(case when jsonb_typeof(v.arr) = 'array' then v.arr else '[]'::jsonb end) with ordinality as x(e, n)`;
}

/**
 * The common case in one statement (plpgsql caches its plan): a value already made of objects
 * that fit, naming rows that exist, comes back normalised; anything else (a key to resolve, a
 * problem to report with its path) gives NULL and goes through the element-by-element function.
 * `v` is the value's SQL (a trigger's `new.…`).
 */
export function fastCredits(v: string): string {
  const ok = `case when jsonb_typeof(x.e) = 'object' then (x.e - '{${LINK_KEYS.credits.join(',')}}'::text[]) = '{}'::jsonb
      and coalesce(jsonb_typeof(x.e->'name'), 'null') in ('null', 'string')
      and (case when coalesce(jsonb_typeof(x.e->'id'), 'null') = 'null' then coalesce(btrim(x.e->>'name'), '') <> '' else a.id is not null end)
      and coalesce(jsonb_typeof(x.e->'role'), 'null') in ('null', 'string')
      and (case coalesce(jsonb_typeof(x.e->'share'), 'null') when 'null' then true when 'number' then (x.e->'share')::numeric between 0 and 100 else false end)
    else false end`;
  const item = `jsonb_strip_nulls(jsonb_build_object('name', case when a.id is not null then coalesce(a.stage_name, '') else x.e->>'name' end,
      'id', a.id, 'role', x.e->'role', 'share', x.e->'share'))`;
  return `select case when jsonb_typeof(${v}) = 'array' then (
    select case when bool_and(y.ok) is not false then coalesce(jsonb_agg(y.item order by y.n), '[]'::jsonb) end
    from (select x.n, ${ok} as ok, ${item} as item
      from jsonb_array_elements(${v}) with ordinality as x(e, n) left join artists a on a.id = catalog_link_uuid(x.e->'id')) as y) end`;
}

/** The common case of `releases.tracks` in one statement (see fastCredits). */
export function fastTracks(v: string): string {
  const ok = `case when jsonb_typeof(x.e) = 'object' then (x.e - '{${LINK_KEYS.tracks.join(',')}}'::text[]) = '{}'::jsonb
      and t.id is not null and catalog_link_count(x.e->'position') is not null
      and (coalesce(jsonb_typeof(x.e->'disc'), 'null') = 'null' or catalog_link_count(x.e->'disc') is not null)
    else false end`;
  return `select case when jsonb_typeof(${v}) = 'array' then (
    select case when bool_and(y.ok) is not false and count(*) = count(distinct (y.d, y.p))
      then coalesce(jsonb_agg(y.item order by y.d, y.p), '[]'::jsonb) end
    from (select ${ok} as ok, coalesce(catalog_link_count(x.e->'disc'), 1) as d, catalog_link_count(x.e->'position') as p,
        jsonb_strip_nulls(jsonb_build_object('id', t.id, 'position', catalog_link_count(x.e->'position'), 'disc', catalog_link_count(x.e->'disc'))) as item
      from jsonb_array_elements(${v}) with ordinality as x(e, n) left join tracks t on t.id = catalog_link_uuid(x.e->'id')) as y) end`;
}

/**
 * The write triggers. A column is checked when it is written with a new value, so a row holding an
 * old value that does not fit can still be edited in its other fields (`catalog check` reports it).
 * The tracks trigger skips the rewrite an artist rename makes (trigger depth > 1): that rewrite only
 * changes names, and must not fail on another element's old shape.
 */
const TRIGGERS = `
create or replace function catalog_releases_links() returns trigger language plpgsql set plan_cache_mode = force_generic_plan as $$
declare v jsonb;
begin
  if new.tracks is not null and (tg_op = 'INSERT' or new.tracks is distinct from old.tracks) then
    ${fastTracks('new.tracks')} into v;
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
${CREDIT_FIELDS.map((f) => `  if new.${f} is not null and tg_op = 'INSERT' then
    if jsonb_typeof(new.${f}) <> 'array' or jsonb_path_exists(new.${f}, '${CREDIT_SHAPE_PATH}') then new.${f} := catalog_credits('${f}', new.${f}); end if;
  elsif new.${f} is not null and new.${f} is distinct from old.${f} then
    ${fastCredits(`new.${f}`)} into v;
    new.${f} := coalesce(v, catalog_credits('${f}', new.${f}));
  end if;`).join('\n')}
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
  select c.field, c.n - 1 as i, c.e->>'id' as id into bad from (${creditElements('new_rows')}) as c
    where c.e ? 'id' and not exists (select 1 from artists a where a.id = catalog_link_uuid(c.e->'id')) limit 1;
  if found then perform catalog_link_raise('23503', format('%s[%s].id', bad.field, bad.i), format('no artist has id %s', bad.id), null, null); end if;
  update tracks t set ${CREDIT_FIELDS.map((f) => `${f} = catalog_credits_named(t.${f})`).join(', ')}
    where t.id in (select c.row_id from (${creditElements('new_rows')}) as c join artists a on a.id = catalog_link_uuid(c.e->'id')
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
  update tracks set ${CREDIT_FIELDS.map((f) => `${f} = catalog_credit_renamed(${f}, new.id, new.stage_name)`).join(', ')}
  where ${creditIds()} @> jsonb_build_array(new.id);
  return null;
end $$;
drop trigger if exists artists_renamed on artists;
create trigger artists_renamed after update on artists for each row execute function catalog_artist_renamed();
`;

/**
 * PostgREST's computed relationships: a function named for the embed, taking the parent's row,
 * returning a set of the embedded table. Plain SQL, stable and not strict, so PostgreSQL inlines
 * them into the caller's query and the indexes below apply. A release's tracks come in disc and
 * position order (the triggers store them sorted; values migration 4 rewrote may not be).
 * The GIN indexes skip the pending list (fastupdate off): after a bulk load, a pending list of a
 * few MB is scanned by every lookup (7.5 ms of a 7.6 ms embed at 100k tracks).
 */
const RELATIONSHIPS = `
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
  select t.* from tracks t where ${creditIds('t.')} @> jsonb_build_array(the_artist.id)
  order by t.track_title, t.id
$$;
create or replace function artists(the_track tracks) returns setof artists language sql stable as $$
  select a.* from artists a join (
    select catalog_link_uuid(c.el->'id') as id, min(v.k * 1000000 + c.n) as o
    from (values ${CREDIT_FIELDS.map((f, i) => `(${i + 1}, the_track.${f})`).join(', ')}) as v(k, arr),
      jsonb_array_elements(catalog_link_array(v.arr)) with ordinality as c(el, n)
    group by 1
  ) as x on a.id = x.id
  order by x.o
$$;
create index if not exists releases_tracks_links_idx on releases using gin (tracks jsonb_path_ops) with (fastupdate = off);
create index if not exists tracks_credit_ids_idx on tracks using gin (${creditIds()} jsonb_path_ops) with (fastupdate = off);
`;


/** Migration 4's SQL, in the order it must run (old values rewritten before the triggers exist). */
/** The link fields' comments: PostgREST shows a column's comment as its description. */
const COMMENTS = Object.entries(LINK_COMMENTS)
  .flatMap(([table, cols]) => Object.entries(cols).map(([col, text]) => `comment on column ${table}.${col} is '${text.replace(/'/g, "''")}';\n`))
  .join('');

/** Migration 4's credits index (a SQL function per row) and its function give way to the expression index. */
const REPLACED = `
drop index if exists tracks_credit_ids_idx;
drop index if exists releases_tracks_links_idx;
`;
const REPLACED_AFTER = `
drop function if exists catalog_credit_ids(${CREDIT_FIELDS.map(() => 'jsonb').join(', ')});
`;

/**
 * Migration 5's SQL: everything is created or replaced (old values were rewritten by migration 4,
 * whose one-off rewrite lives in migrations-links-v4.ts).
 */
export const LINKS_MIGRATION_SQL = REPLACED + HELPERS + KEYS + RELEASE_TRACKS + CREDITS + TRIGGERS + RELATIONSHIPS + COMMENTS + REPLACED_AFTER;
