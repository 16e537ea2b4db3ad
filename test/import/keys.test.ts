import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { importFile } from '../../src/import/engine.js';
import { KeyIndex, keyOfRow, keyText, normalizeKeyPart } from '../../src/import/match/keys.js';
import { NameResolver } from '../../src/import/match/names.js';
import { checkCatalog } from '../../src/check/check.js';
import { TABLES } from '../../src/schema/catalog.js';
import type { Finding } from '../../src/check/rules.js';
import { splitLongQuery } from '../../src/client/in-list.js';
import { compileQuery } from '../../src/grammar/compile.js';
import type { Store } from '../../src/store/store.js';
import { disposeStore, STORE_KINDS } from '../support/stores.js';
import { file, rowsOf, serverFor, table, tmp } from './support.js';

/** Issue 26: natural keys, references by name, sync, long lists. */

describe('natural keys compare as catalog check compares them', () => {
  it('ISRC without separators or case, UPC without spaces and hyphens, names trimmed and folded', () => {
    expect(normalizeKeyPart('isrc_code', ' us-abc-16-00121')).toBe('USABC1600121');
    expect(normalizeKeyPart('upc_code', '0724 3495-32427')).toBe('072434953242' + '7');
    expect(normalizeKeyPart('name', ' Blue  Note ')).toBe('blue note');
    expect(normalizeKeyPart('name', 'Música  Popular')).toBe(normalizeKeyPart('name', 'musica popular'));
  });

  it('an empty key never matches; releases fall back from UPC to catalog number', () => {
    expect(keyText(['name'], ['   '])).toBeNull();
    expect(keyText(['genre', 'name'], ['Jazz', 'Hard Bop'])).toBe('jazz\u0000hard bop');
    const spec = [['upc_code'], ['catalog_number']];
    expect(keyOfRow(spec, (c) => ({ upc_code: '', catalog_number: 'BN-4003' })[c])).toEqual({ alt: 1, key: 'bn-4003' });
    expect(keyOfRow(spec, () => null)).toBeNull();
  });

  it('the key index finds each of 50,000 keys added one by one (its table grows), and nothing else', () => {
    const index = new KeyIndex('tracks', [['isrc_code']]);
    const id = (i: number) => `1ab00000-0000-4000-8000-${String(i).padStart(12, '0')}`;
    for (let i = 0; i < 50_000; i++) index.add(id(i), [{ alt: 0, key: `USABC${String(i).padStart(7, '0')}` }]);
    for (let i = 0; i < 50_000; i += 997) {
      const hit = index.find(0, `USABC${String(i).padStart(7, '0')}`);
      expect(hit && 'slot' in hit ? index.idOf(hit.slot) : hit).toBe(id(i));
    }
    expect(index.find(0, 'USABC9999999')).toBeNull();
    expect(index.size).toBe(50_000);
  });

  it('splits a query with a long in.() list into parts that each fit and together name every value', () => {
    const ids = Array.from({ length: 600 }, (_, i) => `1ab00000-0000-4000-8000-${String(i).padStart(12, '0')}`);
    const q = { where: [{ path: [], condition: { kind: 'filter' as const, field: { name: 'id', jsonPath: [] }, negated: false, op: 'in' as const, value: ids } }], order: [], page: [] };
    const parts = splitLongQuery(q, compileQuery);
    expect(parts.length).toBeGreaterThan(1);
    for (const p of parts) expect(compileQuery(p).length).toBeLessThanOrEqual(6000);
    expect(parts.flatMap((p) => (p.where[0].condition as { value: string[] }).value)).toEqual(ids);
  });
});

