import { describe, expect, it } from 'vitest';
import { REMOVED_FIELDS, TABLES } from '../../src/schema/catalog.js';
import { COLLECTION_FACTS, collectionFacts, defaultKeysText, defaultReferencesText, TITLE_FIELDS } from '../../src/schema/facts.js';
import { NAME_FIELD } from '../../src/schema/keys.js';
import { schemaFromOpenApi, type TableDef, titleOf } from '../../src/schema/model.js';
import { CREDIT_REF } from '../../src/import/match/names.js';
import { openApiDocument } from '../../src/server/openapi.js';

/**
 * Issue 39 (item 3): each collection's facts beyond its columns (src/schema/facts.ts) are stated
 * once and carried by the table model. They are pinned here, so that changing one is deliberate.
 */
const PINNED: Record<string, { title: string; naturalKey: string[][] | null; nameColumn: string | null; references: string[]; removed: string[] }> = {
  countries: { title: 'name', naturalKey: [['name']], nameColumn: 'name', references: [], removed: [] },
  languages: { title: 'name', naturalKey: [['name']], nameColumn: 'name', references: [], removed: [] },
  genres: { title: 'name', naturalKey: [['name']], nameColumn: 'name', references: [], removed: [] },
  subgenres: { title: 'name', naturalKey: [['genre', 'name']], nameColumn: 'name', references: [], removed: [] },
  labels: { title: 'name', naturalKey: [['name']], nameColumn: 'name', references: [], removed: [] },
  artists: { title: 'stage_name', naturalKey: null, nameColumn: 'stage_name', references: [], removed: ['slug'] },
  releases: {
    title: 'release_title',
    naturalKey: [['upc_code'], ['catalog_number']],
    nameColumn: null,
    references: ['label→label_id=labels.name', 'genre→genre_id=genres.name', 'subgenre→subgenre_id=subgenres.name'],
    removed: [],
  },
  tracks: { title: 'track_title', naturalKey: [['isrc_code']], nameColumn: null, references: [], removed: [] },
};

const factsOf = (t: TableDef) => ({
  title: t.title,
  naturalKey: t.naturalKey ? t.naturalKey.map((a) => [...a]) : null,
  nameColumn: t.nameColumn ?? null,
  references: (t.references ?? []).map((r) => `${r.field}→${r.idField}=${r.collection}.${r.column}`),
  removed: [...(t.removedFields ?? [])],
});

describe('per-collection facts on the table model', () => {
  it('each compiled collection carries its pinned title, natural key, name column, references and removed fields', () => {
    expect(TABLES.map((t) => t.name).sort()).toEqual(Object.keys(PINNED).sort());
    for (const t of TABLES) expect(factsOf(t), t.name).toEqual(PINNED[t.name]);
    expect(Object.keys(COLLECTION_FACTS).sort()).toEqual(Object.keys(PINNED).sort());
  });

  it('every fact names fields the collection has; a reference fills a foreign key to its collection, by that collection\'s name column', () => {
    const byName = new Map(TABLES.map((t) => [t.name, t]));
    for (const t of TABLES) {
      const has = (c: string) => t.columns.some((col) => col.name === c);
      expect(has(t.title!), `${t.name}.${t.title}`).toBe(true);
      if (t.nameColumn) expect(has(t.nameColumn), `${t.name}.${t.nameColumn}`).toBe(true);
      for (const c of t.naturalKey?.flat() ?? []) expect(has(c), `${t.name} key ${c}`).toBe(true);
      // a removed field is one the table no longer has
      for (const c of t.removedFields ?? []) expect(has(c), `${t.name} removed ${c}`).toBe(false);
      for (const r of t.references ?? []) {
        expect(has(r.field), `${t.name}.${r.field}`).toBe(true);
        expect(t.columns.find((c) => c.name === r.idField)?.foreignKey?.table, `${t.name}.${r.idField}`).toBe(r.collection);
        expect(r.column).toBe(byName.get(r.collection)!.nameColumn);
      }
    }
  });

  it('a service describing the catalog gets the same facts; another service\'s collection only what its columns allow', () => {
    const fromDoc = schemaFromOpenApi(openApiDocument());
    for (const t of TABLES) expect(factsOf(fromDoc.tables.get(t.name)!), t.name).toEqual(PINNED[t.name]);
    expect(fromDoc.tables.get('removals')!.title).toBeUndefined();
    const other = schemaFromOpenApi({
      definitions: {
        artists: { properties: { id: { format: 'uuid', description: '<pk/>' }, full_name: { format: 'text' } } },
        studios: { properties: { id: { format: 'uuid', description: '<pk/>' }, name: { format: 'text' } } },
      },
    });
    const artists = other.tables.get('artists')!;
    expect([artists.title, artists.nameColumn, artists.removedFields]).toEqual([undefined, undefined, ['slug']]);
    expect(titleOf(artists)).toBeUndefined();
    // a table the catalog does not know: named by the first of the catalog's title fields it has
    expect(other.tables.get('studios')!.title).toBeUndefined();
    expect(titleOf(other.tables.get('studios')!)).toBe('name');
    expect(TITLE_FIELDS).toEqual(['name', 'stage_name', 'release_title', 'track_title']);
  });

  it('what used to restate them is read from them: duplicate-name fields, removed fields, the credit reference, help text', () => {
    expect(NAME_FIELD).toEqual({ countries: 'name', languages: 'name', genres: 'name', subgenres: 'name', labels: 'name', artists: 'stage_name' });
    expect(REMOVED_FIELDS).toEqual({ artists: ['slug'] });
    expect(CREDIT_REF).toEqual({ field: 'credit', idField: 'id', collection: 'artists', column: 'stage_name' });
    expect(collectionFacts('users')).toBeUndefined();
    expect(collectionFacts('toString')).toBeUndefined();
    expect(defaultKeysText()).toBe('countries, languages, genres, labels name; subgenres genre+name; artists none; releases upc_code, else catalog_number; tracks isrc_code');
    expect(defaultReferencesText()).toBe('releases do label, genre, subgenre');
  });
});
