import { factsFor } from './facts.js';
import { COMPUTED_RELATIONSHIPS } from './links.js';
import type { ColumnDef, SchemaModel, TableDef } from './model.js';

/**
 * The catalog's tables as one typed description. The migrations in `migrations.ts` create
 * exactly these columns; `test/schema/catalog.test.ts` checks the two against a migrated database.
 * Commands, validation, prompts and the OpenAPI document are all derived from this table.
 */

// The table model's types live in model.ts (one model, built from here or from a service's
// root description); re-exported for the modules that only read the compiled catalog.
export type { ColumnDef, ColumnType, ForeignKey, TableDef } from './model.js';

const id = (): ColumnDef => ({ name: 'id', type: 'uuid', nullable: false, default: 'gen_random_uuid()', primaryKey: true });
const ts = (name: 'created' | 'updated'): ColumnDef => ({ name, type: 'timestamp with time zone', nullable: false, default: 'now()' });
const text = (name: string): ColumnDef => ({ name, type: 'text', nullable: true, default: "''::text" });
const bool = (name: string): ColumnDef => ({ name, type: 'boolean', nullable: true, default: 'false' });
const date = (name: string): ColumnDef => ({ name, type: 'date', nullable: true });
const jsonb = (name: string): ColumnDef => ({ name, type: 'jsonb', nullable: true });
const fk = (name: string, table: string, owner: string): ColumnDef => ({
  name,
  type: 'uuid',
  nullable: true,
  foreignKey: { table, column: 'id', constraint: `${owner}_${name}_fkey` },
});

const ARTIST_LINKS = [
  'website', 'apple_music', 'bandcamp', 'bandsintown', 'facebook', 'instagram', 'linkedin', 'mixcloud',
  'snapchat', 'songkick', 'soundcloud', 'spotify', 'tiktok', 'twitch', 'x', 'youtube',
];

const named = (name: string, singular: string, extra: ColumnDef[] = []): TableDef => ({
  name,
  singular,
  primaryKey: ['id'],
  columns: [id(), text('name'), ts('created'), ts('updated'), ...extra],
});

/** A table with its facts beyond the columns (src/schema/facts.ts: title field, natural key, name column, references by name, removed fields). */
const withFacts = (t: TableDef): TableDef => ({ ...t, ...factsFor(t.name, t.columns.map((c) => c.name)) });

/** The eight tables, in foreign-key order (parents before children), each with its facts. */
export const TABLES: readonly TableDef[] = ([
  named('countries', 'country'),
  named('languages', 'language'),
  named('genres', 'genre'),
  named('subgenres', 'subgenre', [text('genre')]),
  named('labels', 'label'),
  {
    name: 'artists',
    singular: 'artist',
    primaryKey: ['id'],
    columns: [
      id(), ts('created'), ts('updated'),
      ...['stage_name', 'biography', 'city', 'country', 'address'].map(text),
      date('birthdate'),
      text('email'), text('phone'),
      ...ARTIST_LINKS.map(text),
      text('anr'),
      bool('is_signed'),
      text('org_id'), text('soundcharts_id'),
      ...['artist_photos', 'metadata', 'streaming', 'followers', 'tracks', 'services'].map(jsonb),
      text('legal_name'),
    ],
  },
  {
    name: 'releases',
    singular: 'release',
    primaryKey: ['id'],
    columns: [
      id(), ts('created'), ts('updated'),
      ...['catalog_number', 'genre', 'subgenre', 'label', 'release_title', 'release_version', 'upc_code', 'language',
        'slug', 'description', 'bandcamp', 'vinyl', 'org_id'].map(text),
      bool('is_compilation'),
      date('release_date'),
      fk('label_id', 'labels', 'releases'),
      fk('genre_id', 'genres', 'releases'),
      fk('subgenre_id', 'subgenres', 'releases'),
      ...['contracts', 'media_assets', 'tracks', 'cover_artwork'].map(jsonb).map((c) => (c.name === 'tracks' ? { ...c, keyList: 'tracks' as const } : c)),
    ],
  },
  {
    name: 'tracks',
    singular: 'track',
    primaryKey: ['id'],
    columns: [
      id(), ts('created'), ts('updated'),
      ...['audio_file', 'explicit_status', 'genre', 'subgenre', 'mix_version', 'recording_location', 'track_title',
        'recording_year', 'isrc_code', 'lyrics', 'lyrics_text'].map(text),
      jsonb('demo_files'),
      ...['primary_artists', 'featuring_artists', 'remix_artists', 'writer_artists', 'performer_artists', 'engineer_artists'].map((n) => ({ ...jsonb(n), keyList: 'artists' as const })),
    ],
  },
] satisfies TableDef[]).map(withFacts);

