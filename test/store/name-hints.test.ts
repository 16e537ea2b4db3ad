import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/store.js';
import { STORE_KINDS, disposeStore } from '../support/stores.js';

/**
 * Migration 10: an unknown artist name's did-you-mean, now found through an index on the first
 * three characters of the name key (and the name-key index for names shorter than that), gives
 * what migration 5's scan gave: names sharing the key's first three characters, or whose whole
 * key (under three characters) starts the key; the shortest three, ties in name order.
 */
const refusal = async (store: Store, name: string) =>
  store
    .query(`select catalog_artist_by_key($1, 'primary_artists[0]')`, [name])
    .then(() => null)
    .catch((e: { code?: string; message: string; hint?: string }) => ({ code: e.code, message: e.message, hint: e.hint ?? null }));

for (const { kind, make, skip } of STORE_KINDS) {
  describe.skipIf(skip)(`the did-you-mean of an unknown artist name over ${kind}${skip ? ' (SKIPPED: set CATALOG_TEST_DATABASE_URL)' : ''}`, () => {
    let store: Store & { drop?(): Promise<void> };
    beforeAll(async () => {
      store = await make();
      const names = ['Léa Marin', 'LEANDRO', 'Lea', 'Le', 'Lebowski Brothers Band', 'Marin', 'Leo', 'L'];
      await store.query(`insert into artists (stage_name) select unnest($1::text[])`, [names]);
    });
    afterAll(async () => {
      if (store) await disposeStore(store);
    });

    it('a key of three characters or more: names sharing its first three, and the shorter names that start it', async () => {
      expect(await refusal(store, 'Lea  Martín')).toEqual({ code: '23503', message: 'primary_artists[0]: no artist is named "Lea  Martín"', hint: 'did you mean "L", "Le", "Lea"?' });
      expect(await refusal(store, 'Leandra')).toEqual({ code: '23503', message: 'primary_artists[0]: no artist is named "Leandra"', hint: 'did you mean "L", "Le", "Lea"?' });
      expect(await refusal(store, 'Mari')).toEqual({ code: '23503', message: 'primary_artists[0]: no artist is named "Mari"', hint: 'did you mean "Marin"?' });
      expect(await refusal(store, 'Zed Nobody')).toEqual({ code: '23503', message: 'primary_artists[0]: no artist is named "Zed Nobody"', hint: null });
    });

    it('the shortest three, ties in name order, when only longer names share the prefix', async () => {
      // the short names go for this test only: the other tests expect them there, in any order
      const gone = await store.query<{ stage_name: string }>(`delete from artists where length(catalog_name_key(stage_name)) < 4 returning stage_name`);
      try {
        expect((await refusal(store, 'Leaf'))?.hint).toBe('did you mean "LEANDRO", "Léa Marin"?');
        expect((await refusal(store, 'Leb'))?.hint).toBe('did you mean "Lebowski Brothers Band"?');
      } finally {
        await store.query(`insert into artists (stage_name) select unnest($1::text[])`, [gone.rows.map((r) => r.stage_name)]);
      }
    });

    it('a key under three characters still finds the names it starts', async () => {
      expect((await refusal(store, 'Ma'))?.hint).toBe('did you mean "Marin"?');
    });

    it('the prefix index is there', async () => {
      const r = await store.query<{ n: number }>(`select count(*)::int as n from pg_indexes where schemaname = $1 and indexname = 'artists_name_prefix_idx'`, [store.schema]);
      expect(r.rows[0].n).toBe(1);
    });
  });
}
