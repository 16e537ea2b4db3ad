
create index if not exists artists_name_prefix_idx on artists (left(catalog_name_key(stage_name), 3));
create or replace function catalog_artist_by_key(k text, path text) returns uuid language plpgsql stable as $$
declare ids uuid[]; key text := catalog_name_key(k); near text;
begin
  if k ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' then return k::uuid; end if;
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
