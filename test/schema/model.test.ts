import { describe, expect, it } from 'vitest';
import { SERVED_TABLES, TABLES } from '../../src/schema/catalog.js';
import { type ColumnDef, displayDefault, foreignKeyOrder, schemaFromOpenApi, singularOf, sqlDefault, type TableDef } from '../../src/schema/model.js';
import { openApiDocument } from '../../src/server/openapi.js';

/** A table without the column comments (the compiled catalog keeps those in links.ts, not on its columns). */
const uncommented = (t: TableDef): TableDef => ({ ...t, columns: t.columns.map(({ description: _, ...c }) => c) });

describe('the table model', () => {
  it('built from our root description, it is the compiled catalog: types, nulls, defaults, keys, key lists, singulars', () => {
    const fromDoc = schemaFromOpenApi(openApiDocument());
    expect([...fromDoc.tables.keys()].sort()).toEqual(SERVED_TABLES.map((t) => t.name).sort());
    // removals too: read-only, as its path offers no POST
    for (const t of SERVED_TABLES) expect(uncommented(fromDoc.tables.get(t.name)!)).toEqual(t);
    expect(fromDoc.tables.get('removals')!.readOnly).toBe(true);
    expect(fromDoc.tables.get('labels')!.readOnly).toBeUndefined();
    // the service tells the link fields by their comments
    expect(fromDoc.tables.get('tracks')!.columns.filter((c) => c.keyList).map((c) => `${c.name}:${c.keyList}`)).toEqual(
      TABLES.find((t) => t.name === 'tracks')!.columns.filter((c) => c.keyList).map((c) => `${c.name}:${c.keyList}`),
    );
    expect(fromDoc.tables.get('releases')!.columns.find((c) => c.name === 'tracks')!.keyList).toBe('tracks');
    expect(fromDoc.tables.get('artists')!.columns.find((c) => c.name === 'tracks')!.keyList).toBeUndefined();
  });

  it('takes what another service reports: other types, no comments, unknown keys absent', () => {
    const m = schemaFromOpenApi({
      info: { version: '12.2.0 (abc)' },
      definitions: {
        studios: {
          required: ['id', 'rooms'],
          properties: {
            id: { format: 'bigint', type: 'integer', description: 'Note:\nThis is a Primary Key.<pk/>' },
            rooms: { format: 'integer', type: 'integer', default: 1 },
            city: { format: 'character varying', type: 'string', default: "O'Hare" },
            opened: { format: 'timestamp without time zone', type: 'string', default: 'now()' },
            label_id: { format: 'uuid', type: 'string', description: "Note:\nThis is a Foreign Key to `labels.id`.<fk table='labels' column='id'/>" },
          },
        },
      },
    });
    expect(m.version).toBe('12.2.0');
    expect(m.tables.get('studios')).toEqual({
      name: 'studios',
      singular: 'studio',
      primaryKey: ['id'],
      columns: [
        { name: 'id', type: 'bigint', nullable: false, primaryKey: true },
        { name: 'rooms', type: 'integer', nullable: false, default: '1' },
        { name: 'city', type: 'character varying', nullable: true, default: "'O''Hare'::character varying" },
        { name: 'opened', type: 'timestamp without time zone', nullable: true, default: 'now()' },
        { name: 'label_id', type: 'uuid', nullable: true, foreignKey: { table: 'labels', column: 'id', constraint: 'studios_label_id_fkey' } },
      ],
    });
  });

  it('a default shown by the description and the expression behind it go both ways', () => {
    for (const [expr, type] of [["''::text", 'text'], ['false', 'boolean'], ['now()', 'timestamp with time zone'], ['gen_random_uuid()', 'uuid'], ["'it''s'::text", 'text'], ['42', 'integer']]) {
      expect(sqlDefault(displayDefault(expr), type)).toBe(expr);
    }
    expect(sqlDefault(undefined, 'text')).toBeUndefined();
  });

  it('derives the compiled singulars from the names', () => {
    for (const t of TABLES) expect(singularOf(t.name)).toBe(t.singular);
    expect(singularOf('users')).toBe('user');
    expect(singularOf('press')).toBe('press');
  });

  it('orders any tables parents first, whatever order they come in: foreign keys and link columns', () => {
    const parentsOf = (t: TableDef) => t.columns.map((c) => c.foreignKey?.table ?? c.keyList).filter((n): n is string => n !== undefined && n !== t.name);
    for (const order of [[...TABLES], [...TABLES].reverse(), [...TABLES].sort((a, b) => a.name.localeCompare(b.name))]) {
      const names = foreignKeyOrder(order).map((t) => t.name);
      expect([...names].sort()).toEqual(TABLES.map((t) => t.name).sort());
      for (const t of TABLES) for (const parent of parentsOf(t)) expect(names.indexOf(parent), `${parent} before ${t.name}`).toBeLessThan(names.indexOf(t.name));
    }
    // a releases file lists its tracks (ids or ISRCs), a tracks file credits artists: both load on a fresh catalog
    expect(foreignKeyOrder(TABLES).map((t) => t.name)).toEqual(['countries', 'languages', 'genres', 'subgenres', 'labels', 'artists', 'tracks', 'releases']);
  });

  it('keeps the given order where nothing points, ignores self-links and stops at cycles', () => {
    const t = (name: string, cols: Array<Partial<ColumnDef>> = []): TableDef => ({
      name,
      singular: singularOf(name),
      primaryKey: ['id'],
      columns: [{ name: 'id', type: 'uuid', nullable: false, primaryKey: true }, ...cols.map((c, i) => ({ name: `c${i}`, type: 'uuid', nullable: true, ...c }))],
    });
    const fk = (table: string): Partial<ColumnDef> => ({ foreignKey: { table, column: 'id', constraint: `${table}_fkey` } });
    const names = (tables: TableDef[]) => foreignKeyOrder(tables).map((x) => x.name);
    // unrelated tables stay as given
    expect(names([t('b'), t('a'), t('c')])).toEqual(['b', 'a', 'c']);
    // a link column is a dependency like a foreign key
    expect(names([t('releases', [{ type: 'jsonb', keyList: 'tracks' }]), t('tracks', [{ type: 'jsonb', keyList: 'artists' }]), t('artists')])).toEqual(['artists', 'tracks', 'releases']);
    // a link to a collection the service does not have is no dependency
    expect(names([t('releases', [{ type: 'jsonb', keyList: 'tracks' }]), t('labels')])).toEqual(['releases', 'labels']);
    // a table pointing at itself (a parent release, an artist's own tracks list) is not its own parent
    expect(names([t('tracks', [{ type: 'jsonb', keyList: 'tracks' }, fk('tracks')]), t('genres')])).toEqual(['tracks', 'genres']);
    // a cycle ends: each table once, the one reached again first
    expect(names([t('a', [fk('b')]), t('b', [fk('a')]), t('c', [fk('a')])])).toEqual(['b', 'a', 'c']);
    expect(names([t('x', [fk('y')]), t('y', [fk('z')]), t('z', [fk('x')])])).toEqual(['z', 'y', 'x']);
  });
});
