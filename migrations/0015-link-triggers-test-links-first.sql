drop trigger if exists tracks_links on tracks;
create trigger tracks_links before insert or update on tracks for each row
  when ((new.primary_artists is not null or new.featuring_artists is not null or new.remix_artists is not null or new.writer_artists is not null or new.performer_artists is not null or new.engineer_artists is not null) and coalesce(current_setting('catalog.checked_batch', true), '') = '')
  execute function catalog_tracks_links();
drop trigger if exists tracks_link_ids on tracks;
create trigger tracks_link_ids after insert on tracks for each row
  when ((new.primary_artists is not null or new.featuring_artists is not null or new.remix_artists is not null or new.writer_artists is not null or new.performer_artists is not null or new.engineer_artists is not null) and coalesce(current_setting('catalog.checked_batch', true), '') = '')
  execute function catalog_tracks_link_ids();
drop trigger if exists releases_links on releases;
create trigger releases_links before insert or update on releases for each row
  when (new.tracks is not null and coalesce(current_setting('catalog.checked_batch', true), '') = '')
  execute function catalog_releases_links();
