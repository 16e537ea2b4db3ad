import { UUID_RE } from './migrations-links.js';

/**
 * Migration 10 (issue 35): the did-you-mean of an unknown artist name found by index. Migration
 * 5's `catalog_artist_by_key` looked for names sharing the first three characters of the key by
 * computing every artist's name key twice (a scan of the artists): with 50k artists each refusal
 * cost ~0.5 s, so an import of 2,000 tracks crediting names nobody has, bisecting its first
 * refusals, took 30-40 s where the accepted file took 1.3 s. The same names are now found through
 * an index on the first three characters of the name key, and names shorter than that through the
 * name-key index; a key shorter than three characters still scans. Ties in length come in name
 * order (they came in whatever order the scan met them).
 *
 * Frozen once released, like every migration: the function is spelled out here, not shared with
 * migration 5, whose text stays as it was applied.
 */
export const NAME_HINTS_MIGRATION_SQL = `
create index if not exists artists_name_prefix_idx on artists (left(catalog_name_key(stage_name), 3));
create or replace function catalog_artist_by_key(k text, path text) returns uuid language plpgsql stable as $$
declare ids uuid[]; key text := catalog_name_key(k); near text;
begin
  if k ~* '${UUID_RE}' then return k::uuid; end if;
  select array_agg(a.id order by a.id) into ids from artists a where catalog_name_key(a.stage_name) = key;
  if ids is null then
    if length(key) >= 3 then
      select string_agg('"' || stage_name || '"', ', ') into near from (select a.stage_name from artists a
        where left(catalog_name_key(a.stage_name), 3) = left(key, 3) or catalog_name_key(a.stage_name) = any (array[left(key, 1), left(key, 2), ''])
        order by length(a.stage_name), a.stage_name limit 3) as c;
    else
      select string_agg('"' || stage_name || '"', ', ') into near from (select a.stage_name from artists a
        where catalog_name_key(a.stage_name) like key || '%' or key like left(catalog_name_key(a.stage_name), 3) || '%'
        order by length(a.stage_name), a.stage_name limit 3) as c;
    end if;
    if near is null then perform catalog_link_raise('23503', path, format('no artist is named "%s"', k), null, to_jsonb(k));
    else perform catalog_link_raise('23503', path, format('no artist is named "%s"', k), 'did you mean ' || near || '?', to_jsonb(k));
    end if;
  end if;
  if cardinality(ids) > 1 then
    perform catalog_link_raise('23514', path, format('%s artists are named "%s" (%s): give the artist id', cardinality(ids), k, array_to_string(ids, ', ')), null, to_jsonb(k));
  end if;
  return ids[1];
end $$;
`;
