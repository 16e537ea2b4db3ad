/**
 * Migration 9 (issue 37): removals are recorded, so `catalog changes` can say what left the
 * catalog, not only what was added or changed (rows that are gone cannot be read back).
 *
 * - `removals`: one row per record removed from one of the eight collections: its collection,
 *   its id, its title when it went (name, stage_name, release_title, track_title) and when.
 *   A table of the exposed schema, so a PostgREST over this schema serves it as it stands
 *   (`GET /removals?removed=gte.…`); `catalog serve` serves it read-only (src/schema/catalog.ts
 *   REMOVALS). Kept until someone deletes from it: nothing prunes it.
 * - an AFTER DELETE trigger per collection, at statement level with the deleted rows as a
 *   transition table: one `insert … select` per DELETE statement, whatever its row count (a sync
 *   that removes 100k tracks writes its tombstones in one statement, not 100k trigger calls).
 *   Every writer is covered: the service, psql, another PostgREST. TRUNCATE is not recorded.
 *
 * Frozen once released, like every migration: the titles below are spelled out, not derived.
 */

/** Each collection's title field as it was when this migration was written. */
const TITLES: ReadonlyArray<[table: string, title: string]> = [
  ['countries', 'name'],
  ['languages', 'name'],
  ['genres', 'name'],
  ['subgenres', 'name'],
  ['labels', 'name'],
  ['artists', 'stage_name'],
  ['releases', 'release_title'],
  ['tracks', 'track_title'],
];

/** The table's comment (PostgREST shows it as the path's summary). */
export const REMOVALS_COMMENT = 'What was removed from the catalog: one row per record, written by a trigger on each collection. Read-only.';

const trigger = ([table, title]: [string, string]) => `
create or replace function catalog_record_removals_${table}() returns trigger language plpgsql as $$
begin
  insert into removals (collection, record_id, title) select '${table}', id, ${title} from removed_rows;
  return null;
end $$;
drop trigger if exists ${table}_record_removals on ${table};
create trigger ${table}_record_removals after delete on ${table}
  referencing old table as removed_rows for each statement execute function catalog_record_removals_${table}();
`;

export const REMOVALS_MIGRATION_SQL = `
create table if not exists removals (
  id bigint generated always as identity primary key,
  collection text not null,
  record_id uuid not null,
  title text,
  removed timestamp with time zone not null default now()
);
create index if not exists removals_removed_idx on removals (removed);
comment on table removals is '${REMOVALS_COMMENT}';
${TITLES.map(trigger).join('')}`;
