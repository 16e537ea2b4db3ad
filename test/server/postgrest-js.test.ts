import { PostgrestClient } from '@supabase/postgrest-js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { App } from '../../src/server/app.js';
import type { Store } from '../../src/store/store.js';
import { STORE_KINDS, disposeStore } from '../support/stores.js';
import { L, R, U, appFor, seedFixture } from './support.js';

/**
 * postgrest-js, unchanged, drives the server: its custom fetch hands each request to `handle`
 * (no sockets). If our wire behaviour differed from PostgREST's, the client would misparse it.
 */
for (const { kind, make, skip } of STORE_KINDS) {
  describe.skipIf(skip)(`@supabase/postgrest-js over ${kind}${skip ? ' (SKIPPED: set CATALOG_TEST_DATABASE_URL)' : ''}`, () => {
    let store: Store & { drop?(): Promise<void> };
    let app: App & { logged: string[] };
    let db: PostgrestClient<any, any, string>;

    beforeAll(async () => {
      store = await make();
      app = appFor(store);
      const fetch = (input: RequestInfo | URL, init?: RequestInit) => app.handle(new Request(input, init));
      db = new PostgrestClient('http://catalog.test', { fetch, schema: store.schema });
    });
    beforeEach(async () => {
      await seedFixture(store);
    });
    afterAll(async () => {
      expect(app?.logged ?? []).toEqual([]);
      if (store) await disposeStore(store);
    });

    it('filters: eq, in, ilike, is, gte, or, not, contains, filter()', async () => {
      const a = await db.from('releases').select('id').eq('release_title', 'Kind of Blue');
      expect(a.error).toBeNull();
      expect(a.data).toEqual([{ id: R[0] }]);
      const b = await db.from('releases').select('id').in('id', [R[0], R[1]]).order('id');
      expect(b.data).toEqual([{ id: R[0] }, { id: R[1] }]);
      const c = await db.from('releases').select('id').ilike('release_title', '%train%');
      expect(c.data).toHaveLength(2);
      const d = await db.from('releases').select('id').is('label_id', null);
      expect(d.data).toEqual([{ id: R[14] }]);
      const e = await db.from('releases').select('id').gte('release_date', '1965-01-01').lt('release_date', '1967-01-01');
      expect(e.data).toHaveLength(2);
      const f = await db.from('releases').select('id').or('label_id.is.null,release_date.lt.1957-01-01');
      expect(f.data).toHaveLength(2);
      const g = await db.from('releases').select('id').not('label_id', 'is', null);
      expect(g.data).toHaveLength(14);
      const h = await db.from('releases').select('id').contains('contracts', { format: 'cd' });
      expect(h.data).toHaveLength(7);
      const i = await db.from('releases').select('id').filter('contracts->>format', 'eq', 'vinyl');
      expect(i.data).toHaveLength(8);
      const j = await db.from('releases').select('id').textSearch('release_title', "'night' & 'train'", { config: 'english' });
      expect(j.data).toEqual([{ id: R[10] }]);
      const k = await db.from('releases').select('id').in('release_title', ['Verve Live, Vol. 1', 'Vol. 2: Live (Remastered)']);
      expect(k.data).toHaveLength(2);
    });

    it('embeds, inner joins, embedded filters and referenced-table order/limit', async () => {
      const a = await db.from('releases').select('id, label:labels(name)').eq('id', R[0]).single();
      expect(a.data).toEqual({ id: R[0], label: { name: 'Blue Note' } });
      const b = await db.from('releases').select('id, labels!inner(name)').eq('labels.name', 'Verve');
      expect(b.data).toHaveLength(6);
      const c = await db
        .from('labels')
        .select('name, releases(release_title)')
        .eq('id', L[0])
        .order('release_title', { referencedTable: 'releases', ascending: false })
        .limit(2, { referencedTable: 'releases' })
        .single();
      expect(c.data).toEqual({ name: 'Blue Note', releases: [{ release_title: 'Vol. 2: Live (Remastered)' }, { release_title: 'Speak No Evil' }] });
    });

    it('order and range', async () => {
      const a = await db.from('releases').select('id').order('release_date', { ascending: false, nullsFirst: false }).range(0, 2);
      expect(a.status).toBe(200);
      expect(a.data).toEqual([{ id: R[13] }, { id: R[12] }, { id: R[11] }]);
      const b = await db.from('releases').select('id').order('id').range(13, 20);
      expect(b.data).toEqual([{ id: R[13] }, { id: R[14] }]);
    });

    it('counts: exact with 206, head-only count, planned', async () => {
      const a = await db.from('releases').select('id', { count: 'exact' }).order('id').range(0, 4);
      expect(a.status).toBe(206);
      expect(a.count).toBe(15);
      expect(a.data).toHaveLength(5);
      const b = await db.from('releases').select('*', { count: 'exact', head: true }).is('label_id', null);
      expect(b.count).toBe(1);
      expect(b.data).toBeNull();
      const c = await db.from('releases').select('id', { count: 'planned' }).limit(1);
      expect(c.count).toBeGreaterThan(0);
    });

    it('insert, update, delete with select()', async () => {
      const a = await db.from('labels').insert({ id: U, name: 'JS' }).select().single();
      expect(a.status).toBe(201);
      expect(a.data).toMatchObject({ id: U, name: 'JS' });
      const b = await db.from('labels').update({ name: 'JS2' }).eq('id', U).select('name');
      expect(b.data).toEqual([{ name: 'JS2' }]);
      const c = await db.from('labels').delete().eq('id', U).select('id');
      expect(c.data).toEqual([{ id: U }]);
      const d = await db.from('labels').insert([{ name: 'a' }, { name: 'b' }]);
      expect([d.status, d.error]).toEqual([201, null]);
    });

    it('upsert: merge and ignore duplicates, onConflict', async () => {
      const a = await db.from('labels').upsert([{ id: L[0], name: 'Merged' }, { id: U, name: 'New' }]).select('name');
      expect(a.status).toBe(201);
      expect(a.data?.map((x) => x.name).sort()).toEqual(['Merged', 'New']);
      const b = await db.from('labels').upsert({ id: L[1], name: 'Ignored' }, { ignoreDuplicates: true, onConflict: 'id' }).select();
      expect(b.data).toEqual([]);
      const c = await db.from('labels').upsert({ id: L[1], name: 'Merged2' }, { onConflict: 'id' }).select('name');
      expect([c.status, c.data]).toEqual([200, [{ name: 'Merged2' }]]);
    });

    it('csv()', async () => {
      const a = await db.from('labels').select('name').order('name').csv();
      expect(a.data).toBe('name\n"Blue Note"\n"Impulse, Records"\nVerve');
    });

    it('single / maybeSingle and errors come back as PostgREST errors', async () => {
      const a = await db.from('releases').select('id').eq('id', U).maybeSingle();
      expect([a.error, a.data]).toEqual([null, null]);
      const b = await db.from('releases').select('id').single();
      expect(b.error?.code).toBe('PGRST116');
      expect(b.status).toBe(406);
      const c = await db.from('releases').select('nope');
      expect(c.error).toMatchObject({ code: '42703', message: 'column releases.nope does not exist' });
      const d = await db.from('labels').insert({ id: L[0], name: 'dup' });
      expect(d.error?.code).toBe('23505');
      expect(d.status).toBe(409);
    });

    it('a foreign schema name is refused with PGRST106', async () => {
      const other = new PostgrestClient('http://catalog.test', {
        fetch: (input: RequestInfo | URL, init?: RequestInit) => app.handle(new Request(input, init)),
        schema: 'elsewhere',
      });
      const r = await other.from('labels').select('id');
      expect(r.status).toBe(406);
      expect(r.error?.code).toBe('PGRST106');
    });
  });
}