for (const kind of STORE_KINDS) {
  describe.skipIf(kind.skip)(`natural keys and references against the service (${kind.kind})`, () => {
    let store: Store;
    beforeEach(async () => {
      store = await kind.make();
    });
    afterEach(async () => disposeStore(store));

    it('a key stored twice rejects the row naming both ids; the index reads any PostgREST in keyset pages', async () => {
      const server = serverFor(store, { plainPostgrest: true });
      const a = '1ab00000-0000-4000-8000-000000000001';
      const b = '1ab00000-0000-4000-8000-000000000002';
      await importFile({ table: table('labels'), input: file(tmp(), 'seed.csv', `id,name\n${a},Blue Note\n${b}, blue note\n`) }, server);
      const index = await KeyIndex.load(server, 'labels', [['name']], { pageSize: 1 });
      expect(index.find(0, 'blue note')).toEqual({ ambiguous: [a, b] });
      expect(index.slotOfId(b)).toBe(1);
      const s = await importFile({ table: table('labels'), input: file(tmp(), 'l.csv', 'name\nBLUE NOTE\nImpulse!\n') }, server);
      expect(s).toMatchObject({ inserted: 1, rejected: 1, rejectedRows: [{ line: 2, code: 'ambiguous-key' }] });
      expect(s.rejectedRows[0].message).toContain(`${a}, ${b}`);
    });

    it('against a PostgREST without COPY bodies, a re-run with nothing changed only reads: no row is sent', async () => {
      const input = file(tmp(), 't.csv', 'isrc_code,track_title,primary_artists\nUS-ABC-24-00001,One,"[{""role"":""vocals"",""name"":""X""}]"\nUSABC2400002,Two,\n');
      expect(await importFile({ table: table('tracks'), input }, serverFor(store))).toMatchObject({ inserted: 2 });
      const plain = serverFor(store, { plainPostgrest: true });
      expect(await importFile({ table: table('tracks'), input }, plain)).toMatchObject({ inserted: 0, updated: 0, unchanged: 2 });
      // (the one POST is the COPY probe, a header line the service refuses)
      expect(plain.log.filter((l) => l.req.method !== 'GET').map((l) => [l.req.headers?.['Content-Type'], l.res.status])).toEqual([['application/vnd.catalog.copy+csv', 400]]);
      const changed = file(tmp(), 't2.csv', 'isrc_code,track_title,primary_artists\nUS-ABC-24-00001,One,"[{""name"":""X"",""role"":""vocals""}]"\nUSABC2400002,Two (live),\n');
      expect(await importFile({ table: table('tracks'), input: changed }, serverFor(store, { plainPostgrest: true }))).toMatchObject({ inserted: 0, updated: 1, unchanged: 1 });
    });

    it('release text references resolve to ids by name; unknown names are rejected with a did-you-mean, or created', async () => {
      const server = serverFor(store);
      await importFile({ table: table('labels'), input: file(tmp(), 'l.csv', 'name\nBlue Note\n') }, server);
      await importFile({ table: table('genres'), input: file(tmp(), 'g.csv', 'name\nJazz\n') }, server);
      const input = file(tmp(), 'r.csv', 'release_title,catalog_number,label,genre\nMoanin,BN-4003, blue  note,JAZZ\nOther,X-1,Blu Note,Jazz\n');
      const s = await importFile({ table: table('releases'), input }, server);
      expect(s).toMatchObject({ inserted: 1, rejected: 1, rejectedRows: [{ line: 3, code: 'unknown-reference' }] });
      expect(s.rejectedRows[0].message).toMatch(/label “Blu Note” is not in labels\.name; did you mean “Blue Note”\?/);
      const [label] = await rowsOf(store, 'labels', 'id');
      expect((await rowsOf(store, 'releases', 'id, release_title, label_id')).map((r) => ({ release_title: r.release_title, label_id: r.label_id }))[0]).toEqual({ release_title: 'Moanin', label_id: label.id });
      const created = await importFile({ table: table('releases'), input, createMissing: true }, server);
      expect(created).toMatchObject({ inserted: 1, unchanged: 1, rejected: 0, created: { labels: 1 } });
      expect((await rowsOf(store, 'labels', 'id, name')).map((r) => r.name).sort()).toEqual(['Blu Note', 'Blue Note']);
      const resolver = await NameResolver.open(server, { field: 'label', idField: 'label_id', collection: 'labels', column: 'name' }, false);
      expect(resolver.resolve('BLU NOTE')).toMatchObject({ id: expect.any(String) });
    });

    it('check flags a release whose label text has no label_id, with the fix when one label has that name', async () => {
      const server = serverFor(store);
      await importFile({ table: table('labels'), input: file(tmp(), 'l.csv', 'name\nBlue Note\n') }, server);
      await store.query(`insert into releases (release_title, label) values ('Orphan', 'Blue Note'), ('Nowhere', 'Unknown Records')`);
      const [label] = await rowsOf(store, 'labels', 'id');
      const found: Finding[] = [];
      for await (const page of checkCatalog({ transport: server, tables: TABLES, collections: ['labels', 'releases'], rules: new Set(['unresolved-reference']), now: Date.now() } as never)) found.push(...page);
      expect(found.map((f) => [f.field, f.fix, f.message]).sort((x, y) => String(x[2]).localeCompare(String(y[2])))).toEqual([
        ['label_id', label.id, `label says “Blue Note” but label_id is empty; it names ${label.id}`],
        ['label_id', null, 'label says “Unknown Records” but label_id is empty; no record has that name'],
      ]);
    });

    it('--sync removes what the file no longer has within the scope, and a dry run only plans it', async () => {
      const server = serverFor(store);
      const all = file(tmp(), 'g.csv', 'name\nJazz\nRock\nBlues\n');
      await importFile({ table: table('genres'), input: all }, server);
      const fewer = file(tmp(), 'g2.csv', 'name\nRock\n');
      const scope = { scope: 'all' as const, scopeText: 'all', cascade: false, tables: TABLES };
      const plan = await importFile({ table: table('genres'), input: fewer, sync: scope, dryRun: true }, server);
      expect(plan.sync).toMatchObject({ deletes: 2, held: null });
      expect((await rowsOf(store, 'genres', 'id, name')).length).toBe(3);
      const done = await importFile({ table: table('genres'), input: fewer, sync: scope }, server);
      expect(done).toMatchObject({ unchanged: 1, sync: { deletes: 2 } });
      expect((await rowsOf(store, 'genres', 'id, name')).map((r) => r.name)).toEqual(['Rock']);
    });
  });
}
