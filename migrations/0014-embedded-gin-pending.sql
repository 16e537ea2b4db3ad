-- The embedded store (PGlite) only: its two link indexes take new entries into a pending list (up
-- to 16 MB) and merge them into the index in bulk, instead of one posting-tree insert per credited
-- id: a bulk load of tracks with credits spent about a fifth of PGlite's COPY in that index. PGlite
-- has no autovacuum, so the store itself empties the lists once writes pause (src/store/pglite.ts,
-- gin_clean_pending_list beside its ANALYZE): lookups after a load read no pending list. A
-- PostgreSQL server keeps fastupdate off (migration 5): its autovacuum empties lists late.
do $$
begin
  if version() like '%emscripten%' then
    alter index tracks_credit_ids_idx set (fastupdate = on, gin_pending_list_limit = 16384);
    alter index releases_tracks_links_idx set (fastupdate = on, gin_pending_list_limit = 16384);
  end if;
end $$;
