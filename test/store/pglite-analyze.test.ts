import { describe, expect, it } from 'vitest';
import { openPGlite } from '../../src/store/pglite.js';
import { appFor, send } from '../server/support.js';

/**
 * PGlite has no autovacuum: the embedded store analyzes a table once writes through the service
 * pass PostgreSQL's autovacuum threshold (50 rows + 10%), so planned counts follow a bulk load.
 */
describe('the embedded store re-analyzes what the service wrote', () => {
  it('analyzes a table after a bulk write, and not after a few rows more', async () => {
    const store = await openPGlite({});
    try {
      const app = appFor(store);
      const tuples = async () => Number((await store.query<{ n: number }>(`select reltuples::float8 as n from pg_class where oid = 'public.labels'::regclass`)).rows[0].n);
      const before = await tuples();
      const r = await send(app, 'POST', '/labels', { body: Array.from({ length: 300 }, (_, i) => ({ name: `Analyzed ${i}` })) });
      expect(r.status).toBe(201);
      await store.analyzeWritten();
      const after = await tuples();
      expect(before).toBeLessThan(300);
      expect(after).toBeGreaterThanOrEqual(300);

      const few = await send(app, 'POST', '/labels', { body: Array.from({ length: 20 }, (_, i) => ({ name: `Few ${i}` })) });
      expect(few.status).toBe(201);
      await store.analyzeWritten();
      expect(await tuples()).toBe(after);
      expect(app.logged).toEqual([]);
    } finally {
      await store.close();
    }
  });
});

/**
 * Migration 14: on the embedded store the link indexes take bulk loads through a GIN pending list,
 * and the store merges it into the index once writes pause (PGlite has no autovacuum to do it), so
 * lookups after a load read no pending list.
 */
describe('the embedded store empties the link indexes\' pending lists once writes pause', () => {
  const ARTIST = '7a000000-0000-4000-8000-0000000000a1';
  const credited = (n: number) => Array.from({ length: n }, (_, i) => ({ track_title: `Pending ${i}`, primary_artists: [{ id: ARTIST, name: 'Pending Artist' }] }));
  const pendingPages = async (store: Awaited<ReturnType<typeof openPGlite>>) => Number((await store.query<{ n: number }>(`select gin_clean_pending_list('tracks_credit_ids_idx'::regclass)::int as n`)).rows[0].n);

  it('writes fill the pending list; after the pause it is empty, and the index still finds every track', async () => {
    const store = await openPGlite({});
    try {
      const options = (await store.query<{ o: string[] }>(`select reloptions as o from pg_class where relname = 'tracks_credit_ids_idx'`)).rows[0].o;
      expect(options).toEqual(['fastupdate=on', 'gin_pending_list_limit=16384']);
      const app = appFor(store);
      expect((await send(app, 'POST', '/artists', { body: { id: ARTIST, stage_name: 'Pending Artist' } })).status).toBe(201);
      // without the pause, the list holds the new entries (emptying it here counts its pages)
      expect((await send(app, 'POST', '/tracks', { body: credited(200) })).status).toBe(201);
      expect(await pendingPages(store)).toBeGreaterThan(0);
      // with it, nothing is left to empty
      expect((await send(app, 'POST', '/tracks', { body: credited(200) })).status).toBe(201);
      await store.analyzeWritten();
      expect(await pendingPages(store)).toBe(0);
      const r = await store.query<{ n: number }>(`select count(*)::int as n from artists a cross join lateral tracks(a) t where a.id = '${ARTIST}'`);
      expect(r.rows).toEqual([{ n: 400 }]);
      expect(app.logged).toEqual([]);
    } finally {
      await store.close();
    }
  });
});

