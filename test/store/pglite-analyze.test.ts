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
