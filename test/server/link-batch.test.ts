import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COPY_CSV } from '../../src/grammar/media.js';
import type { App } from '../../src/server/app.js';
import { batchKey, copyCreditsPlain, creditsCanonical } from '../../src/server/link-batch.js';
import { CREDIT_SHAPE_PATH } from '../../src/schema/in-database.js';
import { TABLES } from '../../src/schema/catalog.js';
import type { Store } from '../../src/store/store.js';
import { STORE_KINDS, disposeStore } from '../support/stores.js';
import { appFor, send } from './support.js';

/**
 * Issue 36: the service's COPY batches are checked as one set and skip the row triggers
 * (src/server/link-batch.ts, migration 8). Every link value below goes in twice: as a COPY body
 * through the service (the set-based check), and by plain SQL as any outside writer (psql, a real
 * PostgREST) writes it (the row triggers). Both must refuse it with the same code and message, or
 * store the same value.
 */

const id = (prefix: string, n: number) => `${prefix}-0000-4000-8000-${String(n).padStart(12, '0')}`;
const A = [1, 2, 3].map((n) => id('a0000036', n));
const T = [1, 2, 3].map((n) => id('70000036', n));
const GHOST = id('a0000036', 99);

/** Credit lists: good ones (stored as the triggers store them) and bad ones (refused). */
const CREDITS: Array<[string, unknown]> = [
  ['canonical, by id with the name', [{ id: A[0], name: 'Ada Wave' }]],
  ['id without a name', [{ id: A[0], role: 'lead' }]],
  ['a stale name', [{ id: A[1], name: 'Old Name', share: 50 }, { name: 'Outside Writer', share: 50 }]],
  ['an upper-case id', [{ id: A[2].toUpperCase(), name: 'Cy Drum' }]],
  ['names as keys', 'Ada Wave; bo lights'],
  ['a name only', [{ name: 'Someone Else' }]],
  ['an empty list', []],
  ['a null role', [{ id: A[0], role: null }]],
  ['an id that names nothing', [{ id: A[0] }, { id: GHOST, name: 'Gone' }]],
  ['an unknown key', [{ id: A[0], nick: 'x' }]],
  ['a blank name', [{ name: '  ' }]],
  ['a share over 100', [{ name: 'X', share: 150 }]],
  ['a share as text', [{ name: 'X', share: '50' }]],
  ['not a list', { id: A[0] }],
  ['a number in the list', [1]],
  ['an unknown name', 'Nobody Here'],
  ['a malformed id', [{ id: 'a0000036-x', name: 'X' }]],
  ['one id twice, with two names', [{ id: A[0], name: 'Ada Wave' }, { id: A[0], name: 'Ada W.', role: 'mix' }]],
  ['a stale name the byte reader leaves to JSON', [{ id: A[1], name: 'Bo "Lights"' }]],
  ['canonical, several artists and roles', [{ id: A[0], name: 'Ada Wave', role: 'lead' }, { id: A[2], name: 'Cy Drum', share: 12.5 }, { name: 'Outside Writer' }]],
];

/** Release track lists, by the seeded tracks. */
const TRACKS: Array<[string, unknown]> = [
  ['canonical', [{ id: T[0], position: 1 }, { id: T[1], position: 2 }]],
  ['out of order, with discs', [{ id: T[2], position: 1, disc: 2 }, { id: T[1], position: 2 }, { id: T[0], position: 1 }]],
  ['ISRCs as keys', 'GB-AAA-36-00001; GBAAA3600002'],
  ['a null disc', [{ id: T[0], position: 1, disc: null }]],
  ['a track that does not exist', [{ id: T[0], position: 1 }, { id: GHOST, position: 2 }]],
  ['a position twice', [{ id: T[0], position: 1 }, { id: T[1], position: 1 }]],
  ['a position 0', [{ id: T[0], position: 0 }]],
  ['a position 1.5', [{ id: T[0], position: 1.5 }]],
  ['an unknown key', [{ id: T[0], position: 1, side: 'A' }]],
  ['not a list', 'not; a; track'],
];

/** A jsonb cell of a COPY body: the value's JSON (a string of keys is a JSON string, as import sends it). */
const csvCell = (v: unknown) => `"${JSON.stringify(v).replace(/"/g, '""')}"`;

