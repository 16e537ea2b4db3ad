import { migrationSql } from './migration-sql.js';

/** One versioned migration. Versions only grow; a released migration is never edited. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/**
 * A released migration: its SQL is the file migrations/<version as 4 digits>-<slug>.sql,
 * read the first time a store applies it (a command whose catalog is up to date reads none).
 */
function released(version: number, slug: string, name: string): Migration {
  const file = `${String(version).padStart(4, '0')}-${slug}.sql`;
  let sql: string | undefined;
  return {
    version,
    name,
    get sql() {
      return (sql ??= migrationSql(file));
    },
  };
}

/**
 * The migrations, oldest first. Each one's SQL is frozen as text: a catalog that applied a version
 * keeps what it did, so a released file is never edited, and nothing in the code can change it
 * (test/schema/migrations-frozen.test.ts pins each one's SHA-256). A change to the schema is a new
 * migration: write migrations/0016-<slug>.sql and add its line below (and its digest
 * to that test). migrations/README.md says what each one did and why.
 */
export const MIGRATIONS: readonly Migration[] = [
  released(1, 'catalog-tables', 'catalog tables, updated triggers, foreign-key indexes'),
  released(2, 'lookup-indexes', 'indexes for typical A&R lookups'),
  released(3, 'name-collation', 'names and titles sort as people read them (ICU root collation)'),
  released(4, 'links', 'link fields: one shape each, checked on write; computed relationships releases/tracks/artists; their indexes'),
  released(5, 'link-checks', 'link fields: cheap checks on bulk inserts, a credits index of built-in functions without a pending list, column comments'),
  released(6, 'source-ids', 'source ids (a side table, the computed field source_ids) and natural-key indexes for matching at write time'),
  released(7, 'touch-keeps-written', 'an update that writes updated itself keeps it (an import of an export restores its timestamps, so its next run changes nothing)'),
  released(8, 'checked-batches', "link checks only for rows with links; the service's set-based checked batches skip them (a key only the owner reads)"),
  released(9, 'removals', 'removals recorded: a removals table, filled by an after-delete trigger on each collection'),
  released(10, 'name-hints', "an unknown artist name's did-you-mean found by index (a prefix index on the name key), not by a scan of the artists"),
  released(11, 'unchanged-runs', 'a write count (a statement trigger on each collection) and the imports that left the catalog as their file says: an unchanged re-run sends nothing'),
  released(12, 'run-probes', "an import run is also found by its probe (settings, size, the file's first and last 64 KiB): a first import asks before hashing the whole file"),
  released(13, 'credit-index-partial', 'tracks without credits and releases without tracks are left out of the link indexes (a row without links pays nothing for them)'),
  released(14, 'embedded-gin-pending', 'the embedded store only: the link indexes take bulk loads through a pending list, which the store empties once writes pause'),
  released(15, 'link-triggers-test-links-first', "the link triggers' condition asks whether a row has links before it reads the checked-batch setting (a row without links no longer pays for current_setting)"),
];

/** The newest schema version the code knows. */
export const LATEST_VERSION = MIGRATIONS[MIGRATIONS.length - 1].version;
