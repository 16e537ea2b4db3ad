import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tableByName, type TableDef } from '../../src/schema/catalog.js';
import { matchLookup } from '../../src/server/match.js';
import type { PlannedMatch } from '../../src/server/match-preference.js';
import { stagedTarget } from '../../src/server/sql.js';
import { stagedCreate } from '../../src/server/staged.js';
import type { WritePlan } from '../../src/server/plan.js';
import type { Store } from '../../src/store/store.js';
import { STORE_KINDS, disposeStore } from '../support/stores.js';

/**
 * match= looks each body row's keys up where the write happens: every lookup must be an index scan
 * (migration 6's key indexes, and the side table's primary key for source ids), or a batch of a
 * large catalog would read the whole table once per row.
 */
const KEYS: Array<[table: string, alts: string[][], rows: string]> = [
  ['tracks', [['isrc_code']], `select 'QZ' || lpad(i::text, 10, '0') from generate_series(1, 20000) i`],
  ['releases', [['upc_code'], ['catalog_number']], `select lpad(i::text, 12, '0'), 'CAT-' || i from generate_series(1, 5000) i`],
  ['labels', [['name']], `select 'Label ' || i from generate_series(1, 5000) i`],
  ['subgenres', [['genre', 'name']], `select 'Genre ' || (i % 50), 'Sub ' || i from generate_series(1, 5000) i`],
];

for (const { kind, make, skip } of STORE_KINDS) {
  describe.skipIf(skip)(`match= lookups are index scans on ${kind}${skip ? ' (SKIPPED: set CATALOG_TEST_DATABASE_URL)' : ''}`, () => {
    let store: Store & { drop?(): Promise<void> };
    beforeAll(async () => {
      store = await make();
    });
    afterAll(async () => {
      if (store) await disposeStore(store);
    });

    it.each(KEYS)('%s by %j (and by a source id)', async (name, keys, fill) => {
      const table = tableByName(name) as TableDef;
      const cols = [...new Set(keys.flat())];
      // statistics of an empty table, as a bench's truncate and vacuum analyze before a load leave
      // them: then 'order by created limit 1' walked tracks' created index instead (19 s for 10k rows)
      // (through PgBouncer every statement runs in a transaction, where VACUUM cannot: ANALYZE alone there)
      await store.query(`vacuum analyze ${name}`).catch(async (err: { code?: string }) => {
        if (err.code !== '25001') throw err;
        await store.query(`analyze ${name}`);
      });
      await store.query(`insert into ${name} (${cols.join(', ')}) ${fill}`);
      const alts: PlannedMatch[] = [{ kind: 'source', source: 'legacy' }, ...keys.map((k) => ({ kind: 'key' as const, columns: k.map((c) => table.columns.find((x) => x.name === c)!) }))];
      const plan = { table } as WritePlan;
      const text = await store.transaction(async (tx) => {
        await tx.query(stagedCreate(plan, store.schema));
        await tx.query(`insert into ${stagedTarget(plan)} (id, ${cols.join(', ')}, source_ids) select gen_random_uuid(), ${cols.map(() => `'x'`).join(', ')}, '{"legacy": "1"}'`);
        const r = await tx.query<Record<string, unknown>>(`explain (format json) ${matchLookup(table, alts, store.schema, stagedTarget(plan))}`);
        return JSON.stringify(r.rows[0]['QUERY PLAN']);
      });
      const scanned = [...text.matchAll(/"Relation Name":"([^"]+)"/g)].map((m) => m[1]);
      const seqScans = [...text.matchAll(/"Node Type":"Seq Scan","Parent Relationship":"[^"]*",[^}]*?"Relation Name":"([^"]+)"/g)].map((m) => m[1]);
      expect(scanned).toContain(name);
      // the staged rows are read in full (they are the body); nothing else is
      expect(seqScans.filter((r) => !r.startsWith('pgrst_ext_'))).toEqual([]);
      for (const k of keys) expect(text).toContain(`${name}_${k.join('_')}_key_idx`);
      expect(text).not.toContain('created_idx');
    });
  });
}
