import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { App } from '../../src/server/app.js';
import type { Store } from '../../src/store/store.js';
import { STORE_KINDS, disposeStore } from '../support/stores.js';
import { L, R, U, appFor, seedFixture, send } from './support.js';

const U2 = '99999999-0000-4000-8000-000000000002';

/** HTTP spec for writes (reference §7 and rows 43–69 of the §13 checklist), on both stores. */
for (const { kind, make, skip } of STORE_KINDS) {
  describe.skipIf(skip)(`writes over ${kind}${skip ? ' (SKIPPED: set CATALOG_TEST_DATABASE_URL)' : ''}`, () => {
    let store: Store & { drop?(): Promise<void> };
    let app: App & { logged: string[] };
    const req = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => send(app, method, path, { body, headers });
    const labelCount = async () => Number((await store.query<{ n: string }>('select count(*)::text as n from labels')).rows[0].n);
    const labelName = async (id: string) => (await store.query<{ name: string }>('select name from labels where id = $1', [id])).rows[0]?.name;

    beforeAll(async () => {
      store = await make();
      app = appFor(store);
    });
    beforeEach(async () => {
      await seedFixture(store);
    });
    afterAll(async () => {
      expect(app?.logged ?? []).toEqual([]);
      if (store) await disposeStore(store);
    });

    describe('POST', () => {
      it('43: minimal → 201, empty body, no Content-Type, */*, no Location', async () => {
        const r = await req('POST', '/labels', { id: U, name: 'X' });
        expect(r.status).toBe(201);
        expect(r.text).toBe('');
        expect(r.headers.get('content-type')).toBeNull();
        expect(r.headers.get('content-range')).toBe('*/*');
        expect(r.headers.get('location')).toBeNull();
        expect(await labelName(U)).toBe('X');
      });

      it('44: return=representation → 201 array of the inserted row', async () => {
        const r = await req('POST', '/labels', { id: U, name: 'X' }, { Prefer: 'return=representation' });
        expect(r.status).toBe(201);
        expect(r.json).toHaveLength(1);
        expect(r.json[0]).toMatchObject({ id: U, name: 'X' });
        expect(Object.keys(r.json[0])).toEqual(['id', 'name', 'created', 'updated']);
        expect(r.headers.get('preference-applied')).toBe('return=representation');
        expect(r.headers.get('location')).toBeNull();
      });

      it('45: return=headers-only → Location of the one row', async () => {
        const r = await req('POST', '/labels', { id: U, name: 'X' }, { Prefer: 'return=headers-only' });
        expect(r.status).toBe(201);
        expect(r.headers.get('location')).toBe(`/labels?id=eq.${U}`);
        expect(r.headers.get('preference-applied')).toBe('return=headers-only');
        expect(r.text).toBe('');
        const two = await req('POST', '/labels', [{ name: 'a' }, { name: 'b' }], { Prefer: 'return=headers-only' });
        expect(two.headers.get('location')).toBeNull();
      });

      it('46: select + count on a write', async () => {
        const r = await req('POST', '/labels?select=name', { id: U, name: 'X' }, { Prefer: 'return=representation, count=exact' });
        expect(r.status).toBe(201);
        expect(r.json).toEqual([{ name: 'X' }]);
        expect(r.headers.get('content-range')).toBe('*/1');
        expect(r.headers.get('preference-applied')).toBe('return=representation, count=exact');
      });

      it('our return=none is return=minimal', async () => {
        const r = await req('POST', '/labels', { id: U, name: 'X' }, { Prefer: 'return=none, handling=strict' });
        expect(r.status).toBe(201);
        expect(r.text).toBe('');
      });

      it('47: invalid or empty JSON → PGRST102', async () => {
        const expected = { code: 'PGRST102', details: null, hint: null, message: 'Empty or invalid json' };
        expect((await req('POST', '/labels', '}{ x = 2')).json).toEqual(expected);
        const empty = await req('POST', '/labels', '');
        expect([empty.status, empty.json]).toEqual([400, expected]);
        expect((await req('POST', '/labels', '  {"name":"ws"}  ')).status).toBe(201);
      });

      it('48: non-uniform keys → PGRST102', async () => {
        const r = await req('POST', '/labels', [{ name: 'a' }, { name: 'b', id: U }]);
        expect(r.status).toBe(400);
        expect(r.json).toEqual({ code: 'PGRST102', details: null, hint: null, message: 'All object keys must match' });
      });

      it('49: unknown key → PGRST204', async () => {
        const r = await req('POST', '/labels', { nope: 1 });
        expect(r.status).toBe(400);
        expect(r.json).toEqual({ code: 'PGRST204', details: null, hint: null, message: "Could not find the 'nope' column of 'labels' in the schema cache" });
      });

      it('50: duplicate key → 409 23505', async () => {
        const r = await req('POST', '/labels', { id: L[0], name: 'dup' });
        expect(r.status).toBe(409);
        expect(r.json.code).toBe('23505');
        expect(r.json.message).toBe('duplicate key value violates unique constraint "labels_pkey"');
        expect(r.json.details).toBe(`Key (id)=(${L[0]}) already exists.`);
      });

      it('51: unknown FK → 409 23503', async () => {
        const r = await req('POST', '/releases', { release_title: 'x', label_id: U });
        expect(r.status).toBe(409);
        expect(r.json.code).toBe('23503');
        expect(r.json.message).toBe('insert or update on table "releases" violates foreign key constraint "releases_label_id_fkey"');
      });

      it('52 (analogue): NOT NULL violation → 400 23502 (release_title is nullable in our schema; created is not)', async () => {
        const r = await req('POST', '/releases', { label_id: L[0], created: null });
        expect(r.status).toBe(400);
        expect(r.json.code).toBe('23502');
        const bad = await req('POST', '/releases', { release_date: 'someday' });
        expect([bad.status, bad.json.code]).toEqual([400, '22007']);
      });

      it('absent columns take their defaults; {} and [{},{}] insert default rows; [] inserts nothing', async () => {
        const r = await req('POST', '/releases?select=release_title,is_compilation,release_date', { catalog_number: 'C' }, { Prefer: 'return=representation' });
        expect(r.json).toEqual([{ release_title: '', is_compilation: false, release_date: null }]);
        const before = await labelCount();
        expect((await req('POST', '/labels', {})).status).toBe(201);
        expect((await req('POST', '/labels', [{}, {}])).status).toBe(201);
        const none = await req('POST', '/labels', [], { Prefer: 'return=representation' });
        expect([none.status, none.json]).toEqual([201, []]);
        expect(await labelCount()).toBe(before + 3);
      });

      it('bulk POST of 1,000 rows is one statement and returns them in order', async () => {
        const rows = Array.from({ length: 1000 }, (_, i) => ({ name: `bulk ${i}`, created: '2020-01-01T00:00:00Z' }));
        const r = await req('POST', '/labels?select=name', rows, { Prefer: 'return=representation, count=exact' });
        expect(r.status).toBe(201);
        expect(r.headers.get('content-range')).toBe('*/1000');
        expect(r.json[999]).toEqual({ name: 'bulk 999' });
      });

      it('?columns= picks keys, ignores extras, absent → NULL or DEFAULT with missing=default', async () => {
        const r = await req('POST', '/releases?columns=catalog_number,release_title&select=catalog_number,release_title,vinyl', [
          { catalog_number: 'A', release_title: 'T', vinyl: 'ignored' },
          { catalog_number: 'B' },
        ], { Prefer: 'return=representation' });
        expect(r.status).toBe(201);
        expect(r.json).toEqual([
          { catalog_number: 'A', release_title: 'T', vinyl: '' },
          { catalog_number: 'B', release_title: null, vinyl: '' },
        ]);
        const d = await req('POST', '/releases?columns=catalog_number,release_title&select=release_title', [{ catalog_number: 'C' }], {
          Prefer: 'return=representation, missing=default',
        });
        expect(d.json).toEqual([{ release_title: '' }]);
        expect(d.headers.get('preference-applied')).toBe('missing=default, return=representation');
        expect((await req('POST', '/labels?columns=nope', [{ name: 'a' }])).json.code).toBe('PGRST204');
        expect((await req('POST', '/labels?columns=', [{ name: 'a' }])).json.code).toBe('PGRST100');
      });

      it('missing=default: absent keys per row take the DEFAULT, explicit nulls stay null', async () => {
        const r = await req('POST', '/releases?columns=catalog_number,release_title,release_date&select=catalog_number,release_title', [
          { catalog_number: 'A', release_title: null },
          { catalog_number: 'B' },
        ], { Prefer: 'return=representation, missing=default' });
        expect(r.json).toEqual([{ catalog_number: 'A', release_title: null }, { catalog_number: 'B', release_title: '' }]);
      });

      it('CSV body: header line, NULL, empty string, ragged lines', async () => {
        const csv = 'catalog_number,release_title,release_date\nX1,"Hello, World",2001-01-01\nX2,NULL,\n';
        const r = await send(app, 'POST', '/releases?select=catalog_number,release_title', {
          body: csv,
          headers: { 'Content-Type': 'text/csv', Prefer: 'return=representation' },
        });
        // An empty field is an empty string: for a date that is a 22007 error in PostgREST too.
        expect([r.status, r.json.code]).toEqual([400, '22007']);
        const ok = await send(app, 'POST', '/releases?select=catalog_number,release_title,release_version&order=catalog_number', {
          body: 'catalog_number,release_title,release_version\nX1,"Hello, World",\nX2,NULL,"NULL"',
          headers: { 'Content-Type': 'text/csv', Prefer: 'return=representation' },
        });
        expect(ok.json).toEqual([
          { catalog_number: 'X1', release_title: 'Hello, World', release_version: '' },
          { catalog_number: 'X2', release_title: null, release_version: 'NULL' },
        ]);
        const ragged = await send(app, 'POST', '/labels', { body: 'name\na,b', headers: { 'Content-Type': 'text/csv' } });
        expect(ragged.json).toEqual({ code: 'PGRST102', details: null, hint: null, message: 'All lines must have same number of fields' });
      });

      it('CSV body with missing=default (our import extension): empty unquoted cells take the DEFAULT', async () => {
        const r = await send(app, 'POST', '/releases?select=catalog_number,release_title,release_date', {
          body: 'catalog_number,release_title,release_date\nY1,,\nY2,"",2001-02-03',
          headers: { 'Content-Type': 'text/csv', Prefer: 'return=representation, missing=default' },
        });
        expect(r.status).toBe(201);
        expect(r.json).toEqual([
          { catalog_number: 'Y1', release_title: '', release_date: null },
          { catalog_number: 'Y2', release_title: '', release_date: '2001-02-03' },
        ]);
      });

      it('form bodies, and other Content-Types are refused', async () => {
        const r = await send(app, 'POST', '/labels?select=name', { body: 'name=Form+Label', headers: { 'Content-Type': 'application/x-www-form-urlencoded', Prefer: 'return=representation' } });
        expect(r.json).toEqual([{ name: 'Form Label' }]);
        const x = await send(app, 'POST', '/labels', { body: '<x/>', headers: { 'Content-Type': 'application/xml' } });
        expect(x.json).toEqual({ code: 'PGRST102', details: null, hint: null, message: 'Content-Type not acceptable: application/xml' });
      });

      it('representation as CSV and with embeds', async () => {
        const c = await req('POST', '/labels?select=name', { name: 'Csv, Inc' }, { Prefer: 'return=representation', Accept: 'text/csv' });
        expect(c.headers.get('content-type')).toBe('text/csv; charset=utf-8');
        expect(c.text).toBe('name\n"Csv, Inc"');
        const e = await req('POST', '/releases?select=catalog_number,labels(name)', { catalog_number: 'E', label_id: L[1] }, { Prefer: 'return=representation' });
        expect(e.json).toEqual([{ catalog_number: 'E', labels: { name: 'Verve' } }]);
      });

      it('53/54/55: upserts — merge 200 when all updated, 201 when any inserted; ignore keeps the row', async () => {
        const m = await req('POST', '/labels', [{ id: L[0], name: 'n' }], { Prefer: 'resolution=merge-duplicates, return=representation' });
        expect(m.status).toBe(200);
        expect(m.headers.get('preference-applied')).toBe('resolution=merge-duplicates, return=representation');
        expect(await labelName(L[0])).toBe('n');
        const mixed = await req('POST', '/labels', [{ id: L[0], name: 'm' }, { id: U, name: 'new' }], { Prefer: 'resolution=merge-duplicates' });
        expect(mixed.status).toBe(201);
        expect(await labelName(U)).toBe('new');
        const ign = await req('POST', '/labels', [{ id: L[1], name: 'n' }], { Prefer: 'resolution=ignore-duplicates, return=representation' });
        expect([ign.status, ign.json]).toEqual([201, []]);
        expect(await labelName(L[1])).toBe('Verve');
        const empty = await req('POST', '/labels', [], { Prefer: 'resolution=merge-duplicates' });
        expect(empty.status).toBe(200);
      });

      it('on_conflict names the conflict target; a non-unique one is 42P10; without resolution it is a plain insert', async () => {
        const ok = await req('POST', '/labels?on_conflict=id', [{ id: L[0], name: 'oc' }], { Prefer: 'resolution=merge-duplicates' });
        expect(ok.status).toBe(200);
        const bad = await req('POST', '/labels?on_conflict=name', [{ name: 'x' }], { Prefer: 'resolution=merge-duplicates' });
        expect([bad.status, bad.json.code]).toEqual([400, '42P10']);
        const plain = await req('POST', '/labels?on_conflict=id', [{ id: L[0], name: 'oc' }]);
        expect(plain.status).toBe(409);
        expect((await req('POST', '/labels?on_conflict=nope', [{ name: 'x' }], { Prefer: 'resolution=merge-duplicates' })).json.code).toBe('42703');
      });

      it('56: singular Accept with 2 rows → 406 and nothing is inserted', async () => {
        const before = await labelCount();
        const r = await req('POST', '/labels', [{ id: U, name: 'a' }, { id: U2, name: 'b' }], { Accept: 'application/vnd.pgrst.object+json' });
        expect(r.status).toBe(406);
        expect(r.json).toEqual({ code: 'PGRST116', details: 'The result contains 2 rows', hint: null, message: 'JSON object requested, multiple (or no) rows returned' });
        expect(await labelCount()).toBe(before);
        const one = await req('POST', '/labels', { id: U, name: 'a' }, { Accept: 'application/vnd.pgrst.object+json', Prefer: 'return=representation' });
        expect(one.status).toBe(201);
        expect(one.json).toMatchObject({ id: U, name: 'a' });
      });

      it('413 above the body limit, with a PostgREST-shaped body', async () => {
        const small = appFor(store, { maxBodyBytes: 100 });
        const r = await send(small, 'POST', '/labels', { body: Array.from({ length: 20 }, () => ({ name: 'xxxxxxxxxx' })) });
        expect(r.status).toBe(413);
        expect(r.json.code).toBe('PGRST413');
        expect(Object.keys(r.json).sort()).toEqual(['code', 'details', 'hint', 'message']);
      });
    });

    describe('PATCH', () => {
      it('57/58: 204 with 0-0/*; representation 200 array', async () => {
        const r = await req('PATCH', `/labels?id=eq.${L[0]}`, { name: 'Y' });
        expect(r.status).toBe(204);
        expect(r.headers.get('content-type')).toBeNull();
        expect(r.headers.get('content-range')).toBe('0-0/*');
        expect(await labelName(L[0])).toBe('Y');
        const rep = await req('PATCH', `/labels?id=eq.${L[0]}`, { name: 'Z' }, { Prefer: 'return=representation' });
        expect(rep.status).toBe(200);
        expect(rep.json).toHaveLength(1);
        expect(rep.json[0].name).toBe('Z');
        expect(rep.headers.get('content-range')).toBe('0-0/*');
      });

      it('59: no match → 204 */*, representation 200 []', async () => {
        const r = await req('PATCH', `/labels?id=eq.${U}`, { name: 'Y' });
        expect([r.status, r.headers.get('content-range')]).toEqual([204, '*/*']);
        const rep = await req('PATCH', `/labels?id=eq.${U}`, { name: 'Y' }, { Prefer: 'return=representation' });
        expect([rep.status, rep.json]).toEqual([200, []]);
      });

      it('60: empty body changes nothing', async () => {
        for (const body of [{}, [], [{}]]) {
          const r = await req('PATCH', '/labels', body);
          expect([r.status, r.headers.get('content-range')]).toEqual([204, '*/*']);
        }
        const rep = await req('PATCH', '/labels', {}, { Prefer: 'return=representation' });
        expect([rep.status, rep.json]).toEqual([200, []]);
        expect(await labelName(L[0])).toBe('Blue Note');
      });

      it('counts, trees, embedded select, missing=default and updated maintenance', async () => {
        const r = await req('PATCH', `/releases?or=(id.eq.${R[0]},id.eq.${R[1]})&select=id,labels(name)&order=id`, { release_version: 'v2' }, {
          Prefer: 'return=representation, count=exact',
        });
        expect(r.json).toEqual([{ id: R[0], labels: { name: 'Blue Note' } }, { id: R[1], labels: { name: 'Blue Note' } }]);
        expect(r.headers.get('content-range')).toBe('0-1/2');
        const d = await req('PATCH', `/releases?id=eq.${R[0]}&columns=release_version,vinyl&select=release_version,vinyl`, { vinyl: 'yes' }, {
          Prefer: 'return=representation, missing=default',
        });
        expect(d.json).toEqual([{ release_version: '', vinyl: 'yes' }]);
        const nul = await req('PATCH', `/releases?id=eq.${R[0]}&columns=release_version&select=release_version`, {}, { Prefer: 'return=representation' });
        expect(nul.json).toEqual([{ release_version: null }]);
        expect((await req('PATCH', '/labels', { nope: 1 })).json.code).toBe('PGRST204');
      });

      it('no filter updates every row; 0 rows is not an error; count=exact with none is */0', async () => {
        const r = await req('PATCH', '/releases', { vinyl: 'all' }, { Prefer: 'count=exact' });
        expect([r.status, r.headers.get('content-range')]).toEqual([204, '0-14/15']);
        const z = await req('PATCH', `/releases?id=eq.${U}`, { vinyl: 'x' }, { Prefer: 'count=exact' });
        expect(z.headers.get('content-range')).toBe('*/0');
      });

      it('61: limit without order → PGRST109; with order only the first rows change; PGRST110 on a non-unique order', async () => {
        const r = await req('PATCH', '/labels?limit=1', { name: 'Y' });
        expect(r.status).toBe(400);
        expect(r.json).toEqual({ code: 'PGRST109', details: null, hint: "Apply an 'order' using unique column(s)", message: "A 'limit' was applied without an explicit 'order'" });
        const ok = await req('PATCH', '/releases?order=catalog_number&limit=2&select=catalog_number', { vinyl: 'first' }, { Prefer: 'return=representation' });
        expect(ok.json.map((x: { catalog_number: string }) => x.catalog_number).sort()).toEqual(['CAT-1', 'CAT-10']);
        const many = await req('PATCH', '/releases?order=label_id&limit=1', { vinyl: 'x' });
        expect(many.status).toBe(400);
        expect(many.json).toEqual({ code: 'PGRST110', details: 'Results contain 8 rows changed but the maximum number allowed is 1', hint: null, message: 'The maximum number of rows allowed to change was surpassed' });
        const changed = await store.query(`select 1 from releases where vinyl = 'x'`);
        expect(changed.rows).toHaveLength(0);
      });

      it('singular Accept with several rows → 406, rolled back', async () => {
        const r = await req('PATCH', '/labels', { name: 'all' }, { Accept: 'application/vnd.pgrst.object+json' });
        expect(r.status).toBe(406);
        expect(r.json.details).toBe('The result contains 3 rows');
        expect(await labelName(L[0])).toBe('Blue Note');
      });

      it('max-affected under strict: PGRST124 and rollback; echoed', async () => {
        const r = await req('PATCH', '/releases', { vinyl: 'x' }, { Prefer: 'handling=strict, max-affected=10' });
        expect(r.status).toBe(400);
        expect(r.json.details).toBe('The query affects 15 rows');
        const ok = await req('PATCH', `/releases?id=eq.${R[0]}`, { vinyl: 'x' }, { Prefer: 'handling=strict, max-affected=10' });
        expect(ok.status).toBe(204);
        expect(ok.headers.get('preference-applied')).toBe('handling=strict, max-affected=10');
        const lenient = await req('PATCH', '/releases', { vinyl: 'y' }, { Prefer: 'max-affected=1' });
        expect(lenient.status).toBe(204);
      });
    });

    describe('DELETE', () => {
      it('62: 204 */*', async () => {
        const r = await req('DELETE', `/releases?id=eq.${R[14]}`);
        expect([r.status, r.headers.get('content-range'), r.text]).toEqual([204, '*/*', '']);
      });

      it('63: representation + count', async () => {
        const r = await req('DELETE', `/releases?id=eq.${R[0]}&select=id,labels(name)`, undefined, { Prefer: 'return=representation, count=exact' });
        expect(r.status).toBe(200);
        expect(r.json).toEqual([{ id: R[0], labels: { name: 'Blue Note' } }]);
        expect(r.headers.get('content-range')).toBe('*/1');
        expect(r.headers.get('preference-applied')).toBe('return=representation, count=exact');
      });

      it('64: deleting a referenced label → 409 23503', async () => {
        const r = await req('DELETE', `/labels?id=eq.${L[0]}`);
        expect(r.status).toBe(409);
        expect(r.json.code).toBe('23503');
        expect(r.json.details).toBe(`Key (id)=(${L[0]}) is still referenced from table "releases".`);
      });

      it('65: max-affected exceeded → PGRST124 and nothing deleted', async () => {
        const r = await req('DELETE', `/releases?id=not.eq.${U}`, undefined, { Prefer: 'handling=strict, max-affected=10' });
        expect(r.status).toBe(400);
        expect(r.json).toEqual({ code: 'PGRST124', details: 'The query affects 15 rows', hint: null, message: 'Query result exceeds max-affected preference constraint' });
        expect((await store.query('select 1 from releases')).rows).toHaveLength(15);
      });

      it('limited delete, singular rollback, delete everything without a filter', async () => {
        const lim = await req('DELETE', '/releases?order=catalog_number.desc&limit=1&select=catalog_number', undefined, { Prefer: 'return=representation' });
        expect(lim.json).toEqual([{ catalog_number: 'CAT-9' }]);
        const s = await req('DELETE', '/releases', undefined, { Accept: 'application/vnd.pgrst.object+json' });
        expect(s.status).toBe(406);
        expect((await store.query('select 1 from releases')).rows).toHaveLength(14);
        const all = await req('DELETE', '/releases', undefined, { Prefer: 'count=exact' });
        expect([all.status, all.headers.get('content-range')]).toEqual([204, '*/14']);
        expect((await req('DELETE', '/releases?limit=1')).json.code).toBe('PGRST109');
        // Paging is checked before the body is read (reference §1): PGRST109/114 win over PGRST102.
        expect((await req('PATCH', '/labels?limit=1', '}{')).json.code).toBe('PGRST109');
        expect((await req('PUT', `/labels?id=eq.${U}&offset=1`, '}{')).json.code).toBe('PGRST114');
      });
    });

    describe('PUT', () => {
      it('66: inserts (201) then updates (200); without Prefer 204', async () => {
        const a = await req('PUT', `/labels?id=eq.${U}`, { id: U, name: 'P' }, { Prefer: 'return=representation' });
        expect(a.status).toBe(201);
        expect(a.json[0]).toMatchObject({ id: U, name: 'P' });
        expect(a.headers.get('content-range')).toBeNull();
        const b = await req('PUT', `/labels?id=eq.${U}`, { id: U, name: 'Q' }, { Prefer: 'return=representation' });
        expect(b.status).toBe(200);
        expect(b.json[0].name).toBe('Q');
        const c = await req('PUT', `/labels?id=eq.${U}`, [{ id: U, name: 'R' }, { id: U2, name: 'ignored' }]);
        expect([c.status, c.text]).toEqual([204, '']);
        expect(await labelName(U)).toBe('R');
        expect(await labelName(U2)).toBeUndefined();
      });

      it('67: body key differs from the URL → PGRST115', async () => {
        const r = await req('PUT', `/labels?id=eq.${U}`, { id: L[0], name: 'P' });
        expect(r.status).toBe(400);
        expect(r.json).toEqual({ code: 'PGRST115', details: null, hint: null, message: 'Payload values do not match URL in primary key column(s)' });
        expect(await labelName(L[0])).toBe('Blue Note');
      });

      it('68: filters other than the PK eq → 405 PGRST105', async () => {
        for (const q of ['name=eq.X', `id=neq.${U}`, `id=eq.${U}&name=eq.x`, '', `id=not.eq.${U}`, `or=(id.eq.${U})`]) {
          const r = await req('PUT', `/labels?${q}`, { id: U, name: 'P' });
          expect(r.status, q).toBe(405);
          expect(r.json).toEqual({ code: 'PGRST105', details: null, hint: null, message: "Filters must include all and only primary key columns with 'eq' operators" });
        }
      });

      it('69: limit on PUT → PGRST114', async () => {
        const r = await req('PUT', `/labels?id=eq.${U}&limit=1`, { id: U, name: 'P' });
        expect(r.status).toBe(400);
        expect(r.json).toEqual({ code: 'PGRST114', details: null, hint: null, message: 'limit/offset querystring parameters are not allowed for PUT' });
      });
    });
  });
}
