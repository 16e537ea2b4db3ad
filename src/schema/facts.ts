/**
 * What the catalog knows of each collection beyond its columns, stated once: the field that names
 * a record to people, its natural key, the column a reference by name reads, the text fields that
 * name a parent record, and the fields the interface removed. The table model carries them
 * (`TableDef` extends `CollectionFacts`, src/schema/model.ts): the compiled catalog's tables
 * (catalog.ts `TABLES`) and a service's root description (`schemaFromOpenApi`, by collection
 * name) both take them from here, and commands, import, sync and check read them off the table.
 * Kept apart from catalog.ts because model.ts reads them too (catalog.ts imports model.ts).
 * The migrations' SQL restates some of them (frozen text: migrations/0006-source-ids.sql's key
 * indexes, 0009-removals.sql's titles); test/schema/facts.test.ts pins the facts.
 */

/** A natural key: alternatives tried in order (releases: UPC, else catalog number), each a list of columns. */
export type KeySpec = ReadonlyArray<readonly string[]>;

/** One reference by name: `field` (text on the row) names `collection.column`; its id goes in `idField`. */
export interface RefSpec {
  field: string;
  idField: string;
  collection: string;
  column: string;
}

/**
 * A natural key as people read it.
 * @example describeKey([['upc_code'], ['catalog_number']]) // 'upc_code, else catalog_number'
 */
export const describeKey = (spec: KeySpec): string => spec.map((a) => a.join('+')).join(', else ');

/** A collection's facts beyond its columns (each absent when it has none). */
export interface CollectionFacts {
  /** The field that names a record to people (artists: `stage_name`, releases: `release_title`, labels: `name`). */
  title?: string;
  /** How a row without an id is matched to a stored record: import's default key (artists have none: names repeat in real life). */
  naturalKey?: KeySpec;
  /** The column a reference by name reads (a release's `label` names `labels.name`, a credit names `artists.stage_name`). */
  nameColumn?: string;
  /** The text fields of a row that name a parent record, resolved to its id unasked (releases: label, genre, subgenre). */
  references?: readonly RefSpec[];
  /** Fields the interface removed, answered with a friendly error when someone still asks for them. */
  removedFields?: readonly string[];
}

/** A collection others name records of: its title is the column a reference by name reads. */
const named = (title: string, naturalKey?: KeySpec): CollectionFacts => ({ title, nameColumn: title, ...(naturalKey ? { naturalKey } : {}) });

const PARENTS: Readonly<Record<string, CollectionFacts>> = {
  countries: named('name', [['name']]),
  languages: named('name', [['name']]),
  genres: named('name', [['name']]),
  subgenres: named('name', [['genre', 'name']]),
  labels: named('name', [['name']]),
  artists: { ...named('stage_name'), removedFields: ['slug'] },
};

/** `field` names a record of `collection` by its name column; the id goes in `idField`. */
const byName = (field: string, idField: string, collection: string): RefSpec => ({ field, idField, collection, column: PARENTS[collection].nameColumn! });

/** Each of the catalog's collections' facts, by its name. */
export const COLLECTION_FACTS: Readonly<Record<string, CollectionFacts>> = {
  ...PARENTS,
  releases: {
    title: 'release_title',
    naturalKey: [['upc_code'], ['catalog_number']],
    references: [byName('label', 'label_id', 'labels'), byName('genre', 'genre_id', 'genres'), byName('subgenre', 'subgenre_id', 'subgenres')],
  },
  tracks: { title: 'track_title', naturalKey: [['isrc_code']] },
};

/** The facts of one of the catalog's collections, by its name; undefined for any other relation. */
export function collectionFacts(name: string): CollectionFacts | undefined {
  return Object.hasOwn(COLLECTION_FACTS, name) ? COLLECTION_FACTS[name] : undefined;
}

/**
 * The facts of a collection as a table with these columns carries them: a title or name column
 * it does not have is left out (another service's collection of the same name).
 */
export function factsFor(name: string, columns: readonly string[]): CollectionFacts {
  const facts = collectionFacts(name);
  if (!facts) return {};
  const { title, nameColumn, ...rest } = facts;
  return {
    ...(title !== undefined && columns.includes(title) ? { title } : {}),
    ...(nameColumn !== undefined && columns.includes(nameColumn) ? { nameColumn } : {}),
    ...rest,
  };
}

/** Every collection's title field, each once (`name`, `stage_name`, …): what names a record of a table the catalog does not know. */
export const TITLE_FIELDS: readonly string[] = [...new Set(Object.values(COLLECTION_FACTS).map((f) => f.title!))];

/**
 * Each collection's default natural key, collections with the same key together, for help text.
 * @example defaultKeysText() // 'countries, languages, genres, labels name; subgenres genre+name; artists none; …'
 */
export function defaultKeysText(): string {
  const groups = new Map<string, string[]>();
  for (const [name, f] of Object.entries(COLLECTION_FACTS)) {
    const key = f.naturalKey ? describeKey(f.naturalKey) : 'none';
    groups.set(key, [...(groups.get(key) ?? []), name]);
  }
  return [...groups].map(([key, names]) => `${names.join(', ')} ${key}`).join('; ');
}

/**
 * The references each collection resolves by name unasked, for help text.
 * @example defaultReferencesText() // 'releases do label, genre, subgenre'
 */
export function defaultReferencesText(): string {
  return Object.entries(COLLECTION_FACTS)
    .flatMap(([name, f]) => (f.references?.length ? [`${name} do ${f.references.map((r) => r.field).join(', ')}`] : []))
    .join('; ');
}
