import { TABLES, type ColumnDef, type TableDef } from './catalog.js';
import { LINKS_MIGRATION_SQL } from './migrations-links.js';
import { LINKS_V4_SQL } from './migrations-links-v4.js';
import { SOURCE_IDS_MIGRATION_SQL } from './migrations-source-ids.js';
import { CHECKED_BATCH_MIGRATION_SQL } from './migrations-checked.js';
import { REMOVALS_MIGRATION_SQL } from './migrations-removals.js';
import { NAME_HINTS_MIGRATION_SQL } from './migrations-hints.js';

/** One versioned migration. Versions only grow; a released migration is never edited. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

function columnSql(c: ColumnDef): string {
  let s = `${c.name} ${c.type}`;
  if (c.primaryKey) s += ' primary key';
  if (!c.nullable && !c.primaryKey) s += ' not null';
  if (c.default !== undefined) s += ` default ${c.default}`;
  if (c.foreignKey) s += ` constraint ${c.foreignKey.constraint} references ${c.foreignKey.table}(${c.foreignKey.column})`;
  return s;
}

function createTable(t: TableDef): string {
  return `create table if not exists ${t.name} (\n  ${t.columns.map(columnSql).join(',\n  ')}\n);\n`;
}

function touchTrigger(t: TableDef): string {
  return `drop trigger if exists ${t.name}_touch_updated on ${t.name};
create trigger ${t.name}_touch_updated before update on ${t.name}
  for each row execute function catalog_touch_updated();\n`;
}

/**
 * The initial schema. Written out from the typed description once; from here on, changes are new
 * migrations (ALTER ...), so an existing data directory upgrades in place.
 */
const INITIAL = `
create or replace function catalog_touch_updated() returns trigger language plpgsql as $$
begin
  new.updated := now();
  return new;
end $$;
${TABLES.map((t) => createTable(t) + touchTrigger(t)).join('\n')}
create index if not exists releases_label_id_idx on releases (label_id);
create index if not exists releases_genre_id_idx on releases (genre_id);
create index if not exists releases_subgenre_id_idx on releases (subgenre_id);
`;

/**
 * The collation people-facing names and titles sort with: ICU's root order ("und"), present as
 * `und-x-icu` on PostgreSQL built with ICU (Debian's 15 is) and in PGlite 0.5. Deterministic, so
 * equality, `like` and `ilike` give the same rows as under C; only the order changes
 * ("Éditions" sorts with E, "Ätna" with A, case does not split the list).
 */
export const NAME_COLLATION = 'und-x-icu';

/**
 * The columns people sort and read by name: names, titles and the text copies of them. Identifiers
 * and codes (ids, ISRC, UPC, catalog numbers, slugs) keep byte order.
 */
export const NAME_COLUMNS: Readonly<Record<string, readonly string[]>> = {
  countries: ['name'],
  languages: ['name'],
  genres: ['name'],
  subgenres: ['name', 'genre'],
  labels: ['name'],
  artists: ['stage_name', 'legal_name', 'city', 'country'],
  releases: ['release_title', 'release_version', 'label', 'genre', 'subgenre', 'language'],
  tracks: ['track_title', 'mix_version', 'genre', 'subgenre'],
};

/**
 * Migration 3's SQL. Changing a text column's collation is binary coercible: PostgreSQL rewrites no
 * table, only the indexes on those columns (none of the big tables has one), so it is quick on a
 * catalog of any size. Re-running it is a no-op.
 */
function nameCollationSql(): string {
  return Object.entries(NAME_COLUMNS)
    .map(([table, cols]) => `alter table ${table} ${cols.map((c) => `alter column ${c} type text collate "${NAME_COLLATION}"`).join(', ')};`)
    .join('\n');
}

/**
 * Migration 7: `updated` is set to now() by an update that leaves it as it was, and kept when the
 * update writes another value. Before, every update overwrote it: a re-import of an export (which
 * carries each row's `updated`) of a row changed since could never match the file again, so every
 * later run "updated" it once more (a re-seed after `catalog check --fix`: 55 rows, every time).
 */
const TOUCH_KEEPS_WRITTEN_SQL = `
create or replace function catalog_touch_updated() returns trigger language plpgsql as $$
begin
  if new.updated is not distinct from old.updated then
    new.updated := now();
  end if;
  return new;
end $$;
`;

export const MIGRATIONS: readonly Migration[] = [
  { version: 1, name: 'catalog tables, updated triggers, foreign-key indexes', sql: INITIAL },
  {
    version: 2,
    name: 'indexes for typical A&R lookups',
    sql: `
create index if not exists tracks_isrc_code_idx on tracks (isrc_code);
create index if not exists releases_upc_code_idx on releases (upc_code);
create index if not exists releases_release_date_idx on releases (release_date);
create index if not exists tracks_created_idx on tracks (created);
`,
  },
  {
    version: 3,
    name: 'names and titles sort as people read them (ICU root collation)',
    sql: nameCollationSql(),
  },
  {
    version: 4,
    name: 'link fields: one shape each, checked on write; computed relationships releases/tracks/artists; their indexes',
    sql: LINKS_V4_SQL,
  },
  {
    version: 5,
    name: 'link fields: cheap checks on bulk inserts, a credits index of built-in functions without a pending list, column comments',
    sql: LINKS_MIGRATION_SQL,
  },
  {
    version: 6,
    name: 'source ids (a side table, the computed field source_ids) and natural-key indexes for matching at write time',
    sql: SOURCE_IDS_MIGRATION_SQL,
  },
  {
    version: 7,
    name: 'an update that writes updated itself keeps it (an import of an export restores its timestamps, so its next run changes nothing)',
    sql: TOUCH_KEEPS_WRITTEN_SQL,
  },
  {
    version: 8,
    name: 'link checks only for rows with links; the service\'s set-based checked batches skip them (a key only the owner reads)',
    sql: CHECKED_BATCH_MIGRATION_SQL,
  },
  { version: 9, name: 'removals recorded: a removals table, filled by an after-delete trigger on each collection', sql: REMOVALS_MIGRATION_SQL },
  { version: 10, name: "an unknown artist name's did-you-mean found by index (a prefix index on the name key), not by a scan of the artists", sql: NAME_HINTS_MIGRATION_SQL },
];

/** The newest schema version the code knows. */
export const LATEST_VERSION = MIGRATIONS[MIGRATIONS.length - 1].version;
