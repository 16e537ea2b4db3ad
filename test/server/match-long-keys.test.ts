import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/server/app.js';
import type { Store } from '../../src/store/store.js';
import { STORE_KINDS, disposeStore } from '../support/stores.js';
import { appFor, send } from './support.js';

/**
 * The natural-key indexes `match=` looks up are hash indexes: a B-tree entry is limited to 2,704
 * bytes, so a B-tree over a name's key refused every label (genre, country, …) named at greater
 * length, which the catalog stored before the indexes existed (a hostile file's 3 KB names).
 */
for (const { kind, make, skip } of STORE_KINDS) {
  describe.skipIf(skip)(`long keys over ${kind}${skip ? ' (SKIPPED: set CATALOG_TEST_DATABASE_URL)' : ''}`, () => {
    let store: Store & { drop?(): Promise<void> };
    let app: App & { logged: string[] };
    beforeAll(async () => {
      store = await make();
      app = appFor(store);
    });
    afterAll(async () => {
      if (store) await disposeStore(store);
    });

    it('a 3,000-character label name and subgenre name are stored, and matched again by key', async () => {
      // random hex: a key that does not compress (a B-tree compresses an entry before it measures it)
      const long = `Long ${randomBytes(1500).toString('hex')} Näme`;
      const labels = await send(app, 'POST', '/labels', { body: [{ name: long }], headers: { Prefer: 'return=representation' } });
      expect(labels.status, labels.text.slice(0, 300)).toBe(201);
      const again = await send(app, 'POST', '/labels', { body: [{ id: '1ab00000-0000-4000-8000-00000000abcd', name: long.toUpperCase() }], headers: { Prefer: 'resolution=merge-duplicates, match=name, return=representation' } });
      expect(again.status).toBeLessThan(300);
      expect((again.json as Array<{ id: string }>)[0].id).toBe((labels.json as Array<{ id: string }>)[0].id);
      const sub = await send(app, 'POST', '/subgenres', { body: [{ name: long, genre: long }] });
      expect(sub.status, sub.text.slice(0, 300)).toBe(201);
      expect(Number((await store.query<{ n: number }>(`select count(*)::int as n from labels where lower(name) = lower($1)`, [long])).rows[0].n)).toBe(1);
    });
  });
}