for (const { kind, make, skip } of STORE_KINDS) {
  describe.skipIf(skip)(`checked batches refuse and store what the row triggers do, over ${kind}${skip ? ' (SKIPPED: set CATALOG_TEST_DATABASE_URL)' : ''}`, () => {
    let store: Store & { drop?(): Promise<void> };
    let app: App & { logged: string[] };
    let n = 0;
    beforeAll(async () => {
      store = await make();
      app = appFor(store);
      await store.query(`insert into artists (id, stage_name) select unnest($1::uuid[]), unnest($2::text[])`, [A, ['Ada Wave', 'Bo Lights', 'Cy Drum']]);
      await store.query(`insert into tracks (id, track_title, isrc_code) select unnest($1::uuid[]), 'Song', unnest($2::text[])`, [T, ['GBAAA3600001', 'GBAAA3600002', 'GBAAA3600003']]);
    });
    afterAll(async () => {
      if (store) await disposeStore(store);
    });

    /** The outcome of an outside writer's INSERT: the stored value, or the refusal's code and message. */
    async function outside(table: string, column: string, value: unknown): Promise<unknown> {
      const row = id(table === 'tracks' ? '7a000036' : '2a000036', ++n);
      const title = table === 'tracks' ? 'track_title' : 'release_title';
      try {
        await store.query(`insert into ${table} (id, ${title}, ${column}) values ($1, 'x', $2::text::jsonb)`, [row, JSON.stringify(value)]);
      } catch (err) {
        const e = err as { code?: string; message: string };
        return { code: e.code, message: e.message };
      }
      return (await store.query<{ v: unknown }>(`select ${column} as v from ${table} where id = $1`, [row])).rows[0].v;
    }

    /** The same value as the second row of a COPY body through the service (a good first row beside it). */
    async function service(table: string, column: string, value: unknown): Promise<unknown> {
      const [good, row] = [id(table === 'tracks' ? '7b000036' : '2b000036', ++n), id(table === 'tracks' ? '7b000036' : '2b000036', ++n)];
      const title = table === 'tracks' ? 'track_title' : 'release_title';
      const body = `id,${title},${column}\n${good},ok,\n${row},x,${csvCell(value)}\n`;
      const r = await send(app, 'POST', `/${table}`, { body, headers: { 'Content-Type': COPY_CSV, Prefer: 'return=minimal' } });
      if (r.status >= 400) return { code: r.json.code, message: r.json.message };
      expect(r.status, r.text).toBe(201);
      return (await store.query<{ v: unknown }>(`select ${column} as v from ${table} where id = $1`, [row])).rows[0].v;
    }

    it.each(CREDITS)('credits, %s: the same outcome both ways', async (_name, value) => {
      for (const column of ['primary_artists', 'writer_artists']) {
        const theirs = await outside('tracks', column, value);
        const ours = await service('tracks', column, value);
        expect(ours).toEqual(theirs);
      }
    });

    it.each(TRACKS)('release tracks, %s: the same outcome both ways', async (_name, value) => {
      expect(await service('releases', 'tracks', value)).toEqual(await outside('releases', 'tracks', value));
    });

    it('the cases cover both outcomes: stored values with names from the artists, and refusals with paths', async () => {
      expect(await service('tracks', 'primary_artists', [{ id: A[1], name: 'Old Name' }])).toEqual([{ id: A[1], name: 'Bo Lights' }]);
      expect(await service('tracks', 'remix_artists', [{ id: A[0] }, { id: GHOST }])).toEqual({ code: '23503', message: `remix_artists[1].id: no artist has id ${GHOST}` });
      expect(await service('releases', 'tracks', [{ id: T[1], position: 2 }, { id: T[0], position: 1 }])).toEqual([{ id: T[0], position: 1 }, { id: T[1], position: 2 }]);
    });

    it('a COPY body whose lists JavaScript finds plain is one the database shape test passes (the read then leaves it out)', async () => {
      const tracks = TABLES.find((t) => t.name === 'tracks')!;
      const plan = { table: tracks, columns: ['id', 'primary_artists'].map((n) => tracks.columns.find((c) => c.name === n)!) } as Parameters<typeof copyCreditsPlain>[1];
      const tricky: unknown[] = [
        [{ name: 'X', share: 100.0000000000000001 }], [{ name: ['X'] }], [{ name: 'X', role: ['a'] }], [{ name: 'X', extra: 1 }],
        [{ id: A[0], name: 'Ada Wave', share: 1e2 }], [{ name: 'X\n' }], [{ name: ' ' }], [{ name: 'Ünïcode ✓' }],
      ];
      let plain = 0;
      for (const value of [...CREDITS.map(([, v]) => v), ...tricky]) {
        const body = Buffer.from(`id,primary_artists\n${id('7d000036', 1)},${csvCell(value)}\n`);
        if (!copyCreditsPlain(body, plan)) continue;
        plain++;
        const r = await store.query<{ bad: boolean }>(`select jsonb_path_exists($1::text::jsonb, $2::jsonpath) as bad`, [JSON.stringify(value), CREDIT_SHAPE_PATH]);
        expect([value, r.rows[0].bad]).toEqual([value, false]);
      }
      // the plain ones among them: canonical, id without a name? no (name required), a stale name, a name only, an empty list, 1e2, the unicode name
      expect(plain).toBeGreaterThanOrEqual(5);
      expect(copyCreditsPlain(Buffer.from(`id,primary_artists\n${id('7d000036', 1)},"[{""name"": ""X"", ""share"": 100.0000000000000001}]"\n`), plan)).toBe(false);
    });

    it('a body of new tracks goes straight into the table only when its credits need nothing from the triggers', async () => {
      const tracks = TABLES.find((t) => t.name === 'tracks')!;
      const plan = { table: tracks, columns: ['id', 'primary_artists', 'writer_artists'].map((n) => tracks.columns.find((c) => c.name === n)!) } as Parameters<typeof creditsCanonical>[1];
      const key = (await batchKey(store))!;
      const canonical = async (...cells: unknown[]) => {
        const body = Buffer.from(`id,primary_artists,writer_artists\n${id('7e000036', 1)},${cells.map(csvCell).join(',')}\n`);
        return store.transaction((tx) => creditsCanonical(tx, plan, store.schema, body, key));
      };
      expect(await canonical([{ id: A[0], name: 'Ada Wave' }], [{ name: 'Someone', share: 50 }, { id: A[1], name: 'Bo Lights', role: 'lyrics' }])).toBe(true);
      expect(await canonical([], [{ name: 'Only A Name' }])).toBe(true);
      expect(await canonical([{ id: A[1], name: 'Old Name' }], [])).toBe(false);
      expect(await canonical([{ id: A[0], name: 'Ada Wave' }], [{ id: GHOST, name: 'Gone' }])).toBe(false);
      expect(await canonical([{ id: A[0], name: 'Ada Wave' }], [{ id: A[0], name: 'Ada W.' }])).toBe(false);
      expect(await canonical([{ id: A[0] }], [])).toBe(false);
      expect(await canonical([{ id: A[0], name: 'Ada Wave', nick: 'x' }], [])).toBe(false);
      expect(await canonical('Ada Wave', [])).toBe(false);
    });

    it("the service reads this catalog's key, so its COPY batches take the checked way", async () => {
      expect(await batchKey(store)).toMatch(/^[0-9a-f]{64}$/);
    });

    it('a row without links and a release without tracks go in as they are', async () => {
      expect(await service('tracks', 'primary_artists', null)).toBeNull();
      expect(await service('releases', 'tracks', null)).toBeNull();
    });

    it('an outside writer cannot switch the checks off: catalog.checked_batch at another value is refused (42501)', async () => {
      const refused = await store
        .transaction(async (tx) => {
          await tx.query(`select set_config('catalog.checked_batch', 'guess', true)`);
          await tx.query(`insert into tracks (id, track_title, primary_artists) values ($1, 'x', $2::text::jsonb)`, [id('7c000036', 1), JSON.stringify([{ id: GHOST }])]);
          return null;
        })
        .catch((err: { code?: string; message: string }) => err);
      expect(refused).toMatchObject({ code: '42501', message: expect.stringContaining("catalog.checked_batch is set, and is not this catalog's key") });
      const releases = await store
        .transaction(async (tx) => {
          await tx.query(`select set_config('catalog.checked_batch', 'guess', true)`);
          await tx.query(`update releases set tracks = $1::text::jsonb where false`, [JSON.stringify([{ id: GHOST, position: 1 }])]);
          return null;
        })
        .catch((err: { code?: string }) => err);
      expect(releases).toMatchObject({ code: '42501' });
      expect((await store.query(`select count(*)::int as n from tracks where id = $1`, [id('7c000036', 1)])).rows[0]).toEqual({ n: 0 });
    });
  });
}
