import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { COPY_CSV } from '../../src/grammar/media.js';
import type { App } from '../../src/server/app.js';
import type { Store } from '../../src/store/store.js';
import { STORE_KINDS, disposeStore } from '../support/stores.js';
import { G, L, R, S, appFor, seedFixture, send } from './support.js';

const T1 = '70000000-0000-4000-8000-000000000001';
const T2 = '70000000-0000-4000-8000-000000000002';
const MERGE = 'resolution=merge-duplicates';

/**
 * `Prefer: match=` (issue 35, docs/service.md "Bulk extensions"): the service decides each row's
 * id where the write happens, from the row's alternatives in order — a source id, or a natural key
 * compared normalised as the client compares it — and the body's id is only a proposal for a new
 * record.
 */
for (const { kind, make, skip } of STORE_KINDS) {
  describe.skipIf(skip)(`match= over ${kind}${skip ? ' (SKIPPED: set CATALOG_TEST_DATABASE_URL)' : ''}`, () => {
    let store: Store & { drop?(): Promise<void> };
    let app: App & { logged: string[] };
    const post = (path: string, body: unknown, prefer: string, type?: string) => send(app, 'POST', path, { body, headers: { Prefer: prefer, ...(type ? { 'Content-Type': type } : {}) } });
    const rows = async (sql: string, params: unknown[] = []) => (await store.query<Record<string, unknown>>(sql, params)).rows;

    beforeAll(async () => {
      store = await make();
      app = appFor(store);
    });
    beforeEach(async () => {
      await seedFixture(store);
      await store.query('delete from tracks');
      await store.query(`insert into tracks (id, isrc_code, track_title) values ($1, 'USABC1600121', 'Stored')`, [T1]);
    });
    afterAll(async () => {
      expect(app?.logged ?? []).toEqual([]);
      if (store) await disposeStore(store);
    });

    it('an ISRC matches without separators and case: the stored id wins over the proposed one', async () => {
      const r = await post('/tracks?select=id,isrc_code,track_title', [{ id: randomUUID(), isrc_code: 'us-abc-16-00121', track_title: 'Sent' }], `${MERGE}, match=isrc_code, return=representation`);
      expect(r.status).toBe(200);
      expect(r.json).toEqual([{ id: T1, isrc_code: 'us-abc-16-00121', track_title: 'Sent' }]);
      expect(r.headers.get('catalog-counts')).toBe('inserted=0, updated=1, unchanged=0, collapsed=0');
      expect(r.headers.get('preference-applied')).toBe('resolution=merge-duplicates, match=isrc_code, return=representation');
      expect(await rows('select count(*)::int as n from tracks')).toEqual([{ n: 1 }]);
      // and the other way round: a stored ISRC written with separators, a clean one sent
      const back = await post('/tracks?select=id', [{ id: randomUUID(), isrc_code: 'USABC1600121', track_title: 'Again' }], `${MERGE}, match=isrc_code, return=representation`);
      expect(back.json).toEqual([{ id: T1 }]);
    });

    it('names match by their name key (case, accents, runs of spaces), UPCs without spaces and hyphens, several columns joined', async () => {
      const label = await post('/labels?select=id,name', [{ id: randomUUID(), name: ' Blue  Note' }], `${MERGE}, match=name, return=representation`);
      expect(label.json).toEqual([{ id: L[0], name: ' Blue  Note' }]);
      await store.query(`update releases set upc_code = '012345678905' where id = $1`, [R[2]]);
      const upc = await post('/releases?select=id', [{ id: randomUUID(), upc_code: '0 12345-67890 5', release_title: 'x' }], `${MERGE}, match=upc_code, return=representation`);
      expect(upc.json).toEqual([{ id: R[2] }]);
      const upcBack = await post('/releases?select=id', [{ id: randomUUID(), upc_code: '012345678905', release_title: 'x' }], `${MERGE}, match=upc_code, return=representation`);
      expect(upcBack.json).toEqual([{ id: R[2] }]);
      const cat = await post('/releases?select=id', [{ id: randomUUID(), catalog_number: ' cat-7 ', release_title: 'y' }], `${MERGE}, match=catalog_number, return=representation`);
      expect(cat.json).toEqual([{ id: R[6] }]);
      const sub = await post('/subgenres?select=id', [{ id: randomUUID(), genre: 'JAZZ', name: ' hard  bop' }], `${MERGE}, match=genre+name, return=representation`);
      expect(sub.json).toEqual([{ id: S[0] }]);
      const other = await post('/subgenres?select=id', [{ id: randomUUID(), genre: 'Bossa Nova', name: 'Hard Bop' }], `${MERGE}, match=genre+name, return=representation`);
      expect(other.json[0].id).not.toBe(S[0]);
      const genre = await post('/genres?select=id', [{ id: randomUUID(), name: 'bossa nóva' }], `${MERGE}, match=name, return=representation`);
      expect(genre.json).toEqual([{ id: G[1] }]);
    });

    it('a source id matches exactly; alternatives are tried in order, the first that names a record decides', async () => {
      await store.query(`insert into tracks (id, isrc_code, track_title) values ($1, 'GBXYZ0000002', 'Other')`, [T2]);
      await send(app, 'PATCH', `/tracks?id=eq.${T2}`, { body: { source_ids: { legacy: '201' } } });
      const row = { id: randomUUID(), isrc_code: 'USABC1600121', track_title: 'Sent', source_ids: { legacy: '201' } };
      const bySource = await post('/tracks?select=id,isrc_code', [row], `${MERGE}, match=source_ids.legacy|isrc_code, return=representation`);
      expect([bySource.status, bySource.json]).toEqual([200, [{ id: T2, isrc_code: 'USABC1600121' }]]);
      await store.query(`update tracks set isrc_code = 'GBXYZ0000002' where id = $1`, [T2]);
      // the ISRC first: the row is T1, which cannot take legacy 201 from T2 (409, nothing written)
      const byIsrc = await post('/tracks?select=id', [row], `${MERGE}, match=isrc_code|source_ids.legacy, return=representation`);
      expect([byIsrc.status, byIsrc.json.code]).toEqual([409, '23505']);
      expect(byIsrc.json.details).toContain(T1);
      // an exact comparison: no normalisation of source ids
      const near = await post('/tracks?select=id', [{ ...row, id: randomUUID(), isrc_code: null, source_ids: { legacy: ' 201' } }], `${MERGE}, match=source_ids.legacy, return=representation`);
      expect(near.status).toBe(201);
      // releases: UPC first, else catalog number
      await store.query(`update releases set upc_code = '111' where id = $1`, [R[0]]);
      const both = { id: randomUUID(), upc_code: '111', catalog_number: 'CAT-2', release_title: 'z' };
      expect((await post('/releases?select=id', [both], `${MERGE}, match=upc_code|catalog_number, return=representation`)).json).toEqual([{ id: R[0] }]);
      await store.query(`update releases set upc_code = '111', catalog_number = 'CAT-1' where id = $1`, [R[0]]);
      expect((await post('/releases?select=id', [both], `${MERGE}, match=catalog_number|upc_code, return=representation`)).json).toEqual([{ id: R[1] }]);
    });

    it('an empty key never matches; a key several records share picks the oldest (then the lowest id)', async () => {
      await store.query(`insert into tracks (id, isrc_code, track_title) values ($1, '', 'Empty')`, [T2]);
      const empty = await post('/tracks?select=id', [{ id: randomUUID(), isrc_code: ' ', track_title: 'New' }], `${MERGE}, match=isrc_code, return=representation`);
      expect(empty.status).toBe(201);
      expect(empty.json[0].id).not.toBe(T2);
      const dup = ['70000000-0000-4000-8000-00000000000b', '70000000-0000-4000-8000-00000000000a', '70000000-0000-4000-8000-00000000000c'];
      await store.query(`insert into tracks (id, isrc_code, created) values ($1, 'FRZZZ0000001', '2020-01-02'), ($2, 'FRZZZ0000001', '2020-01-02'), ($3, 'FRZZZ0000001', '2019-01-01')`, dup);
      expect((await post('/tracks?select=id', [{ id: randomUUID(), isrc_code: 'FRZZZ0000001' }], `${MERGE}, match=isrc_code, return=representation`)).json).toEqual([{ id: dup[2] }]);
      await store.query(`delete from tracks where id = $1`, [dup[2]]);
      expect((await post('/tracks?select=id', [{ id: randomUUID(), isrc_code: 'FRZZZ0000001' }], `${MERGE}, match=isrc_code, return=representation`)).json).toEqual([{ id: dup[1] }]);
    });

    it('rows of one body that end on one record collapse to the last; rows match earlier rows of the body too', async () => {
      const a = randomUUID();
      const r = await post(
        '/tracks?select=id,isrc_code,track_title,source_ids',
        [
          { id: a, isrc_code: 'DEAAA0000001', track_title: 'first', source_ids: { legacy: '1' } },
          { id: randomUUID(), isrc_code: 'de-aaa-00-00001', track_title: 'second', source_ids: { legacy: '1' } },
          // the same record again through another alternative: its source id, given by the rows before
          { id: randomUUID(), isrc_code: 'DEAAA0000009', track_title: 'third', source_ids: { legacy: '1' } },
          { id: randomUUID(), isrc_code: 'usabc1600121', track_title: 'stored', source_ids: null },
        ],
        `${MERGE}, match=isrc_code|source_ids.legacy, return=representation`,
      );
      expect(r.status).toBe(201);
      expect(r.headers.get('catalog-counts')).toBe('inserted=1, updated=1, unchanged=0, collapsed=2');
      expect(r.json).toHaveLength(2);
      expect(r.json).toContainEqual({ id: a, isrc_code: 'DEAAA0000009', track_title: 'third', source_ids: { legacy: '1' } });
      expect(r.json).toContainEqual({ id: T1, isrc_code: 'usabc1600121', track_title: 'stored', source_ids: {} });
      expect(await rows('select count(*)::int as n from tracks')).toEqual([{ n: 2 }]);
    });

    it('counts stay right with unchanged=skip, in JSON and COPY bodies, with or without ids', async () => {
      const body = [
        { isrc_code: 'USABC1600121', track_title: 'Stored' },
        { isrc_code: 'NLAAA0000001', track_title: 'New one' },
        { isrc_code: 'NLAAA0000002', track_title: 'New two' },
      ];
      const prefer = `${MERGE}, unchanged=skip, match=isrc_code`;
      const first = await post('/tracks', body, prefer);
      expect([first.status, first.headers.get('catalog-counts')]).toEqual([201, 'inserted=2, updated=0, unchanged=1, collapsed=0']);
      const again = await post('/tracks', body.map((b) => ({ id: randomUUID(), ...b })), prefer);
      expect([again.status, again.headers.get('catalog-counts')]).toEqual([200, 'inserted=0, updated=0, unchanged=3, collapsed=0']);
      const csv = `id,isrc_code,track_title\n${randomUUID()},nl-aaa-00-00001,New one\n${randomUUID()},NLAAA0000002,Changed\n${randomUUID()},NLAAA0000003,Third\n${randomUUID()},NLAAA0000003,Third again\n`;
      const copy = await post('/tracks', csv, prefer, COPY_CSV);
      expect([copy.status, copy.headers.get('catalog-counts')]).toEqual([201, 'inserted=1, updated=2, unchanged=0, collapsed=1']);
      const noIds = await post('/tracks', 'isrc_code,track_title\nNLAAA0000003,Third again\nNLAAA0000004,Fourth\n', prefer, COPY_CSV);
      expect([noIds.status, noIds.headers.get('catalog-counts')]).toEqual([201, 'inserted=1, updated=0, unchanged=1, collapsed=0']);
      const all = await rows(`select isrc_code, track_title from tracks order by isrc_code`);
      expect(all).toEqual([
        { isrc_code: 'NLAAA0000002', track_title: 'Changed' },
        { isrc_code: 'NLAAA0000003', track_title: 'Third again' },
        { isrc_code: 'NLAAA0000004', track_title: 'Fourth' },
        { isrc_code: 'USABC1600121', track_title: 'Stored' },
        { isrc_code: 'nl-aaa-00-00001', track_title: 'New one' },
      ]);
    });

    it('ignore-duplicates leaves a matched record alone; without a resolution match= does not apply', async () => {
      const ignore = await post('/tracks', [{ id: randomUUID(), isrc_code: 'USABC1600121', track_title: 'Not written' }], 'resolution=ignore-duplicates, match=isrc_code');
      expect([ignore.status, ignore.headers.get('catalog-counts')]).toEqual([201, 'inserted=0, updated=0, unchanged=1, collapsed=0']);
      expect(await rows('select track_title from tracks')).toEqual([{ track_title: 'Stored' }]);
      const plain = await post('/tracks', [{ id: randomUUID(), isrc_code: 'USABC1600121', track_title: 'Twice' }], 'match=isrc_code, handling=strict');
      expect([plain.status, plain.headers.get('preference-applied')]).toEqual([201, 'handling=strict']);
      expect(await rows('select count(*)::int as n from tracks')).toEqual([{ n: 2 }]);
    });

    it('refuses a match= it cannot apply: bad syntax, unknown columns, another conflict target', async () => {
      const bad = await post('/tracks', [{ isrc_code: 'X' }], `${MERGE}, match=isrc_code|`);
      expect([bad.status, bad.json.code]).toEqual([400, 'PGRST100']);
      expect(bad.json.message).toBe('"failed to parse Prefer match (isrc_code|)"');
      expect((await post('/tracks', [{ isrc_code: 'X' }], `${MERGE}, match=source_ids.no way`)).json.code).toBe('PGRST100');
      const unknown = await post('/tracks', [{ isrc_code: 'X' }], `${MERGE}, match=isrc`);
      expect([unknown.status, unknown.json.code, unknown.json.message]).toEqual([400, '42703', 'column tracks.isrc does not exist']);
      expect((await post('/tracks?on_conflict=isrc_code', [{ isrc_code: 'X' }], `${MERGE}, match=isrc_code`)).json.code).toBe('PGRST100');
      expect(await rows('select count(*)::int as n from tracks')).toEqual([{ n: 1 }]);
    });
  });
}
