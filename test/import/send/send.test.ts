import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HttpRequest, Transport } from '../../../src/client/transport.js';
import { parsePrefer } from '../../../src/grammar/prefer.js';
import { parseQuery } from '../../../src/grammar/parse.js';
import { FieldResolver } from '../../../src/import/shape/mapping.js';
import { settle } from '../../../src/import/options.js';
import { inListQuery, rangeQuery, writePrefer, writeQuery } from '../../../src/import/requests.js';
import type { Batch } from '../../../src/import/batch/batch.js';
import { Sender } from '../../../src/import/send/send.js';
import { ServiceError } from '../../../src/client/errors.js';
import { RowShaper, Shape, planShape } from '../../../src/import/shape/shape.js';
import { keyOf } from '../../../src/import/shape/rows.js';
import type { Store } from '../../../src/store/store.js';
import { disposeStore, STORE_KINDS } from '../../support/stores.js';
import { countOf, serverFor, table } from '../support.js';

const labelId = (n: number) => `1ab00000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const releaseId = (n: number) => `e0000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

/** A Shape for a JSON input with these fields, and a batch of its rows. */
function shapeFor(name: string, fields: string[], opts: { onConflict?: string[] } = {}) {
  const t = table(name);
  const shaper = new RowShaper(new FieldResolver(t, {}), false, null, []);
  for (const f of fields) shaper.resolver.resolve(f);
  const settings = settle({ table: t, input: 'x.json', retryDelayMs: 1, onConflict: opts.onConflict });
  const shape = new Shape(shaper, planShape(t, shaper.resolver, settings.keyColumns, { onConflict: opts.onConflict, ignoreDuplicates: false }));
  const batch = (rows: Array<Record<string, unknown>>): Batch => ({
    start: 0,
    line: 1,
    end: rows.length,
    bytes: 2,
    rejects: [],
    deduped: 0,
    unchanged: 0,
    rows: rows.map((values, index) => {
      const rec = { index, line: index + 1, values };
      const built = shaper.shape(rec);
      if (!built.ok) throw new Error(built.message);
      return shape.jsonRow(rec, built.row, shape.plan.conflictKey ? keyOf(built.row, shape.plan.conflictKey) : null);
    }),
  });
  return { shape, settings, batch };
}

describe('import requests go through the grammar', () => {
  it('parse back to what they say', () => {
    expect(parseQuery(writeQuery(['id', 'release title'], ['id']))).toMatchObject({ columns: ['id', 'release title'], onConflict: ['id'] });
    expect(writeQuery(null, null)).toBe('');
    const p = parsePrefer(writePrefer({ keyed: true, ignoreDuplicates: true, missingDefault: true, skipUnchanged: true }));
    expect(p).toMatchObject({ resolution: 'ignore-duplicates', missing: 'default', unchanged: 'skip', return: 'minimal', invalid: [] });
    const keys = ['a,b', 'c)d', '"q"', ' lead', 'back\\slash'];
    const q = parseQuery(inListQuery(['id', 'name'], 'name', keys));
    expect(q.where[0].condition).toMatchObject({ kind: 'filter', op: 'in', value: keys });
    expect(parseQuery(rangeQuery(['id'], 'id', 'a', 'b', 40))).toMatchObject({ page: [{ limit: 40 }], where: [{ condition: { op: 'gte', value: 'a' } }, { condition: { op: 'lte', value: 'b' } }] });
  });
});

