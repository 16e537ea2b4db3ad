import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { COPY_CSV } from '../../src/grammar/media.js';
import { sourceIdsTable } from '../../src/schema/source-ids.js';
import type { App } from '../../src/server/app.js';
import type { Store } from '../../src/store/store.js';
import { STORE_KINDS, disposeStore } from '../support/stores.js';
import { appFor, send } from './support.js';

/**
 * Issue 35 item 5: three imports of the same keyless file at once (each proposing ids of its own)
 * end with each key stored once, because `match=` decides ids where the write happens, under a
 * lock on the table's keys. Without it (the control) every key is stored three times.
 */
const N = 500;
const isrc = (i: number) => `QZCON${String(i).padStart(7, '0')}`;
const rows = Array.from({ length: N }, (_, i) => ({ isrc_code: isrc(i), track_title: `Track ${i}`, source_ids: { legacy: `L${i}` } }));

function copyBody(order: number[]): string {
  const lines = order.map((i) => `${randomUUID()},${isrc(i).toLowerCase()},Track ${i},"{""legacy"":""L${i}""}"`);
  return `id,isrc_code,track_title,source_ids\n${lines.join('\n')}\n`;
}

for (const { kind, make, skip } of STORE_KINDS) {
  describe.skipIf(skip)(`concurrent keyless imports over ${kind}${skip ? ' (SKIPPED: set CATALOG_TEST_DATABASE_URL)' : ''}`, () => {
    let store: Store & { drop?(): Promise<void> };
    let app: App & { logged: string[] };
    const count = async (sql: string) => (await store.query<{ n: number }>(sql)).rows[0].n;

    beforeAll(async () => {
      store = await make();
      app = appFor(store);
    });
    beforeEach(async () => {
      await store.query('delete from tracks');
    });
    afterAll(async () => {
      expect(app?.logged ?? []).toEqual([]);
      if (store) await disposeStore(store);
    });

    it('three concurrent POSTs of the same 500 rows with different proposed ids store each key once', async () => {
      const forward = [...Array(N).keys()];
      const prefer = 'resolution=merge-duplicates, unchanged=skip, match=source_ids.legacy|isrc_code';
      const answers = await Promise.all([
        send(app, 'POST', '/tracks', { body: rows.map((r) => ({ id: randomUUID(), ...r })), headers: { Prefer: prefer } }),
        send(app, 'POST', '/tracks', { body: copyBody([...forward].reverse()), headers: { Prefer: prefer, 'Content-Type': COPY_CSV } }),
        // no ids at all: the service makes them for new records
        send(app, 'POST', '/tracks', { body: rows.map(({ isrc_code, track_title }) => ({ isrc_code: isrc_code.replace(/^(..)(...)/, '$1-$2-'), track_title })), headers: { Prefer: prefer } }),
      ]);
      expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 201].sort());
      const counts = answers.map((a) => a.headers.get('catalog-counts'));
      // one of them made the records; the others found all 500 (changed: their ISRC spelling, or not)
      expect(counts.filter((c) => c?.startsWith('inserted=500,'))).toHaveLength(1);
      expect(counts.filter((c) => c?.startsWith('inserted=0,'))).toHaveLength(2);
      expect(await count('select count(*)::int as n from tracks')).toBe(N);
      expect(await count(`select count(distinct catalog_isrc_key(isrc_code))::int as n from tracks`)).toBe(N);
      expect(await count(`select count(*)::int as n from ${sourceIdsTable(store.schema)} where collection = 'tracks'`)).toBe(N);
      const wrongly = await count(`select count(*)::int as n from tracks t where source_ids(t)->>'legacy' <> 'L' || (right(catalog_isrc_key(t.isrc_code), 7))::int`);
      expect(wrongly).toBe(0);
    });

    it('the control: the same three POSTs upserting on their own ids store every key three times', async () => {
      const prefer = 'resolution=merge-duplicates, unchanged=skip';
      const plain = rows.map(({ isrc_code, track_title }) => ({ isrc_code, track_title }));
      await Promise.all([0, 1, 2].map(() => send(app, 'POST', '/tracks', { body: plain.map((r) => ({ id: randomUUID(), ...r })), headers: { Prefer: prefer } })));
      expect(await count('select count(*)::int as n from tracks')).toBe(3 * N);
    });
  });
}
