import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { COPY_CSV } from '../../src/grammar/media.js';
import type { App } from '../../src/server/app.js';
import type { Store } from '../../src/store/store.js';
import { PG_URL, STORE_KINDS, disposeStore } from '../support/stores.js';
import { appFor, send } from './support.js';

/**
 * Issue 35's keyed re-run: with `match=` and `unchanged=skip` the rows equal to their record are
 * dropped from the staging table once the match decided their ids, before the link check and the
 * insert; and a batch whose every keyed row found its record is matched without the table's match
 * lock (nothing new is inserted by key, so no concurrent writer can make the decision wrong).
 */
const N = 40;
const ARTIST = 'a0000000-0000-4000-8000-000000000001';
const isrc = (i: number) => `QZUNC${String(i).padStart(7, '0')}`;
const credits = (i: number) => `"[{""id"":""${ARTIST}"",""name"":""Léa Marin""}]"`;
const line = (id: string, i: number, title = `Track ${i}`) => `${id},${isrc(i)},${title},${credits(i)}`;
const HEAD = 'id,isrc_code,track_title,primary_artists';
const PREFER = 'resolution=merge-duplicates, unchanged=skip, match=isrc_code, return=minimal';

for (const { kind, make, skip } of STORE_KINDS) {
  describe.skipIf(skip)(`an unchanged keyed re-run over ${kind}${skip ? ' (SKIPPED: set CATALOG_TEST_DATABASE_URL)' : ''}`, () => {
    let store: Store & { drop?(): Promise<void> };
    let app: App & { logged: string[] };
    let ids: string[];
    const copy = (lines: string[]) => send(app, 'POST', '/tracks', { body: `${HEAD}\n${lines.join('\n')}\n`, headers: { Prefer: PREFER, 'Content-Type': COPY_CSV } });
    const titles = async () => (await store.query<{ isrc_code: string; track_title: string }>('select isrc_code, track_title from tracks order by isrc_code')).rows;

    beforeAll(async () => {
      store = await make();
      app = appFor(store);
      await store.query(`insert into artists (id, stage_name) values ($1, 'Léa Marin')`, [ARTIST]);
    });
    beforeEach(async () => {
      await store.query('delete from tracks');
      ids = Array.from({ length: N }, () => randomUUID());
      const first = await copy(ids.map((id, i) => line(id, i)));
      expect(first.headers.get('catalog-counts')).toBe(`inserted=${N}, updated=0, unchanged=0, collapsed=0`);
    });
    afterAll(async () => {
      expect(app?.logged ?? []).toEqual([]);
      if (store) await disposeStore(store);
    });

    it('counts every row of an unchanged body unchanged, and leaves the rows untouched', async () => {
      const before = (await store.query<{ u: string }>('select max(updated)::text as u from tracks')).rows[0].u;
      const res = await copy(ids.map((id, i) => line(id, i)));
      expect(res.status).toBe(200);
      expect(res.headers.get('catalog-counts')).toBe(`inserted=0, updated=0, unchanged=${N}, collapsed=0`);
      expect((await store.query<{ u: string }>('select max(updated)::text as u from tracks')).rows[0].u).toBe(before);
    });

    it('a body mixing unchanged, changed, new and repeated rows: each counted and stored as the body says', async () => {
      const lines = ids.map((id, i) => line(id, i, i < 3 ? `Renamed ${i}` : `Track ${i}`));
      // two new keys, and the key of row 5 again later with a new title (the later one is written)
      lines.push(line(randomUUID(), N), line(randomUUID(), N + 1), line(randomUUID(), 5, 'Track 5 (again)'));
      const res = await copy(lines);
      expect(res.headers.get('catalog-counts')).toBe(`inserted=2, updated=4, unchanged=${N - 4}, collapsed=1`);
      const stored = await titles();
      expect(stored).toHaveLength(N + 2);
      expect(stored.filter((r) => r.track_title.startsWith('Renamed')).map((r) => r.isrc_code)).toEqual([isrc(0), isrc(1), isrc(2)]);
      expect(stored.find((r) => r.isrc_code === isrc(5))?.track_title).toBe('Track 5 (again)');
      expect(stored.find((r) => r.isrc_code === isrc(N + 1))?.track_title).toBe(`Track ${N + 1}`);
    });

    it('rows sent without their ids are found by key and counted unchanged', async () => {
      const res = await copy(ids.map((_, i) => line(randomUUID(), i)));
      expect(res.headers.get('catalog-counts')).toBe(`inserted=0, updated=0, unchanged=${N}, collapsed=0`);
      expect((await store.query<{ n: number }>('select count(*)::int as n from tracks')).rows[0].n).toBe(N);
    });

    it.skipIf(kind !== 'postgres')('a batch whose rows all found their record does not wait for the match lock; one with a new key does', async () => {
      const holder = new pg.Client({ connectionString: PG_URL });
      await holder.connect();
      try {
        await holder.query('select pg_advisory_lock(hashtext($1))', [`catalog match ${store.schema}.tracks`]);
        // with the lock held elsewhere: the unchanged re-run answers (it would wait forever if it took the lock)
        const unchanged = await copy(ids.map((id, i) => line(id, i, i === 0 ? 'Renamed while locked' : `Track ${i}`)));
        expect(unchanged.headers.get('catalog-counts')).toBe(`inserted=0, updated=1, unchanged=${N - 1}, collapsed=0`);
        // a new key must wait for the lock: the request is seen waiting on the advisory lock, then answers once it is free
        const pending = copy([line(randomUUID(), N + 7)]);
        let waiting = 0;
        while (waiting === 0) {
          waiting = (await holder.query<{ n: number }>(`select count(*)::int as n from pg_locks where locktype = 'advisory' and not granted`)).rows[0].n;
          if (waiting === 0) await new Promise((r) => setTimeout(r, 20));
        }
        expect(waiting).toBe(1);
        await holder.query('select pg_advisory_unlock(hashtext($1))', [`catalog match ${store.schema}.tracks`]);
        expect((await pending).headers.get('catalog-counts')).toBe('inserted=1, updated=0, unchanged=0, collapsed=0');
      } finally {
        await holder.end();
      }
    });
  });
}
