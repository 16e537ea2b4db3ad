import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { App } from '../../src/server/app.js';
import { COPY_CSV } from '../../src/grammar/media.js';
import type { Store } from '../../src/store/store.js';
import { STORE_KINDS, disposeStore } from '../support/stores.js';
import { L, appFor, seedFixture, send } from './support.js';

const A = 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11';
const B = 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a12';

/** Our bulk extensions (README "The service"): COPY bodies, `Prefer: unchanged=skip`, `Catalog-Counts`. */
for (const { kind, make, skip } of STORE_KINDS) {
  describe.skipIf(skip)(`COPY bodies and unchanged=skip over ${kind}${skip ? ' (SKIPPED: set CATALOG_TEST_DATABASE_URL)' : ''}`, () => {
    let store: Store & { drop?(): Promise<void> };
    let app: App & { logged: string[] };
    const copy = (body: string, prefer = 'resolution=merge-duplicates, unchanged=skip', path = '/artists?on_conflict=id') =>
      send(app, 'POST', path, { body, headers: { 'Content-Type': COPY_CSV, Prefer: prefer } });
    const artist = async (id: string) => (await store.query<Record<string, unknown>>('select stage_name, biography, metadata, is_signed, updated::text as updated from artists where id = $1', [id])).rows[0];

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

    it('loads COPY CSV: quoted text kept, unquoted empty is NULL, quoted "" is empty, jsonb parsed', async () => {
      const r = await copy(`id,stage_name,biography,metadata,is_signed\n${A},"Smith, ""DJ""",,"{""k"":[1,2]}",t\n${B},"",x\ny,,f\n`.replace('x\ny', '"x\ny"'));
      expect(r.status).toBe(201);
      expect(r.headers.get('catalog-counts')).toBe('inserted=2, updated=0, unchanged=0');
      expect(r.headers.get('preference-applied')).toBe('resolution=merge-duplicates, unchanged=skip');
      expect(await artist(A)).toMatchObject({ stage_name: 'Smith, "DJ"', biography: null, metadata: { k: [1, 2] }, is_signed: true });
      expect(await artist(B)).toMatchObject({ stage_name: '', biography: 'x\ny', metadata: null, is_signed: false });
    });

    it('an upsert on a column with no unique key is refused with 42P10 as the JSON path is, and writes nothing (also on a first load)', async () => {
      const count = async () => (await store.query<{ n: number }>(`select count(*)::int as n from tracks where isrc_code like 'ZZCOPY%'`)).rows[0].n;
      const body = 'isrc_code,track_title\nZZCOPY000001,One\nZZCOPY000002,Two\n';
      for (const prefer of ['resolution=merge-duplicates', 'resolution=merge-duplicates, unchanged=skip', 'resolution=ignore-duplicates']) {
        const viaCopy = await copy(body, prefer, '/tracks?on_conflict=isrc_code');
        const viaJson = await send(app, 'POST', '/tracks?on_conflict=isrc_code', { body: [{ isrc_code: 'ZZCOPY000001', track_title: 'One' }], headers: { Prefer: prefer } });
        expect([viaCopy.status, viaCopy.json.code]).toEqual([400, '42P10']);
        expect([viaJson.status, viaJson.json.code]).toEqual([viaCopy.status, viaCopy.json.code]);
        expect(await count()).toBe(0);
      }
      // the primary key as the target still takes the straight COPY (and merges)
      const byId = await copy(`id,track_title\n${A},One\n`, 'resolution=merge-duplicates', '/tracks?on_conflict=id');
      expect(byId.status).toBe(201);
    });

    it('unchanged=skip leaves identical rows alone (not even updated moves) and counts each kind', async () => {
      await copy(`id,stage_name\n${A},One\n${B},Two\n`);
      const before = await artist(A);
      const r = await copy(`id,stage_name\n${A},One\n${B},Two renamed\n${L[0]},Three\n`);
      expect(r.status).toBe(201);
      expect(r.headers.get('catalog-counts')).toBe('inserted=1, updated=1, unchanged=1');
      expect(await artist(A)).toEqual(before);
      expect((await artist(B)).stage_name).toBe('Two renamed');
      // without unchanged=skip a merge rewrites every row, as PostgREST does
      const again = await copy(`id,stage_name\n${A},One\n`, 'resolution=merge-duplicates');
      expect(again.status).toBe(200);
      expect(again.headers.get('catalog-counts')).toBe('inserted=0, updated=1, unchanged=0');
    });

    it('unchanged=skip drops identical rows before the write triggers: a stored row with a dangling credit re-sent as it is stays unchanged, not refused', async () => {
      const T = 'b0c5a000-0000-4000-8000-00000000c0de';
      const ghost = 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd38dead';
      const credits = `[{"id": "${ghost}", "name": "Gone"}]`;
      // the row as an older catalog could hold it: its artist removed since (the links trigger would refuse it now)
      await store.query('alter table tracks disable trigger user');
      try {
        await store.query('insert into tracks (id, track_title, primary_artists) values ($1, $2, $3::jsonb)', [T, 'Kept', credits]);
      } finally {
        await store.query('alter table tracks enable trigger user');
      }
      const body = `id,track_title,primary_artists\n${T},Kept,"${credits.replace(/"/g, '""')}"\n`;
      const same = await copy(body, 'resolution=merge-duplicates, unchanged=skip', '/tracks?on_conflict=id');
      expect([same.status, same.headers.get('catalog-counts')]).toEqual([200, 'inserted=0, updated=0, unchanged=1']);
      const viaJson = await send(app, 'POST', '/tracks?on_conflict=id', { body: [{ id: T, track_title: 'Kept', primary_artists: JSON.parse(credits) }], headers: { Prefer: 'resolution=merge-duplicates, unchanged=skip' } });
      expect(viaJson.headers.get('catalog-counts')).toBe('inserted=0, updated=0, unchanged=1');
      // a changed row still takes the merge (and its triggers)
      const changed = await copy(body.replace('Kept', 'Changed'), 'resolution=merge-duplicates, unchanged=skip', '/tracks?on_conflict=id');
      expect([changed.status, changed.headers.get('catalog-counts')]).toEqual([200, 'inserted=0, updated=1, unchanged=0']);
    });

    it('unchanged=skip works on JSON bodies too; ignore-duplicates counts existing keys as unchanged', async () => {
      await copy(`id,stage_name\n${A},One\n`);
      const json = await send(app, 'POST', '/artists', { body: [{ id: A, stage_name: 'One' }, { id: B, stage_name: 'Two' }], headers: { Prefer: 'resolution=merge-duplicates, unchanged=skip' } });
      expect(json.headers.get('catalog-counts')).toBe('inserted=1, updated=0, unchanged=1');
      const ignore = await copy(`id,stage_name\n${A},Changed\n`, 'resolution=ignore-duplicates');
      expect(ignore.headers.get('catalog-counts')).toBe('inserted=0, updated=0, unchanged=1');
      expect((await artist(A)).stage_name).toBe('One');
    });

    it('bad rows fail the whole body with the database error; nothing is written', async () => {
      const bad = await copy(`id,stage_name\n${A},One\nnot-a-uuid,Two\n`);
      expect(bad.status).toBe(400);
      expect(bad.json).toMatchObject({ code: '22P02', message: 'invalid input syntax for type uuid: "not-a-uuid"' });
      const ragged = await copy(`id,stage_name\n${A},One,extra\n`);
      expect(ragged.status).toBe(400);
      expect((ragged.json as { code: string }).code).toBe('22P04');
      const nul = await copy(`id,stage_name,created\n${A},One,\n`);
      expect(nul.status).toBe(400);
      expect((nul.json as { code: string }).code).toBe('23502');
      expect(await artist(A)).toBeUndefined();
    });

    it('new rows load straight into the table; a key that exists further down undoes that attempt and every row is merged once', async () => {
      const count = async () => Number((await store.query<{ n: string }>('select count(*)::text as n from artists')).rows[0].n);
      const before = await count();
      const fresh = await copy(`id,stage_name\n${A},One\n`, 'resolution=merge-duplicates');
      expect(fresh.status).toBe(201);
      expect(fresh.headers.get('catalog-counts')).toBe('inserted=1, updated=0, unchanged=0');
      // B is new and comes first, A exists: the straight load inserts B, then meets A and is rolled back
      const mixed = await copy(`id,stage_name\n${B},Two\n${A},One again\n`, 'resolution=merge-duplicates');
      expect(mixed.status).toBe(201);
      expect(mixed.headers.get('catalog-counts')).toBe('inserted=1, updated=1, unchanged=0');
      expect(await count()).toBe(before + 2);
      expect((await artist(A)).stage_name).toBe('One again');
      expect((await artist(B)).stage_name).toBe('Two');
      // a bad value after good new rows: the error of the whole body, and none of its rows
      const bad = await copy(`id,stage_name,is_signed\n${L[0]},x,t\n${L[1]},y,maybe\n`, 'resolution=merge-duplicates');
      expect(bad.status).toBe(400);
      expect((bad.json as { code: string }).code).toBe('22P02');
      expect(await count()).toBe(before + 2);
    });

    it('refuses what it cannot mean: unknown columns, other methods, columns= and missing=default', async () => {
      expect((await copy(`id,nope\n${A},x\n`)).json).toMatchObject({ code: 'PGRST204' });
      const patch = await send(app, 'PATCH', `/artists?id=eq.${A}`, { body: `stage_name\nx\n`, headers: { 'Content-Type': COPY_CSV } });
      expect(patch.status).toBe(400);
      expect(patch.json).toMatchObject({ code: 'PGRST102' });
      expect((await copy(`id,stage_name\n${A},x\n`, 'return=minimal', '/artists?columns=id')).json).toMatchObject({ code: 'PGRST102' });
      expect((await copy(`id,stage_name\n${A},x\n`, 'missing=default')).json).toMatchObject({ code: 'PGRST102' });
      expect((await copy('')).json).toMatchObject({ code: 'PGRST102' });
      // an empty body (the header alone) inserts nothing: how `catalog import` asks whether COPY bodies are taken
      const probe = await copy('id,stage_name\n');
      expect(probe.status).toBe(200); // a merge that inserted nothing, as PostgREST answers it
      expect(probe.headers.get('catalog-counts')).toBe('inserted=0, updated=0, unchanged=0');
    });
  });
}

describe('firstKeyCell (the straight-COPY probe reads the first row key of a body)', () => {
  it('reads an unquoted first cell after the header, and refuses what it cannot read', async () => {
    const { firstKeyCell } = await import('../../src/server/execute.js');
    const b = (s: string) => Buffer.from(s);
    expect(firstKeyCell(b(`id,name\n${A},x\n${B},y\n`))).toBe(A);
    expect(firstKeyCell(b(`id,name\r\n${A}\r\n`))).toBe(A);
    expect(firstKeyCell(b(`id,name\n"${A}",x\n`))).toBeNull();
    expect(firstKeyCell(b('id,name\n'))).toBeNull();
    expect(firstKeyCell(b('id,name'))).toBeNull();
    expect(firstKeyCell(b('id,name\n,x\n'))).toBeNull();
  });
});
