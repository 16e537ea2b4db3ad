import { readFileSync, existsSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { importFile } from '../../src/import/engine.js';
import type { Store } from '../../src/store/store.js';
import { disposeStore, makePGliteStore, STORE_KINDS } from '../support/stores.js';
import { COPY_CSV } from '../../src/grammar/media.js';
import { bodyRows, countOf, countsOf, file, rowsOf, serverFor, table, tmp } from './support.js';

const id = (n: number) => `a0000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

/** 30 artists; keys 3, 7 and 20 appear again later (twice for 7), across batch boundaries. */
function duplicatesCsv(): string {
  const lines = ['id,stage_name'];
  for (let i = 1; i <= 30; i++) lines.push(`${id(i)},Artist ${i} v1`);
  lines.push(`${id(3)},Artist 3 v2`, `${id(7)},Artist 7 v2`, `${id(20)},Artist 20 v2`, `${id(7).toUpperCase()},Artist 7 v3`);
  return `${lines.join('\n')}\n`;
}

for (const kind of STORE_KINDS) {
  describe.skipIf(kind.skip)(`duplicate keys and upserts (${kind.kind})`, () => {
    let store: Store & { drop?(): Promise<void> };
    beforeEach(async () => {
      store = await kind.make();
    });
    afterEach(async () => disposeStore(store));

    const nameOf = async (n: number) => (await rowsOf(store, 'artists', 'id,stage_name')).find((r) => r.id === id(n))?.stage_name;

    it('--dedupe last (default): the last row of a key wins, without a database error', async () => {
      const server = serverFor(store);
      const s = await importFile({ table: table('artists'), input: file(tmp(), 'a.csv', duplicatesCsv()), batchRows: 8 }, server);
      expect(s).toMatchObject({ inserted: 30, updated: 0, rejected: 0, deduped: 4 });
      expect(await countOf(store, 'artists')).toBe(30);
      expect([await nameOf(3), await nameOf(7), await nameOf(20), await nameOf(1)]).toEqual(['Artist 3 v2', 'Artist 7 v3', 'Artist 20 v2', 'Artist 1 v1']);
      expect(server.log.length).toBeGreaterThan(0);
      expect(server.log.every((l) => l.res.status < 400)).toBe(true);
    });

    it('--dedupe last: a later occurrence with a bad value is rejected and the last valid one lands', async () => {
      const csv = `id,stage_name,is_signed\n${id(1)},One v1,true\n${id(1)},One v2,true\n${id(1)},One v3,maybe\n${id(2)},Two v1,true\n${id(2)},Two v2,nope\n`;
      const s = await importFile({ table: table('artists'), input: file(tmp(), 'a.csv', csv), batchRows: 2 }, serverFor(store));
      expect(s).toMatchObject({ inserted: 2, rejected: 2, deduped: 1 });
      expect(s.rejectedRows.map((r) => r.line)).toEqual([4, 6]);
      expect([await nameOf(1), await nameOf(2)]).toEqual(['One v2', 'Two v1']);
    });

    it('--dedupe first: the first row of a key wins', async () => {
      const s = await importFile({ table: table('artists'), input: file(tmp(), 'a.csv', duplicatesCsv()), batchRows: 8, dedupe: 'first' }, serverFor(store));
      expect(s).toMatchObject({ inserted: 30, rejected: 0, deduped: 4 });
      expect([await nameOf(3), await nameOf(7), await nameOf(20)]).toEqual(['Artist 3 v1', 'Artist 7 v1', 'Artist 20 v1']);
    });

    it('--dedupe error: every row of a repeated key is rejected, the rest land', async () => {
      const s = await importFile({ table: table('artists'), input: file(tmp(), 'a.csv', duplicatesCsv()), batchRows: 8, dedupe: 'error' }, serverFor(store));
      expect(s).toMatchObject({ inserted: 27, rejected: 7, deduped: 0 });
      expect(s.rejectedRows.map((r) => r.line)).toEqual([4, 8, 21, 32, 33, 34, 35]);
      expect(s.rejectedRows[0].message).toMatch(/appears more than once/);
      expect(await nameOf(3)).toBeUndefined();
    });

    /**
     * Imports two artists, then through `server` a file with one of them unchanged (`yes` = true),
     * one renamed and one new with an empty is_signed, and checks the outcome both paths share.
     */
    async function importChangedUnchangedNew(server: ReturnType<typeof serverFor>): Promise<void> {
      const dir = tmp();
      await importFile({ table: table('artists'), input: file(dir, 'a.csv', `id,stage_name,is_signed\n${id(1)},One,true\n${id(2)},Two,false\n`) }, serverFor(store));
      const before = await rowsOf(store, 'artists');
      const s = await importFile(
        { table: table('artists'), input: file(dir, 'b.csv', `id,stage_name,is_signed\n${id(1)},One,yes\n${id(2)},Two renamed,false\n${id(3)},Three,\n`) },
        server,
      );
      expect(s).toMatchObject({ inserted: 1, updated: 1, unchanged: 1 });
      const after = await rowsOf(store, 'artists');
      expect(after.find((r) => r.id === id(1))).toEqual(before.find((r) => r.id === id(1))); // not even `updated` moved
      expect(after.find((r) => r.id === id(2))?.stage_name).toBe('Two renamed');
      expect(after.find((r) => r.id === id(3))?.is_signed).toBe(false); // empty cell → column default
    }

    it('updates changed rows, leaves identical ones alone, and counts each (COPY bodies: the service compares)', async () => {
      const server = serverFor(store);
      await importChangedUnchangedNew(server);
      // no lookups: an empty COPY body (is it taken?), then one batch of all three rows
      expect(server.log.map((l) => l.req.method)).toEqual(['POST', 'POST']);
      const post = server.log[1];
      expect(post.req.headers).toMatchObject({ 'Content-Type': COPY_CSV, Prefer: 'resolution=merge-duplicates, unchanged=skip, return=minimal' });
      expect(post.req.query).toBe('on_conflict=id');
      // the boolean spelled as text, the empty cell as its constant default (f)
      expect(Buffer.from(post.req.body as Uint8Array).toString()).toBe(`id,stage_name,is_signed\n${id(1)},One,t\n${id(2)},Two renamed,f\n${id(3)},Three,f\n`);
      expect(countsOf(post.res)).toEqual({ inserted: 1, updated: 1, unchanged: 1 });
    });

    it('updates changed rows, leaves identical ones alone, and counts each (a PostgREST without COPY bodies: JSON and lookups)', async () => {
      const server = serverFor(store, { plainPostgrest: true });
      await importChangedUnchangedNew(server);
      const post = server.log.find((l) => l.req.method === 'POST' && l.res.status < 300)!;
      expect(JSON.parse(post.req.body as string)).toHaveLength(2);
      // the empty is_signed cell was filled with its constant default (false): every row is complete,
      // so the batch needs no missing=default
      expect(JSON.parse(post.req.body as string)[1]).toEqual({ id: id(3), stage_name: 'Three', is_signed: false });
      expect(post.req.headers?.Prefer).toBe('resolution=merge-duplicates, return=minimal');
      expect(post.req.query).toBe('columns=id,stage_name,is_signed&on_conflict=id');
    });

    it('a left-out cell of a column with a volatile default (now()) is left to the server with missing=default', async () => {
      const copying = serverFor(store);
      const csv = `id,stage_name,created\n${id(1)},One,2024-01-02T03:04:05Z\n${id(2)},Two,\n`;
      const c = await importFile({ table: table('artists'), input: file(tmp(), 'c.csv', csv), batchRows: 1 }, copying);
      expect(c).toMatchObject({ inserted: 2, rejected: 0 });
      // COPY cannot say "default" for one cell: that row goes as JSON with missing=default
      // (batches are in flight together: their order on the wire is not fixed)
      expect(copying.log.map((l) => `${l.req.headers?.['Content-Type']} ${l.req.headers?.Prefer}`).sort()).toEqual([
        'application/json resolution=merge-duplicates, unchanged=skip, missing=default, return=minimal',
        `${COPY_CSV} resolution=merge-duplicates, unchanged=skip, return=minimal`,
        `${COPY_CSV} resolution=merge-duplicates, unchanged=skip, return=minimal`,
      ]);
      await store.query(`delete from ${store.schema}.artists`);
      const server = serverFor(store, { plainPostgrest: true });
      // the database's clock around the import: the default must fall between (no wall-clock margin)
      const dbNow = async () => new Date(((await store.query('select clock_timestamp() as t')).rows[0] as { t: string | Date }).t).getTime();
      const before = await dbNow();
      const s = await importFile({ table: table('artists'), input: file(tmp(), 'c.csv', csv), batchRows: 1 }, server);
      const after = await dbNow();
      expect(s).toMatchObject({ inserted: 2, rejected: 0 });
      const posts = server.log.filter((l) => l.req.method === 'POST' && l.res.status < 300);
      expect(posts.map((l) => l.req.headers?.Prefer).sort()).toEqual(['resolution=merge-duplicates, missing=default, return=minimal', 'resolution=merge-duplicates, return=minimal']);
      const rows = await rowsOf(store, 'artists');
      expect(new Date(rows.find((r) => r.id === id(1))!.created as string).toISOString()).toBe('2024-01-02T03:04:05.000Z');
      const created = new Date(rows.find((r) => r.id === id(2))!.created as string).getTime();
      expect(created).toBeGreaterThanOrEqual(before);
      expect(created).toBeLessThanOrEqual(after);
    });

    it('--ignore-duplicates keeps existing rows as they are', async () => {
      const dir = tmp();
      await importFile({ table: table('artists'), input: file(dir, 'a.csv', `id,stage_name\n${id(1)},One\n`) }, serverFor(store));
      const s = await importFile({ table: table('artists'), input: file(dir, 'b.csv', `id,stage_name\n${id(1)},Changed\n${id(2)},Two\n`), ignoreDuplicates: true }, serverFor(store));
      expect(s).toMatchObject({ inserted: 1, updated: 0, unchanged: 1 });
      expect(await nameOf(1)).toBe('One');
    });

    it('--null marks explicit nulls; empty cells take column defaults', async () => {
      const dir = tmp();
      const csv = `id,stage_name,city,is_signed,birthdate\n${id(1)},NULL,,NULL,\n${id(2)},\\N,x,,1990-01-01\n`;
      await importFile({ table: table('artists'), input: file(dir, 'a.csv', csv), nullToken: 'NULL' }, serverFor(store));
      const rows = await rowsOf(store, 'artists', 'id,stage_name,city,is_signed,birthdate');
      expect(rows).toEqual([
        { id: id(1), stage_name: null, city: '', is_signed: null, birthdate: null },
        { id: id(2), stage_name: '\\N', city: 'x', is_signed: false, birthdate: '1990-01-01' },
      ]);
    });

    it('without ids or a natural key (artists) every row is a plain insert (no on_conflict, no lookups)', async () => {
      const copying = serverFor(store);
      expect(await importFile({ table: table('artists'), input: file(tmp(), 'l.csv', 'Stage Name\nA\nB\nA\n') }, copying)).toMatchObject({ inserted: 3, conflictKey: null });
      expect(copying.log.map((l) => [l.req.query, l.req.headers?.Prefer, bodyRows(l.req)])).toEqual([
        ['', 'return=minimal', 0],
        ['', 'return=minimal', 3],
      ]);
      const server = serverFor(store, { plainPostgrest: true });
      const s = await importFile({ table: table('artists'), input: file(tmp(), 'l.csv', 'Stage Name\nA\nB\nA\n') }, server);
      expect(s).toMatchObject({ inserted: 3, conflictKey: null });
      expect(server.log.map((l) => l.req.method)).toEqual(['POST', 'POST']);
      // no id column: it is not in columns=, so every id comes from its default without missing=default
      expect(server.log[1].req.headers?.Prefer).toBe('return=minimal');
      expect(server.log[1].req.query).toBe('columns=stage_name');
    });

    it('labels without ids match by name (issue 26): a repeated name in the file is one label, a second run changes nothing', async () => {
      const copying = serverFor(store);
      const input = file(tmp(), 'l.csv', 'Name\nA\nB\n a \n');
      expect(await importFile({ table: table('labels'), input }, copying)).toMatchObject({ inserted: 2, deduped: 1, conflictKey: ['id'], naturalKey: [['name']] });
      expect(await importFile({ table: table('labels'), input }, serverFor(store, { plainPostgrest: true }))).toMatchObject({ inserted: 0, updated: 0, unchanged: 2, deduped: 1 });
    });
  });
}

describe('batch sizing and mapping (pglite)', () => {
  let store: Store;
  beforeEach(async () => {
    store = await makePGliteStore();
  });
  afterEach(async () => disposeStore(store));

  it('a 413 from the server shrinks the batches, and the import still completes', async () => {
    const lines = ['id,stage_name,biography'];
    for (let i = 1; i <= 300; i++) lines.push(`${id(i)},Artist ${i},${'x'.repeat(200)}`);
    const server = serverFor(store, { maxBodyBytes: 16 * 1024 });
    const notices: string[] = [];
    const s = await importFile({ table: table('artists'), input: file(tmp(), 'a.csv', lines.join('\n')), onNotice: (m) => notices.push(m) }, server);
    expect(s).toMatchObject({ inserted: 300, rejected: 0 });
    expect(await countOf(store, 'artists')).toBe(300);
    expect(server.log.some((l) => l.res.status === 413)).toBe(true);
    expect(s.batchBytes).toBeLessThanOrEqual(16 * 1024);
    expect(s.batchRows).toBeLessThan(1000);
    const posts = server.log.filter((l) => l.req.method === 'POST' && l.res.status === 201);
    expect(Math.max(...posts.map((p) => Buffer.byteLength(p.req.body!)))).toBeLessThanOrEqual(16 * 1024);
    expect(notices.some((n) => /shrink/.test(n))).toBe(true);
  });

  it('a row too big for the server on its own is rejected, the rest land', async () => {
    const csv = `id,stage_name,biography\n${id(1)},Small,x\n${id(2)},Huge,${'y'.repeat(20_000)}\n${id(3)},Small too,z\n`;
    const s = await importFile({ table: table('artists'), input: file(tmp(), 'a.csv', csv) }, serverFor(store, { maxBodyBytes: 8 * 1024 }));
    expect(s).toMatchObject({ inserted: 2, rejected: 1 });
    expect(s.rejectedRows[0]).toMatchObject({ line: 3 });
    expect(s.rejectedRows[0].message).toMatch(/larger than the server accepts/);
  });

  it('maps headers case-insensitively and with --map; unknown ones fail or are skipped and reported', async () => {
    const dir = tmp();
    const csv = `ID,Stage Name,Colour,BIRTH_DATE\n${id(1)},One,red,1990-05-01\n`;
    await expect(importFile({ table: table('artists'), input: file(dir, 'a.csv', csv) }, serverFor(store))).rejects.toThrow(/unknown field "Colour".*Valid fields: id/);
    expect(await countOf(store, 'artists')).toBe(0);
    const s = await importFile({ table: table('artists'), input: file(dir, 'b.csv', csv), map: { Colour: 'city' } }, serverFor(store));
    expect(s.columns).toEqual(['id', 'stage_name', 'city', 'birthdate']);
    const s2 = await importFile({ table: table('artists'), input: file(dir, 'c.csv', csv.replace('One', 'Uno')), ignoreUnknown: true }, serverFor(store));
    expect(s2.ignoredFields).toEqual(['Colour']);
    expect(await rowsOf(store, 'artists', 'id,stage_name,city,birthdate')).toEqual([{ id: id(1), stage_name: 'Uno', city: 'red', birthdate: '1990-05-01' }]);
  });

  it('--dry-run validates and compares without writing anything', async () => {
    const dir = tmp();
    await importFile({ table: table('artists'), input: file(dir, 'a.csv', `id,stage_name\n${id(1)},One\n${id(2)},Two\n`) }, serverFor(store));
    const server = serverFor(store);
    const s = await importFile(
      { table: table('artists'), input: file(dir, 'b.csv', `id,stage_name,birthdate\n${id(1)},One,\n${id(2)},Deux,\n${id(3)},Three,\n${id(4)},Four,nope\n`), dryRun: true },
      server,
    );
    expect(s).toMatchObject({ dryRun: true, inserted: 1, updated: 1, unchanged: 1, rejected: 1, rejectsFile: null });
    expect(server.log.length).toBeGreaterThan(0);
    expect(server.log.every((l) => l.req.method === 'GET')).toBe(true);
    expect(await countOf(store, 'artists')).toBe(2);
    expect(existsSync(`${dir}/b.csv.rejects.csv`)).toBe(false);
  });

  it('reads JSON, NDJSON and YAML (nested jsonb kept) and stdin', async () => {
    const dir = tmp();
    const rows = [{ id: id(1), stage_name: 'J', metadata: { a: [1, { b: 'c' }] } }];
    await importFile({ table: table('artists'), input: file(dir, 'a.json', JSON.stringify(rows)) }, serverFor(store));
    await importFile({ table: table('artists'), input: file(dir, 'b.ndjson', `${JSON.stringify({ ...rows[0], id: id(2) })}\n`) }, serverFor(store));
    await importFile({ table: table('artists'), input: file(dir, 'c.yaml', `- id: ${id(3)}\n  stage_name: J\n  metadata:\n    a: [1, {b: c}]\n`) }, serverFor(store));
    const { Readable } = await import('node:stream');
    const s = await importFile({ table: table('artists'), input: '-', format: 'ndjson', stdin: Readable.from([`{"id":"${id(4)}","stage_name":"J","metadata":{"a":[1,{"b":"c"}]}}\n`]), cwd: dir }, serverFor(store));
    expect(s.inserted).toBe(1);
    const stored = await rowsOf(store, 'artists', 'id,stage_name,metadata');
    expect(stored.map((r) => r.metadata)).toEqual([rows[0].metadata, rows[0].metadata, rows[0].metadata, rows[0].metadata]);
    expect(readFileSync(`${dir}/a.json`, 'utf8')).toContain('"J"');
  });
});
