import { afterAll, describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../src/schema/migrations.js';
import { migrate } from '../../src/store/migrate.js';
import { openPGlite } from '../../src/store/pglite.js';
import type { Store } from '../../src/store/store.js';
import { STORE_KINDS, disposeStore, tempDir } from '../support/stores.js';

/** Names as a person expects them listed: accented and non-Latin initials with or after their base letters, not after Z. */
const NAMES = ['Zero Gravity', 'Éditions Mélodie', 'alpha Records', 'Ätna', 'İstanbul Plak', 'Ελληνικά', 'Beta', 'Złota Płyta', 'edge'];
const PEOPLE_ORDER = ['alpha Records', 'Ätna', 'Beta', 'edge', 'Éditions Mélodie', 'İstanbul Plak', 'Zero Gravity', 'Złota Płyta', 'Ελληνικά'];
const BYTE_ORDER = [...NAMES].sort((a, b) => (Buffer.compare(Buffer.from(a), Buffer.from(b))));

/** The columns migration 3 gave the ICU collation, read from its SQL (migrations/0003-name-collation.sql). */
const NAME_COLUMNS: Record<string, string[]> = Object.fromEntries(
  [...MIGRATIONS[2].sql.matchAll(/^alter table (\w+) (.*);$/gm)].map(([, table, alters]) => [table, [...alters.matchAll(/alter column (\w+)/g)].map((m) => m[1])]),
);

/** Turns a migrated catalog back into one made before migration 3 (columns under the database's C order). */
async function asBeforeMigration3(store: Store): Promise<void> {
  for (const [table, cols] of Object.entries(NAME_COLUMNS)) {
    await store.query(`alter table ${table} ${cols.map((c) => `alter column ${c} type text collate "default"`).join(', ')}`);
  }
  await store.query('delete from catalog_migrations where version >= 3');
}

async function labelNames(store: Store, extra = ''): Promise<string[]> {
  const { rows } = await store.query<{ name: string }>(`select name from labels ${extra} order by name`);
  return rows.map((r) => r.name);
}

async function insertLabels(store: Store): Promise<void> {
  for (const n of NAMES) await store.query('insert into labels (name) values ($1)', [n]);
}

for (const { kind, make, skip } of STORE_KINDS) {
  describe.skipIf(skip)(`name collation: ${kind}${skip ? ' (SKIPPED: set CATALOG_TEST_DATABASE_URL)' : ''}`, () => {
    const stores: Array<Store & { drop?(): Promise<void> }> = [];
    afterAll(async () => {
      for (const s of stores) await disposeStore(s);
    });

    it('sorts names as people read them; equality, like and ilike keep their rows; codes keep byte order', async () => {
      const store = await make();
      stores.push(store);
      await insertLabels(store);
      expect(await labelNames(store)).toEqual(PEOPLE_ORDER);
      expect(await labelNames(store, `where name = 'edge'`)).toEqual(['edge']);
      expect(await labelNames(store, `where name like 'Z%'`)).toEqual(['Zero Gravity', 'Złota Płyta']);
      expect(await labelNames(store, `where name like 'É%'`)).toEqual(['Éditions Mélodie']);
      expect(await labelNames(store, `where name ilike 'e%'`)).toEqual(['edge']);
      expect(await labelNames(store, `where name ilike 'z%'`)).toEqual(['Zero Gravity', 'Złota Płyta']);
      for (const code of ['b-1', 'A-2', 'a-3']) await store.query('insert into tracks (isrc_code) values ($1)', [code]);
      const { rows } = await store.query<{ isrc_code: string }>(`select isrc_code from tracks order by isrc_code`);
      expect(rows.map((r) => r.isrc_code)).toEqual(['A-2', 'a-3', 'b-1']);
    });

    it('migrates a catalog made before the change in place, and sorts its names after', async () => {
      const store = await make();
      stores.push(store);
      await asBeforeMigration3(store);
      await insertLabels(store);
      expect(await labelNames(store)).toEqual(BYTE_ORDER);
      const result = await migrate(store);
      expect(result.applied).toEqual(MIGRATIONS.filter((m) => m.version >= 3).map((m) => m.version));
      expect(await labelNames(store)).toEqual(PEOPLE_ORDER);
      expect((await migrate(store)).applied).toEqual([]);
    });
  });
}

describe('name collation: an embedded catalog directory made before the change', () => {
  it('opens, migrates with no manual step, and keeps its rows', async () => {
    const dataDir = tempDir('collation-');
    const old = await openPGlite({ dataDir });
    await asBeforeMigration3(old);
    await insertLabels(old);
    expect(await labelNames(old)).toEqual(BYTE_ORDER);
    await old.close();

    const reopened = await openPGlite({ dataDir });
    try {
      expect(await labelNames(reopened)).toEqual(PEOPLE_ORDER);
      const { rows } = await reopened.query<{ version: number }>('select version from catalog_migrations order by version');
      expect(rows.map((r) => r.version)).toEqual(MIGRATIONS.map((m) => m.version));
    } finally {
      await reopened.close();
    }
  });
});