for (const kind of STORE_KINDS) {
  describe.skipIf(kind.skip)(`send stage (${kind.kind})`, () => {
    let store: Store & { drop?(): Promise<void> };
    beforeAll(async () => {
      store = await kind.make();
      await store.query(`insert into ${store.schema}.labels (id, name) values ('${labelId(1)}', 'L')`);
    });
    afterAll(async () => disposeStore(store));

    it('bisects a refused batch down to its bad row; every other row lands', async () => {
      const { shape, settings, batch } = shapeFor('releases', ['id', 'release_title', 'label_id']);
      const server = serverFor(store, { plainPostgrest: true });
      const sender = await Sender.open({ transport: server, shape, settings, headers: null, shrink: () => {} });
      const rows = [1, 2, 3, 4].map((n) => ({ id: releaseId(n), release_title: `T${n}`, label_id: labelId(n === 3 ? 999 : 1) }));
      const out = await sender.process(batch(rows));
      expect(out).toMatchObject({ inserted: 3, updated: 0, rejects: [{ record: { line: 3 }, code: '23503' }] });
      expect(await countOf(store, 'releases')).toBe(3);
      // halves: [1,2,3,4] → [1,2] ✓, [3,4] → [3] ✗, [4] ✓
      expect(server.log.filter((l) => l.req.method === 'POST').map((l) => JSON.parse(l.req.body as string).length)).toEqual([4, 2, 2, 1, 1]);
    });

    it('leaves rows equal to the stored ones alone and counts the rest as updates', async () => {
      const { shape, settings, batch } = shapeFor('labels', ['id', 'name']);
      const sender = await Sender.open({ transport: serverFor(store, { plainPostgrest: true }), shape, settings, headers: null, shrink: () => {} });
      const out = await sender.process(batch([{ id: labelId(1), name: 'L' }, { id: labelId(2), name: 'New' }]));
      expect(out).toMatchObject({ inserted: 1, updated: 0, unchanged: 1, rejects: [] });
      const again = await sender.process(batch([{ id: labelId(2), name: 'Renamed' }]));
      expect(again).toMatchObject({ inserted: 0, updated: 1, unchanged: 0 });
    });

    it('asks for smaller batches on 413 and still lands every row', async () => {
      const { shape, settings, batch } = shapeFor('labels', ['id', 'name']);
      const asked: Array<[number, number]> = [];
      const server = serverFor(store, { plainPostgrest: true, maxBodyBytes: 400 });
      const sender = await Sender.open({ transport: server, shape, settings, headers: null, shrink: (r, b) => asked.push([r, b]) });
      const rows = Array.from({ length: 8 }, (_, i) => ({ id: labelId(100 + i), name: `label number ${i} ${'x'.repeat(40)}` }));
      const out = await sender.process(batch(rows));
      expect(out.inserted).toBe(8);
      expect(asked[0][0]).toBe(4);
      expect(server.log.some((l) => l.res.status === 413)).toBe(true);
    });

    it('a fault not about the rows stops the import (the service’s fault, thrown as it is)', async () => {
      const { shape, settings, batch } = shapeFor('labels', ['id', 'name']);
      const refusing: Transport = {
        send: async (req) => (req.method === 'POST' ? { status: 401, headers: {}, body: JSON.stringify({ code: 'PGRST301', message: 'JWT invalid', details: null, hint: null }) } : serverFor(store).send(req)),
      };
      const sender = await Sender.open({ transport: refusing, shape, settings, headers: null, shrink: () => {} });
      const err = await sender.process(batch([{ id: labelId(200), name: 'x' }])).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ServiceError);
      expect(err).toMatchObject({ status: 401, code: 'PGRST301', message: 'JWT invalid' });
    });

    it('(mocked 503s) retries a keyed batch after a gateway error, never a plain insert', async () => {
      const server = serverFor(store, { plainPostgrest: true });
      let failures = 0;
      const flaky = (n: number): Transport & { posts: HttpRequest[] } => {
        const posts: HttpRequest[] = [];
        return {
          posts,
          send: async (req) => {
            if (req.method === 'POST') posts.push(req);
            if (req.method === 'POST' && failures < n) {
              failures++;
              return { status: 503, headers: {}, body: 'busy' };
            }
            return server.send(req);
          },
        };
      };
      const keyed = shapeFor('labels', ['id', 'name']);
      const t1 = flaky(2);
      const s1 = await Sender.open({ transport: t1, ...keyed, headers: null, shrink: () => {} });
      expect(await s1.process(keyed.batch([{ id: labelId(300), name: 'x' }]))).toMatchObject({ inserted: 1 });
      expect(t1.posts).toHaveLength(3);
      failures = 0;
      const plain = shapeFor('labels', ['name']);
      const t2 = flaky(1);
      const s2 = await Sender.open({ transport: t2, ...plain, headers: null, shrink: () => {} });
      const err = await s2.process(plain.batch([{ name: 'y' }])).catch((e: unknown) => e);
      expect(err).toMatchObject({ status: 503 });
      expect(t2.posts).toHaveLength(1);
    });

    it('a dry run asks the service about a conflict key that is not the primary key (42P10), and writes nothing', async () => {
      const { shape, batch } = shapeFor('tracks', ['isrc_code', 'track_title'], { onConflict: ['isrc_code'] });
      const settings = settle({ table: table('tracks'), input: 'x.json', dryRun: true, onConflict: ['isrc_code'] });
      const err = await Sender.open({ transport: serverFor(store), shape, settings, headers: null, shrink: () => {} }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ServiceError);
      expect(err).toMatchObject({ code: '42P10' });
      expect(batch).toBeDefined();
      expect(await countOf(store, 'tracks')).toBe(0);
    });
  });
}
