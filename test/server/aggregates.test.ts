import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileQuery } from '../../src/grammar/compile.js';
import { parseQuery } from '../../src/grammar/parse.js';
import type { App } from '../../src/server/app.js';
import type { Store } from '../../src/store/store.js';
import { STORE_KINDS, disposeStore } from '../support/stores.js';
import { L, appFor, seedFixture, send } from './support.js';

describe('aggregates in the grammar', () => {
  it.each(['genre,count()', 'total:count()', 'release_date.max(),release_date.min()', 'n:catalog_number::text.count()::int', 'name,releases(count())'])(
    'select=%s parses (when enabled) and compiles back the same',
    (select) => {
      const q = parseQuery(`select=${select}`, { aggregates: true });
      expect(decodeURIComponent(compileQuery(q))).toBe(`select=${select}`);
    },
  );

  it('stays refused with PGRST123 unless enabled, as PostgREST does by default', () => {
    expect(() => parseQuery('select=count()')).toThrow(expect.objectContaining({ code: 'PGRST123' }));
  });
});

/** PostgREST 12's aggregates (db-aggregates-enabled): `count()`, `col.sum()` … grouped by the other selected fields. */
for (const { kind, make, skip } of STORE_KINDS) {
  describe.skipIf(skip)(`aggregates over ${kind}${skip ? ' (SKIPPED: set CATALOG_TEST_DATABASE_URL)' : ''}`, () => {
    let store: Store & { drop?(): Promise<void> };
    let app: App & { logged: string[] };
    const get = (path: string, headers: Record<string, string> = {}) => send(app, 'GET', path, { headers });
    beforeAll(async () => {
      store = await make();
      app = appFor(store, { aggregates: true });
      await seedFixture(store);
    });
    afterAll(async () => {
      expect(app?.logged ?? []).toEqual([]);
      if (store) await disposeStore(store);
    });

    it('count() alone counts the rows; with filters, the matching ones', async () => {
      expect((await get('/releases?select=count()')).json).toEqual([{ count: 15 }]);
      expect((await get(`/releases?select=count()&label_id=eq.${L[0]}`)).json).toEqual([{ count: 8 }]);
    });

    it('groups by the other selected fields: releases per label, per compilation flag (aliased)', async () => {
      const perLabel = (await get('/releases?select=label_id,count()&order=label_id.nullsfirst')).json;
      expect(perLabel).toEqual([{ label_id: null, count: 1 }, { label_id: L[0], count: 8 }, { label_id: L[1], count: 6 }]);
      const flags = (await get('/releases?select=is_compilation,total:count()&order=is_compilation')).json;
      expect(flags).toEqual([{ is_compilation: false, total: 12 }, { is_compilation: true, total: 3 }]);
    });

    it('max, min, count of a column, and casts before and after', async () => {
      expect((await get('/releases?select=release_date.max(),release_date.min()')).json).toEqual([{ max: '1969-06-15', min: '1956-02-15' }]);
      expect((await get('/releases?select=n:release_date.count()::text')).json).toEqual([{ n: '14' }]);
      expect((await get('/releases?select=avg:contracts->>year::int.avg()::int')).json).toEqual([{ avg: 1963 }]);
      expect((await get('/releases?select=sum:contracts->>year::int.sum()')).json).toEqual([{ sum: 29445 }]);
    });

    it('inside an embed: releases per label', async () => {
      const r = (await get('/labels?select=name,releases(count())&order=name')).json;
      expect(r).toEqual([
        { name: 'Blue Note', releases: [{ count: 8 }] },
        { name: 'Impulse, Records', releases: [{ count: 0 }] },
        { name: 'Verve', releases: [{ count: 6 }] },
      ]);
    });

    it('count=exact counts the groups; an aggregate beside an embed on one level is a clear 400', async () => {
      const r = await get('/releases?select=label_id,count()', { Prefer: 'count=exact' });
      expect(r.headers.get('content-range')).toBe('0-2/3');
      const mixed = await get('/releases?select=count(),labels(name)');
      expect([mixed.status, mixed.json.code]).toEqual([400, 'PGRST123']);
    });

    // PostgREST 12.2.3's aggregates beside and inside to-one spreads (its AggregateFunctionsSpec,
    // "performing aggregations on spreaded fields from an embedded resource"), on this schema.
    // The oracle for each grouping is the same rows read without aggregates, grouped here.
    const canon = (r: Record<string, unknown>) => JSON.stringify(Object.entries(r).sort(([a], [b]) => a.localeCompare(b)));
    const byKey = (rows: Array<Record<string, unknown>>) => [...rows].sort((a, b) => canon(a).localeCompare(canon(b)));
    const grouped = (rows: Array<Record<string, unknown>>, keys: string[], count: string) => {
      const groups = new Map<string, Record<string, unknown>>();
      for (const r of rows) {
        const id = JSON.stringify(keys.map((k) => r[k]));
        const g = groups.get(id) ?? { ...Object.fromEntries(keys.map((k) => [k, r[k]])), [count]: 0 };
        g[count] = (g[count] as number) + 1;
        groups.set(id, g);
      }
      return byKey([...groups.values()]);
    };

    it('an aggregate beside a spread counts over the join: count(),...labels!inner() and !left', async () => {
      const inner = await get('/releases?select=count(),...labels!inner()');
      expect([inner.status, inner.json]).toEqual([200, [{ count: 14 }]]);
      expect((await get('/releases?select=count(),...labels()')).json).toEqual([{ count: 15 }]);
      expect((await get('/releases?select=n:count(),...labels!inner()&is_compilation=eq.true')).json).toEqual([{ n: 2 }]); // R5, R10 (R15 has no label)
    });

    it("an aggregate inside a spread is computed once over the result, not per parent row: ...labels!inner(name.max())", async () => {
      const r = await get('/releases?select=...labels!inner(name.max())');
      expect([r.status, r.json]).toEqual([200, [{ max: 'Verve' }]]);
      expect((await get('/releases?select=...labels!inner(first:name.min(),names:name.count())')).json).toEqual([{ first: 'Blue Note', names: 14 }]);
      // ...with count() inside the spread: the rows the spread matched (a left spread without a label adds none)
      expect((await get('/releases?select=...labels(matched:count())')).json).toEqual([{ matched: 14 }]);
    });

    it("a spread's columns group the level's aggregates, with aliases; a parent column groups a spread's aggregate", async () => {
      const rows = (await get('/releases?select=...labels(name)')).json;
      const r = await get('/releases?select=n:count(),...labels(label:name)');
      expect(r.status).toBe(200);
      expect(byKey(r.json)).toEqual(grouped(rows.map((x: { name: string | null }) => ({ label: x.name })), ['label'], 'n'));
      expect(byKey(r.json)).toEqual(byKey([{ label: 'Blue Note', n: 8 }, { label: 'Verve', n: 6 }, { label: null, n: 1 }]));

      const flags = (await get('/releases?select=is_compilation,...labels!inner(labelled:name.count())&order=is_compilation')).json;
      expect(flags).toEqual([{ is_compilation: false, labelled: 12 }, { is_compilation: true, labelled: 2 }]);
    });

    it('aggregates grouped by the columns of two spreads (labels and genres)', async () => {
      const rows = (await get('/releases?select=...labels!inner(label:name),...genres!inner(genre:name)')).json;
      const r = await get('/releases?select=...labels!inner(label:name),...genres!inner(genre:name),count()');
      expect(r.status).toBe(200);
      expect(byKey(r.json)).toEqual(grouped(rows, ['label', 'genre'], 'count'));
      expect(r.json.length).toBeGreaterThan(1);
    });

    it('inside an embed: releases per label counted over their join to genres', async () => {
      const r = (await get('/labels?select=name,releases(count(),...genres!inner())&order=name')).json;
      expect(r).toEqual([
        { name: 'Blue Note', releases: [{ count: 6 }] },
        { name: 'Impulse, Records', releases: [{ count: 0 }] },
        { name: 'Verve', releases: [{ count: 4 }] },
      ]);
    });

    it("count=exact counts the groups a spread's columns make", async () => {
      const r = await get('/releases?select=count(),...labels(name)', { Prefer: 'count=exact' });
      expect(r.status).toBe(200);
      expect(r.headers.get('content-range')).toBe('0-2/3');
    });

    it('a JSON embed inside a spread beside an aggregate stays a clear 400 PGRST123', async () => {
      const r = await get('/releases?select=count(),...labels!inner(releases(release_title))');
      expect([r.status, r.json.code]).toEqual([400, 'PGRST123']);
    });
  });
}
