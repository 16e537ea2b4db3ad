
create index if not exists tracks_isrc_code_idx on tracks (isrc_code);
create index if not exists releases_upc_code_idx on releases (upc_code);
create index if not exists releases_release_date_idx on releases (release_date);
create index if not exists tracks_created_idx on tracks (created);
