import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { COPY_CSV } from '../../src/grammar/media.js';
import { COLLECTIONS } from '../../src/schema/catalog.js';
import { sourceIdsTable } from '../../src/schema/source-ids.js';
import type { App } from '../../src/server/app.js';
import { openApiDocument } from '../../src/server/openapi.js';
import type { Store } from '../../src/store/store.js';
import { STORE_KINDS, disposeStore } from '../support/stores.js';
import { L, R, appFor, seedFixture, send } from './support.js';

const T1 = '70000000-0000-4000-8000-000000000001';
const T2 = '70000000-0000-4000-8000-000000000002';
const T3 = '70000000-0000-4000-8000-000000000003';

/**
 * Source ids (issue 35, docs/service.md "Source ids"): the computed field `source_ids` of every
 * collection (PostgREST's computed fields: select, filters, order; never in `*`), written by our
 * service from POST, PATCH and PUT bodies and COPY columns into their side table.
 */
for (const { kind, make, skip } of STORE_KINDS) {
  describe.skipIf(skip)(`source ids over ${kind}${skip ? ' (SKIPPED: set CATALOG_TEST_DATABASE_URL)' : ''}`, () => {
    let store: Store & { drop?(): Promise<void> };
    let app: App & { logged: string[] };
    const ids = async (path: string) => (await send(app, 'GET', path)).json as Array<Record<string, unknown>>;
    const stored = async () =>
      (await store.query<{ collection: string; source: string; source_id: string; record: string }>(`select collection, source, source_id, record::text as record from ${sourceIdsTable(store.schema)} order by 1, 2, 3`)).rows;
    const post = (path: string, body: unknown, prefer = 'return=minimal', type?: string) =>
      send(app, 'POST', path, { body, headers: { Prefer: prefer, ...(type ? { 'Content-Type': type } : {}) } });

    beforeAll(async () => {
      store = await make();
      app = appFor(store);
    });
    beforeEach(async () => {
      await seedFixture(store);
      await store.query('delete from tracks');
    });
    afterAll(async () => {
      expect(app?.logged ?? []).toEqual([]);
      if (store) await disposeStore(store);
    });

    it('is a computed field: not in select=*, {} when none, and reads, filters and orders like a column', async () => {
      const star = (await ids(`/labels?id=eq.${L[0]}`))[0];
      expect(Object.keys(star)).toEqual(['id', 'name', 'created', 'updated']);
      expect(await ids(`/labels?select=id,source_ids&id=eq.${L[0]}`)).toEqual([{ id: L[0], source_ids: {} }]);
      const r = await post('/tracks', [
        { id: T1, track_title: 'One', source_ids: { legacy: '201', discogs: 'd-1' } },
        { id: T2, track_title: 'Two', source_ids: { legacy: '202' } },
        { id: T3, track_title: 'Three' },
      ].map((t) => ({ source_ids: null, ...t })));
      expect(r.status).toBe(201);
      expect(await ids('/tracks?select=id,source_ids&order=id')).toEqual([
        { id: T1, source_ids: { legacy: '201', discogs: 'd-1' } },
        { id: T2, source_ids: { legacy: '202' } },
        { id: T3, source_ids: {} },
      ]);
      expect(await ids('/tracks?select=id,legacy:source_ids->>legacy&order=source_ids->>legacy.desc.nullslast')).toEqual([
        { id: T2, legacy: '202' },
        { id: T1, legacy: '201' },
        { id: T3, legacy: null },
      ]);
      expect(await ids('/tracks?select=id&source_ids->>legacy=eq.201')).toEqual([{ id: T1 }]);
      expect(await ids('/tracks?select=id&source_ids->>legacy=in.(202,999)')).toEqual([{ id: T2 }]);
      expect(await ids('/tracks?select=id&source_ids->>legacy=not.eq.201&order=id')).toEqual([{ id: T2 }]);
      expect(await ids('/tracks?select=id&source_ids->>discogs=is.null&order=id')).toEqual([{ id: T2 }, { id: T3 }]);
      expect(await ids('/tracks?select=id&source_ids=cs.{"discogs":"d-1"}')).toEqual([{ id: T1 }]);
      expect(await ids('/tracks?select=id,source_ids::text&id=eq.' + T2)).toEqual([{ id: T2, source_ids: '{"legacy": "202"}' }]);
      // star and the field together, and inside an embed
      expect(Object.keys((await ids(`/tracks?select=*,source_ids&id=eq.${T1}`))[0]).at(-1)).toBe('source_ids');
      await store.query(`update releases set tracks = $1::text::jsonb where id = $2`, [JSON.stringify([{ id: T1, position: 1 }]), R[0]]);
      expect(await ids(`/releases?select=id,tracks(id,source_ids->>legacy)&id=eq.${R[0]}`)).toEqual([{ id: R[0], tracks: [{ id: T1, legacy: '201' }] }]);
      // unknown fields stay unknown
      expect((await send(app, 'GET', '/tracks?select=source_idz')).json.code).toBe('42703');
    });

    it('merges on write: given sources replace theirs, others stay, null removes one; PATCH of source_ids alone changes no column', async () => {
      await post('/tracks', { id: T1, track_title: 'One', source_ids: { legacy: '201', discogs: 'd-1' } });
      const before = (await store.query<{ updated: string }>('select updated::text as updated from tracks where id = $1', [T1])).rows[0].updated;
      const p = await send(app, 'PATCH', `/tracks?id=eq.${T1}`, { body: { source_ids: { legacy: '301', mb: 'm-1' } } });
      expect(p.status).toBe(204);
      expect(p.headers.get('content-range')).toBe('0-0/*');
      expect(await ids(`/tracks?select=source_ids&id=eq.${T1}`)).toEqual([{ source_ids: { legacy: '301', discogs: 'd-1', mb: 'm-1' } }]);
      expect((await store.query<{ updated: string }>('select updated::text as updated from tracks where id = $1', [T1])).rows[0].updated).toBe(before);
      const q = await send(app, 'PATCH', `/tracks?id=eq.${T1}&select=track_title,source_ids`, { body: { track_title: 'Uno', source_ids: { discogs: null } }, headers: { Prefer: 'return=representation' } });
      expect([q.status, q.json]).toEqual([200, [{ track_title: 'Uno', source_ids: { legacy: '301', mb: 'm-1' } }]]);
      // null or absent source_ids: no change
      await send(app, 'PATCH', `/tracks?id=eq.${T1}`, { body: { track_title: 'Eins', source_ids: null } });
      expect(await ids(`/tracks?select=source_ids&id=eq.${T1}`)).toEqual([{ source_ids: { legacy: '301', mb: 'm-1' } }]);
      // an upsert merges the same way, and its representation shows the merged ids
      const u = await post('/tracks?select=id,source_ids', [{ id: T1, track_title: 'Eins', source_ids: { legacy: '401' } }], 'resolution=merge-duplicates, return=representation');
      expect([u.status, u.json]).toEqual([200, [{ id: T1, source_ids: { legacy: '401', mb: 'm-1' } }]]);
      // PUT too
      const put = await send(app, 'PUT', `/tracks?id=eq.${T2}&select=id,source_ids`, { body: { id: T2, track_title: 'Two', source_ids: { legacy: '402' } }, headers: { Prefer: 'return=representation' } });
      expect([put.status, put.json]).toEqual([201, [{ id: T2, source_ids: { legacy: '402' } }]]);
    });

    it('takes them from COPY columns (JSON text, an unquoted empty cell: no change) and CSV cells', async () => {
      const copy = await post('/tracks', `id,track_title,source_ids\n${T1},One,"{""legacy"":""201""}"\n${T2},Two,\n`, 'resolution=merge-duplicates', COPY_CSV);
      expect(copy.status).toBe(201);
      expect(copy.headers.get('catalog-counts')).toBe('inserted=2, updated=0, unchanged=0');
      const csv = await post('/tracks?on_conflict=id', `id,track_title,source_ids\n${T2},Two,"{""legacy"":""202""}"\n${T3},Three,NULL\n`, 'resolution=merge-duplicates', 'text/csv');
      expect(csv.status).toBe(201);
      expect(await ids('/tracks?select=id,track_title,source_ids&order=id')).toEqual([
        { id: T1, track_title: 'One', source_ids: { legacy: '201' } },
        { id: T2, track_title: 'Two', source_ids: { legacy: '202' } },
        { id: T3, track_title: 'Three', source_ids: {} },
      ]);
      // a body without ids gets new ones, and its source ids go with them
      const fresh = await post('/genres?select=name,source_ids', `name,source_ids\nDub,"{""legacy"":""g7""}"\n`, 'return=representation', COPY_CSV);
      expect([fresh.status, fresh.json]).toEqual([201, [{ name: 'Dub', source_ids: { legacy: 'g7' } }]]);
      const json = await post('/genres?select=name,source_ids', [{ name: 'Ska', source_ids: { legacy: 'g8' } }], 'return=representation');
      expect([json.status, json.json]).toEqual([201, [{ name: 'Ska', source_ids: { legacy: 'g8' } }]]);
    });

    it('go with their record (and only theirs): a delete removes them', async () => {
      await post('/tracks', [{ id: T1, track_title: 'One', source_ids: { legacy: '1' } }, { id: T2, track_title: 'Two', source_ids: { legacy: '2' } }]);
      await send(app, 'PATCH', `/labels?id=eq.${L[0]}`, { body: { source_ids: { legacy: '1' } } });
      expect((await stored()).map((s) => `${s.collection}:${s.source_id}`)).toEqual(['labels:1', 'tracks:1', 'tracks:2']);
      expect((await send(app, 'DELETE', `/tracks?id=eq.${T1}`)).status).toBe(204);
      expect(await stored()).toEqual([
        { collection: 'labels', source: 'legacy', source_id: '1', record: L[0] },
        { collection: 'tracks', source: 'legacy', source_id: '2', record: T2 },
      ]);
      // a changed id takes them along; a truncate (which a foreign key would refuse) removes them
      expect((await send(app, 'PATCH', `/tracks?id=eq.${T2}`, { body: { id: T3 } })).status).toBe(204);
      expect(await ids(`/tracks?select=id,source_ids`)).toEqual([{ id: T3, source_ids: { legacy: '2' } }]);
      await store.query('truncate tracks');
      expect(await stored()).toEqual([{ collection: 'labels', source: 'legacy', source_id: '1', record: L[0] }]);
      // the source id is free again
      expect((await post('/tracks', [{ id: T1, track_title: 'One', source_ids: { legacy: '2' } }])).status).toBe(201);
    });

    it('a source id names one record: 409 23505 naming both, nothing written; it can move when its holder gives it up in the same body', async () => {
      await post('/tracks', [{ id: T1, track_title: 'One', source_ids: { legacy: '201' } }]);
      const taken = await post('/tracks', [{ id: T2, track_title: 'Two', source_ids: { legacy: '201' } }]);
      expect(taken.status).toBe(409);
      expect(taken.json).toMatchObject({ code: '23505', message: 'the source id legacy "201" already names another record of tracks' });
      expect(taken.json.details).toContain(T1);
      expect(taken.json.details).toContain(T2);
      expect(await ids('/tracks?select=id')).toEqual([{ id: T1 }]);
      // two rows of one body
      const twice = await post('/tracks', [{ id: T2, track_title: 'Two', source_ids: { x: '1' } }, { id: T3, track_title: 'Three', source_ids: { x: '1' } }]);
      expect([twice.status, twice.json.code]).toEqual([409, '23505']);
      expect(twice.json.details).toContain(T2);
      expect(twice.json.details).toContain(T3);
      // a PATCH of several records with one source id
      await post('/tracks', [{ id: T2, track_title: 'Two' }, { id: T3, track_title: 'Three' }]);
      const patch = await send(app, 'PATCH', `/tracks?id=in.(${T2},${T3})`, { body: { source_ids: { y: '1' } } });
      expect([patch.status, patch.json.code]).toEqual([409, '23505']);
      // moved: T1 gives 201 up while T2 takes it
      const moved = await post('/tracks', [{ id: T1, track_title: 'One', source_ids: { legacy: null } }, { id: T2, track_title: 'Two', source_ids: { legacy: '201' } }], 'resolution=merge-duplicates');
      expect(moved.status).toBe(200);
      expect(await ids('/tracks?select=id&source_ids->>legacy=eq.201')).toEqual([{ id: T2 }]);
    });

    it('refuses bad shapes with 400 23514 naming the problem, and writes nothing', async () => {
      const bad: Array<[unknown, string]> = [
        [['201'], 'source_ids: must be an object of source names and ids, not array'],
        [{ legacy: 201 }, 'source_ids.legacy: must be text (the id in that source), not number'],
        [{ legacy: '' }, 'source_ids.legacy: must not be empty (null removes the id)'],
        [{ 'no spaces': '1' }, 'source_ids.no spaces: is not a source name (letters, digits, _ or -, at most 64)'],
        [{ legacy: 'x'.repeat(513) }, 'source_ids.legacy: is longer than 512 characters'],
      ];
      for (const [value, message] of bad) {
        const r = await post('/tracks', [{ id: T1, track_title: 'One' }, { id: T2, track_title: 'Two', source_ids: value }].map((t) => ({ source_ids: null, ...t })));
        expect([r.status, r.json.code, r.json.message]).toEqual([400, '23514', message]);
        expect(r.json.details).toMatch(/^Failing row 2 of the body: /);
        const c = await post('/tracks', `id,track_title,source_ids\n${T1},One,\n${T2},Two,"${JSON.stringify(value).replace(/"/g, '""')}"\n`, 'resolution=merge-duplicates', COPY_CSV);
        expect([c.status, c.json.code, c.json.message, c.json.details?.slice(0, 27)]).toEqual([400, '23514', message, 'Failing row 2 of the body: ']);
      }
      const notJson = await post('/tracks', `id,track_title,source_ids\n${T1},One,{legacy}\n`, 'return=minimal', 'text/csv');
      expect([notJson.status, notJson.json.code, notJson.json.message]).toEqual([400, '23514', 'source_ids: is not JSON text (an object {"<source>": "<id>"})']);
      const patch = await send(app, 'PATCH', `/labels?id=eq.${L[0]}`, { body: { source_ids: 'x' } });
      expect([patch.status, patch.json.code]).toEqual([400, '23514']);
      expect(await ids('/tracks?select=id')).toEqual([]);
      expect(await stored()).toEqual([]);
    });

    it('is no collection: the root description, the paths and every record stay as they were', async () => {
      const doc = openApiDocument() as { paths: Record<string, unknown>; definitions: Record<string, { description?: string; properties: Record<string, unknown> }> };
      expect(Object.keys(doc.paths).sort()).toEqual(['/', ...COLLECTIONS.map((c) => `/${c}`), '/removals'].sort());
      for (const c of COLLECTIONS) {
        expect(doc.definitions[c].properties.source_ids).toBeUndefined();
        expect(doc.definitions[c].description).toContain('source_ids');
      }
      for (const path of ['/catalog_source_ids', `/${store.schema}`]) expect((await send(app, 'GET', path)).status).toBe(404);
      expect((await send(app, 'GET', '/rpc/source_ids')).json.code).toBe('PGRST202');
      // the table comment a PostgREST would show is the one the service shows
      const comment = (await store.query<{ c: string }>(`select obj_description(to_regclass($1), 'pg_class') as c`, [`${store.schema}.tracks`])).rows[0].c;
      expect(doc.definitions.tracks.description).toBe(comment);
    });
  });
}
