
create or replace function catalog_touch_updated() returns trigger language plpgsql as $$
begin
  new.updated := now();
  return new;
end $$;
create table if not exists countries (
  id uuid primary key default gen_random_uuid(),
  name text default ''::text,
  created timestamp with time zone not null default now(),
  updated timestamp with time zone not null default now()
);
drop trigger if exists countries_touch_updated on countries;
create trigger countries_touch_updated before update on countries
  for each row execute function catalog_touch_updated();

create table if not exists languages (
  id uuid primary key default gen_random_uuid(),
  name text default ''::text,
  created timestamp with time zone not null default now(),
  updated timestamp with time zone not null default now()
);
drop trigger if exists languages_touch_updated on languages;
create trigger languages_touch_updated before update on languages
  for each row execute function catalog_touch_updated();

create table if not exists genres (
  id uuid primary key default gen_random_uuid(),
  name text default ''::text,
  created timestamp with time zone not null default now(),
  updated timestamp with time zone not null default now()
);
drop trigger if exists genres_touch_updated on genres;
create trigger genres_touch_updated before update on genres
  for each row execute function catalog_touch_updated();

create table if not exists subgenres (
  id uuid primary key default gen_random_uuid(),
  name text default ''::text,
  created timestamp with time zone not null default now(),
  updated timestamp with time zone not null default now(),
  genre text default ''::text
);
drop trigger if exists subgenres_touch_updated on subgenres;
create trigger subgenres_touch_updated before update on subgenres
  for each row execute function catalog_touch_updated();

create table if not exists labels (
  id uuid primary key default gen_random_uuid(),
  name text default ''::text,
  created timestamp with time zone not null default now(),
  updated timestamp with time zone not null default now()
);
drop trigger if exists labels_touch_updated on labels;
create trigger labels_touch_updated before update on labels
  for each row execute function catalog_touch_updated();

create table if not exists artists (
  id uuid primary key default gen_random_uuid(),
  created timestamp with time zone not null default now(),
  updated timestamp with time zone not null default now(),
  stage_name text default ''::text,
  biography text default ''::text,
  city text default ''::text,
  country text default ''::text,
  address text default ''::text,
  birthdate date,
  email text default ''::text,
  phone text default ''::text,
  website text default ''::text,
  apple_music text default ''::text,
  bandcamp text default ''::text,
  bandsintown text default ''::text,
  facebook text default ''::text,
  instagram text default ''::text,
  linkedin text default ''::text,
  mixcloud text default ''::text,
  snapchat text default ''::text,
  songkick text default ''::text,
  soundcloud text default ''::text,
  spotify text default ''::text,
  tiktok text default ''::text,
  twitch text default ''::text,
  x text default ''::text,
  youtube text default ''::text,
  anr text default ''::text,
  is_signed boolean default false,
  org_id text default ''::text,
  soundcharts_id text default ''::text,
  artist_photos jsonb,
  metadata jsonb,
  streaming jsonb,
  followers jsonb,
  tracks jsonb,
  services jsonb,
  legal_name text default ''::text
);
drop trigger if exists artists_touch_updated on artists;
create trigger artists_touch_updated before update on artists
  for each row execute function catalog_touch_updated();

create table if not exists releases (
  id uuid primary key default gen_random_uuid(),
  created timestamp with time zone not null default now(),
  updated timestamp with time zone not null default now(),
  catalog_number text default ''::text,
  genre text default ''::text,
  subgenre text default ''::text,
  label text default ''::text,
  release_title text default ''::text,
  release_version text default ''::text,
  upc_code text default ''::text,
  language text default ''::text,
  slug text default ''::text,
  description text default ''::text,
  bandcamp text default ''::text,
  vinyl text default ''::text,
  org_id text default ''::text,
  is_compilation boolean default false,
  release_date date,
  label_id uuid constraint releases_label_id_fkey references labels(id),
  genre_id uuid constraint releases_genre_id_fkey references genres(id),
  subgenre_id uuid constraint releases_subgenre_id_fkey references subgenres(id),
  contracts jsonb,
  media_assets jsonb,
  tracks jsonb,
  cover_artwork jsonb
);
drop trigger if exists releases_touch_updated on releases;
create trigger releases_touch_updated before update on releases
  for each row execute function catalog_touch_updated();

create table if not exists tracks (
  id uuid primary key default gen_random_uuid(),
  created timestamp with time zone not null default now(),
  updated timestamp with time zone not null default now(),
  audio_file text default ''::text,
  explicit_status text default ''::text,
  genre text default ''::text,
  subgenre text default ''::text,
  mix_version text default ''::text,
  recording_location text default ''::text,
  track_title text default ''::text,
  recording_year text default ''::text,
  isrc_code text default ''::text,
  lyrics text default ''::text,
  lyrics_text text default ''::text,
  demo_files jsonb,
  primary_artists jsonb,
  featuring_artists jsonb,
  remix_artists jsonb,
  writer_artists jsonb,
  performer_artists jsonb,
  engineer_artists jsonb
);
drop trigger if exists tracks_touch_updated on tracks;
create trigger tracks_touch_updated before update on tracks
  for each row execute function catalog_touch_updated();

create index if not exists releases_label_id_idx on releases (label_id);
create index if not exists releases_genre_id_idx on releases (genre_id);
create index if not exists releases_subgenre_id_idx on releases (subgenre_id);
