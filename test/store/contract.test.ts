import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVED_TABLES } from '../../src/schema/catalog.js';
import { LATEST_VERSION } from '../../src/schema/migrations.js';
import { migrate } from '../../src/store/migrate.js';
import { StoreError, type Store } from '../../src/store/store.js';
import { STORE_KINDS, disposeStore, makePGliteThreadStore } from '../support/stores.js';

/** The contract every Store implementation keeps; run against PGlite (in this thread and on its own), and PostgreSQL. */
const KINDS: Array<{ kind: string; make: () => Promise<Store & { drop?(): Promise<void> }>; skip: boolean }> = [...STORE_KINDS, { kind: 'pglite on its own thread', make: makePGliteThreadStore, skip: false }];
for (const { kind, make, skip } of KINDS) {
  describe.skipIf(skip)(`store contract: ${kind}${skip ? ' (SKIPPED: set CATALOG_TEST_DATABASE_URL)' : ''}`, () => {
    let store: Store & { drop?(): Promise<void> };
    beforeAll(async () => {
      store = await make();
    });
    afterAll(async () => {
      if (store) await disposeStore(store);
    });

    it('creates exactly the described columns, types, defaults and nullability', async () => {
      const { rows } = await store.query<{ table_name: string; column_name: string; type: string; is_nullable: string; column_default: string | null }>(
        `select c.table_name, c.column_name, format_type(a.atttypid, a.atttypmod) as type, c.is_nullable, c.column_default
           from information_schema.columns c
           join pg_attribute a on a.attrelid = (quote_ident(c.table_schema) || '.' || quote_ident(c.table_name))::regclass and a.attname = c.column_name
          where c.table_schema = $1 and c.table_name <> 'catalog_migrations'
          order by c.table_name, c.ordinal_position`,
        [store.schema],
      );
      const actual = rows.map((r) => `${r.table_name}.${r.column_name} ${r.type} ${r.is_nullable === 'YES' ? 'null' : 'not null'} ${r.column_default ?? '-'}`);
      // the eight collections and removals (migration 9)
      const expected = [...SERVED_TABLES]
        .sort((a, b) => a.name.localeCompare(b.name))
        .flatMap((t) => t.columns.map((c) => `${t.name}.${c.name} ${c.type} ${c.nullable ? 'null' : 'not null'} ${c.default ?? '-'}`));
      expect(actual).toEqual(expected);
    });

    it('records the migrations and re-running them changes nothing', async () => {
      const again = await migrate(store);
      expect(again.applied).toEqual([]);
      expect(again.version).toBe(LATEST_VERSION);
    });

    it('maintains updated on every update, keeps created', async () => {
      const ins = await store.query<{ id: string; created: string; updated: string }>(
        `insert into labels (name, created, updated) values ('A', '2020-01-01T00:00:00Z', '2020-01-01T00:00:00Z') returning id, created, updated`,
      );
      const { id, created } = ins.rows[0];
      const upd = await store.query<{ created: string; updated: string }>(`update labels set name = 'B' where id = $1 returning created, updated`, [id]);
      expect(upd.rows[0].created).toBe(created);
      expect(Date.parse(upd.rows[0].updated)).toBeGreaterThan(Date.parse('2021-01-01T00:00:00Z'));
    });

    it('keeps an updated the update writes itself (migration 7: an import of an export restores its timestamps)', async () => {
      const ins = await store.query<{ id: string }>(`insert into labels (name, updated) values ('Kept', '2020-01-01T00:00:00Z') returning id`);
      const { id } = ins.rows[0];
      const written = await store.query<{ updated: string }>(`update labels set name = 'Kept 2', updated = '2019-05-05T00:00:00Z' where id = $1 returning updated`, [id]);
      expect(Date.parse(written.rows[0].updated)).toBe(Date.parse('2019-05-05T00:00:00Z'));
      const same = await store.query<{ updated: string }>(`update labels set name = 'Kept 3', updated = '2019-05-05T00:00:00Z' where id = $1 returning updated`, [id]);
      expect(Date.parse(same.rows[0].updated)).toBeGreaterThan(Date.parse('2021-01-01T00:00:00Z'));
    });

    it('applies defaults: generated uuid, empty text, false booleans, null dates', async () => {
      const { rows } = await store.query<{ id: string; stage_name: string; is_signed: boolean; birthdate: string | null; metadata: unknown }>(
        'insert into artists default values returning id, stage_name, is_signed, birthdate, metadata',
      );
      expect(rows[0].id).toMatch(/^[0-9a-f-]{36}$/);
      expect(rows[0]).toMatchObject({ stage_name: '', is_signed: false, birthdate: null, metadata: null });
    });

    it('enforces the release foreign keys with PostgreSQL error codes', async () => {
      const err = await store
        .query(`insert into releases (release_title, label_id) values ('x', gen_random_uuid())`)
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(StoreError);
      expect((err as StoreError).code).toBe('23503');
      expect((err as StoreError).message).toContain('releases_label_id_fkey');
    });

    it('rolls a failing transaction back whole', async () => {
      const before = (await store.query<{ n: string }>('select count(*)::text as n from genres')).rows[0].n;
      await expect(
        store.transaction(async (tx) => {
          await tx.query(`insert into genres (name) values ('kept?')`);
          await tx.query('select 1/0');
        }),
      ).rejects.toMatchObject({ code: '22012' });
      const after = (await store.query<{ n: string }>('select count(*)::text as n from genres')).rows[0].n;
      expect(after).toBe(before);
    });

    it('passes an error of our own code thrown inside a transaction through unchanged, after rolling back', async () => {
      class Refused extends Error {}
      const err = await store
        .transaction(async (tx) => {
          await tx.query(`insert into genres (name) values ('never kept')`);
          throw new Refused('checked after the write');
        })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Refused);
      const { rows } = await store.query<{ n: number }>(`select count(*)::int as n from genres where name = 'never kept'`);
      expect(rows[0].n).toBe(0);
    });

    it('makes the transaction-local settings it is given before the transaction body, and only for it', async () => {
      const read = (tx: { query: Store['query'] }) => tx.query<{ run: string | null; other: string | null }>(`select current_setting('catalog.run', true) as run, current_setting('catalog.other', true) as other`);
      // a uuid (set with BEGIN on PostgreSQL) and a value with a quote and a backslash (set by a statement of its own)
      const local = [['catalog.run', 'a0000000-0000-4000-8000-000000000001'], ['catalog.other', "it's a \\ test"]] as const;
      const inside = await store.transaction((tx) => read(tx), undefined, local);
      expect(inside.rows[0]).toEqual({ run: 'a0000000-0000-4000-8000-000000000001', other: "it's a \\ test" });
      const after = await store.transaction((tx) => read(tx));
      expect([after.rows[0]?.run ?? '', after.rows[0]?.other ?? '']).toEqual(['', '']);
    });

    it('commits a successful transaction and returns its value', async () => {
      const id = await store.transaction(async (tx) => {
        const r = await tx.query<{ id: string }>(`insert into countries (name) values ('Ísland') returning id`);
        return r.rows[0].id;
      });
      const { rows } = await store.query<{ name: string }>('select name from countries where id = $1', [id]);
      expect(rows[0].name).toBe('Ísland');
    });

    it('builds JSON bodies inside the database', async () => {
      // its own row (a name no other test writes), not the one the transaction test commits
      await store.query(`insert into countries (name) values ('Føroyar')`);
      const { rows } = await store.query<{ body: string }>(
        `select coalesce(json_agg(t), '[]')::text as body from (select name from countries where name = 'Føroyar') t`,
      );
      expect(JSON.parse(rows[0].body)).toEqual([{ name: 'Føroyar' }]);
    });

    it('has indexes on the foreign-key columns', async () => {
      const { rows } = await store.query<{ indexdef: string }>(
        `select indexdef from pg_indexes where schemaname = $1 and tablename = 'releases'`,
        [store.schema],
      );
      const defs = rows.map((r) => r.indexdef).join('\n');
      for (const col of ['label_id', 'genre_id', 'subgenre_id']) expect(defs).toMatch(new RegExp(`\\(${col}\\)`));
    });
  });
}
