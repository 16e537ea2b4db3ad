
create table if not exists removals (
  id bigint generated always as identity primary key,
  collection text not null,
  record_id uuid not null,
  title text,
  removed timestamp with time zone not null default now()
);
create index if not exists removals_removed_idx on removals (removed);
comment on table removals is 'What was removed from the catalog: one row per record, written by a trigger on each collection. Read-only.';

create or replace function catalog_record_removals_countries() returns trigger language plpgsql as $$
begin
  insert into removals (collection, record_id, title) select 'countries', id, name from removed_rows;
  return null;
end $$;
drop trigger if exists countries_record_removals on countries;
create trigger countries_record_removals after delete on countries
  referencing old table as removed_rows for each statement execute function catalog_record_removals_countries();

create or replace function catalog_record_removals_languages() returns trigger language plpgsql as $$
begin
  insert into removals (collection, record_id, title) select 'languages', id, name from removed_rows;
  return null;
end $$;
drop trigger if exists languages_record_removals on languages;
create trigger languages_record_removals after delete on languages
  referencing old table as removed_rows for each statement execute function catalog_record_removals_languages();

create or replace function catalog_record_removals_genres() returns trigger language plpgsql as $$
begin
  insert into removals (collection, record_id, title) select 'genres', id, name from removed_rows;
  return null;
end $$;
drop trigger if exists genres_record_removals on genres;
create trigger genres_record_removals after delete on genres
  referencing old table as removed_rows for each statement execute function catalog_record_removals_genres();

create or replace function catalog_record_removals_subgenres() returns trigger language plpgsql as $$
begin
  insert into removals (collection, record_id, title) select 'subgenres', id, name from removed_rows;
  return null;
end $$;
drop trigger if exists subgenres_record_removals on subgenres;
create trigger subgenres_record_removals after delete on subgenres
  referencing old table as removed_rows for each statement execute function catalog_record_removals_subgenres();

create or replace function catalog_record_removals_labels() returns trigger language plpgsql as $$
begin
  insert into removals (collection, record_id, title) select 'labels', id, name from removed_rows;
  return null;
end $$;
drop trigger if exists labels_record_removals on labels;
create trigger labels_record_removals after delete on labels
  referencing old table as removed_rows for each statement execute function catalog_record_removals_labels();

create or replace function catalog_record_removals_artists() returns trigger language plpgsql as $$
begin
  insert into removals (collection, record_id, title) select 'artists', id, stage_name from removed_rows;
  return null;
end $$;
drop trigger if exists artists_record_removals on artists;
create trigger artists_record_removals after delete on artists
  referencing old table as removed_rows for each statement execute function catalog_record_removals_artists();

create or replace function catalog_record_removals_releases() returns trigger language plpgsql as $$
begin
  insert into removals (collection, record_id, title) select 'releases', id, release_title from removed_rows;
  return null;
end $$;
drop trigger if exists releases_record_removals on releases;
create trigger releases_record_removals after delete on releases
  referencing old table as removed_rows for each statement execute function catalog_record_removals_releases();

create or replace function catalog_record_removals_tracks() returns trigger language plpgsql as $$
begin
  insert into removals (collection, record_id, title) select 'tracks', id, track_title from removed_rows;
  return null;
end $$;
drop trigger if exists tracks_record_removals on tracks;
create trigger tracks_record_removals after delete on tracks
  referencing old table as removed_rows for each statement execute function catalog_record_removals_tracks();