/**
 * `removals` (migration 9, migrations/0009-removals.sql): what was removed from the eight
 * collections, written by their delete triggers. The service serves it read-only, as a PostgREST
 * over the same schema serves the table; it is not one of the catalog's collections (no
 * commands, import, seed or check of its own): `catalog changes` reads it.
 */
export const REMOVALS: TableDef = {
  name: 'removals',
  singular: 'removal',
  primaryKey: ['id'],
  readOnly: true,
  columns: [
    { name: 'id', type: 'bigint', nullable: false, primaryKey: true },
    { name: 'collection', type: 'text', nullable: false },
    { name: 'record_id', type: 'uuid', nullable: false },
    { name: 'title', type: 'text', nullable: true },
    { name: 'removed', type: 'timestamp with time zone', nullable: false, default: 'now()' },
  ],
};

/** Every relation the service serves: the eight collections and `removals`. */
export const SERVED_TABLES: readonly TableDef[] = [...TABLES, REMOVALS];

const SERVED_BY_NAME = new Map(SERVED_TABLES.map((t) => [t.name, t]));

/** A relation the service serves, by its exact name (the eight collections, `removals`). */
export function servedTableByName(name: string): TableDef | undefined {
  return SERVED_BY_NAME.get(name);
}

/** Collection names, alphabetically (as the interface lists them). */
export const COLLECTIONS: readonly string[] = TABLES.map((t) => t.name).sort();

/** The interface version this catalog implements. */
export const INTERFACE_VERSION = '12.2.3';

/** The built-in schema: the compiled tables as the one table model (the embedded catalog, and the fallback when a service has no description). */
export function builtinSchema(): SchemaModel {
  return { version: INTERFACE_VERSION, tables: new Map(TABLES.map((t) => [t.name, t])), source: 'builtin' };
}

const BY_NAME = new Map(TABLES.map((t) => [t.name, t]));

/** Looks up a table by its exact (case-sensitive) name. */
export function tableByName(name: string): TableDef | undefined {
  return BY_NAME.get(name);
}

/** A relationship between two tables through one single-column foreign key. */
export interface Relationship {
  /** Table the request starts from. */
  from: string;
  /** Table being embedded. */
  to: string;
  /** Cardinality seen from `from`. */
  cardinality: 'many-to-one' | 'one-to-many';
  /** The FK column on the child table (`releases.label_id`). */
  fkColumn: string;
  constraint: string;
  /** The child table (the one holding the FK). */
  child: string;
  parent: string;
  /**
   * A PostgREST computed relationship: the SQL function `to(from)` returns the embedded rows
   * (src/schema/links.ts). `fkColumn` is empty; `constraint` is the function's name.
   */
  computed?: boolean;
}

/** Every relationship: both directions of each foreign key, then the computed ones. */
export const RELATIONSHIPS: readonly Relationship[] = [
  ...foreignKeyRelationships(),
  ...COMPUTED_RELATIONSHIPS.map((r) => ({ from: r.from, to: r.to, cardinality: 'one-to-many' as const, fkColumn: '', constraint: r.to, child: r.to, parent: r.from, computed: true })),
];

function foreignKeyRelationships(): Relationship[] {
  return TABLES.flatMap((t) =>
  t.columns.flatMap((c) =>
    c.foreignKey
      ? [
          { from: t.name, to: c.foreignKey.table, cardinality: 'many-to-one' as const, fkColumn: c.name, constraint: c.foreignKey.constraint, child: t.name, parent: c.foreignKey.table },
          { from: c.foreignKey.table, to: t.name, cardinality: 'one-to-many' as const, fkColumn: c.name, constraint: c.foreignKey.constraint, child: t.name, parent: c.foreignKey.table },
        ]
      : [],
  ),
  );
}

/** The fields the interface removed, per collection (the tables' `removedFields`), for friendly errors when someone still asks for them. */
export const REMOVED_FIELDS: Readonly<Record<string, string[]>> = Object.fromEntries(TABLES.flatMap((t) => (t.removedFields ? [[t.name, [...t.removedFields]]] : [])));
/** Collections the interface removed. */
export const REMOVED_COLLECTIONS: readonly string[] = ['users'];
