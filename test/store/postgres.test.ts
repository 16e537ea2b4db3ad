import { describe, expect, it } from 'vitest';
import { openPostgres } from '../../src/store/postgres.js';
import { PG_URL } from '../support/stores.js';
import { MIGRATIONS } from '../../src/schema/migrations.js';

describe.skipIf(!PG_URL)(`PostgreSQL store${PG_URL ? '' : ' (SKIPPED: set CATALOG_TEST_DATABASE_URL)'}`, () => {
  it('two servers migrating one fresh schema at the same time both succeed, and the schema is migrated once', async () => {
    const schema = `catalog_race_${process.pid}_${Date.now().toString(36)}`;
    const [a, b] = await Promise.all([openPostgres({ url: PG_URL!, schema, max: 2 }), openPostgres({ url: PG_URL!, schema, max: 2 })]);
    try {
      const { rows } = await a.query<{ n: number }>('select count(*)::int as n from catalog_migrations');
      expect(rows[0].n).toBe(MIGRATIONS.length);
      await b.query(`insert into labels (name) values ('seen by both')`);
      const seen = await a.query<{ name: string }>(`select name from labels`);
      expect(seen.rows.map((r) => r.name)).toEqual(['seen by both']);
    } finally {
      await a.query(`drop schema ${schema} cascade`);
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('reports an unreachable server as a connection error (SQLSTATE class 08)', async () => {
    await expect(openPostgres({ url: 'postgres://postgres@127.0.0.1:1/none' })).rejects.toMatchObject({ code: '08006' });
  });
});
