import type { PGlite } from '@electric-sql/pglite';
import { describe, expect, it } from 'vitest';
import { PGliteStore } from '../../src/store/pglite.js';

/**
 * A stand-in PGlite (the fault cannot be produced on demand: a COPY that meets a full disk at one
 * particular moment leaves the session answering 24000 "cannot drop active portal" to everything).
 */
function fakeDb(state: 'broken' | 'fine' | 'aborted') {
  const calls: string[] = [];
  const fail = () => {
    if (state === 'aborted') throw Object.assign(new Error('Aborted()'), { name: 'RuntimeError' });
    throw Object.assign(new Error('cannot drop active portal ""'), { code: '24000' });
  };
  const db = {
    closed: false,
    calls,
    async query(sql: string) {
      calls.push(sql);
      if (state !== 'fine') fail();
      return { rows: [{ ok: 1 }], affectedRows: 1, fields: [] };
    },
    async transaction<T>(fn: (tx: unknown) => Promise<T>): Promise<T> {
      if (state !== 'fine') fail();
      return fn(db);
    },
    async close() {
      db.closed = true;
    },
  };
  return db;
}

const asPGlite = (db: unknown) => db as PGlite;

describe('a PGlite session a fault left unusable (stand-in engine: the fault cannot be produced on demand)', () => {
  it('is opened again after the request that met the fault; the next request works', async () => {
    const broken = fakeDb('broken');
    const fresh = fakeDb('fine');
    const store = new PGliteStore(asPGlite(broken), '/nonexistent-catalog-dir', async () => asPGlite(fresh));
    await expect(store.query('select count(*) from labels')).rejects.toMatchObject({ code: '24000' });
    expect(broken.closed).toBe(true);
    await expect(store.query('select count(*) from labels')).resolves.toMatchObject({ rows: [{ ok: 1 }] });
    expect(fresh.calls).toEqual(['select count(*) from labels']);
  });

  it('that cannot be opened again marks the store dead (a holder then stops)', async () => {
    const store = new PGliteStore(asPGlite(fakeDb('broken')), '/nonexistent-catalog-dir', async () => {
      throw new Error('PGlite failed to initialize properly');
    });
    await expect(store.query('select 1')).rejects.toMatchObject({ code: '24000' });
    await expect(store.died).resolves.toMatchObject({ message: 'PGlite failed to initialize properly' });
  });

  it('that aborted (RuntimeError) is dead at once', async () => {
    const store = new PGliteStore(asPGlite(fakeDb('aborted')), '/nonexistent-catalog-dir', async () => asPGlite(fakeDb('fine')));
    await expect(store.query('select 1')).rejects.toMatchObject({ message: 'Aborted()' });
    await expect(store.died).resolves.toMatchObject({ message: 'Aborted()' });
  });

  it('an ordinary error (a constraint) neither probes nor reopens', async () => {
    const db = fakeDb('fine');
    let reopened = 0;
    const store = new PGliteStore(asPGlite(db), '/nonexistent-catalog-dir', async () => (reopened++, asPGlite(db)));
    db.query = async (sql: string) => {
      db.calls.push(sql);
      throw Object.assign(new Error('duplicate key'), { code: '23505' });
    };
    await expect(store.query('insert …')).rejects.toMatchObject({ code: '23505' });
    expect(db.calls).toEqual(['insert …']);
    expect(reopened).toBe(0);
  });
});
