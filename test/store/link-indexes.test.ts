import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/store.js';
import { STORE_KINDS, disposeStore } from '../support/stores.js';

/**
 * Issue 36 (migration 13): rows without links pay nothing for the link indexes. The credits index
 * leaves out tracks whose six credit lists are all null, the releases' tracks index releases
 * without tracks, and what reads through them still does: an artist's tracks (the computed
 * relationship an embedding uses), a `cs` filter on a release's tracks, and a rename of an artist.
 */
const ARTIST = '7a000000-0000-4000-8000-000000000001';
const LINKED_TRACK = '7b000000-0000-4000-8000-000000000001';

for (const { kind, make, skip } of STORE_KINDS) {
  describe.skipIf(skip)(`link indexes hold only rows with links, and are still used, on ${kind}${skip ? ' (SKIPPED: set CATALOG_TEST_DATABASE_URL)' : ''}`, () => {
    let store: Store & { drop?(): Promise<void> };
    const plan = async (sql: string): Promise<string> => {
      const r = await store.transaction(async (tx) => {
        await tx.query('set local enable_seqscan = off');
        return tx.query<Record<string, unknown>>(`explain (format json) ${sql}`);
      });
      return JSON.stringify(r.rows[0]['QUERY PLAN']);
    };

    beforeAll(async () => {
      store = await make();
      await store.query(`insert into artists (id, stage_name) values ('${ARTIST}', 'Index Artist')`);
      await store.query(`insert into tracks (track_title) select 'Plain ' || i from generate_series(1, 3000) i`);
      await store.query(`insert into tracks (id, track_title, primary_artists) values ('${LINKED_TRACK}', 'Credited 0', '[{"id": "${ARTIST}", "name": "Index Artist"}]')`);
      await store.query(`insert into tracks (track_title, writer_artists) select 'Credited ' || i, '[{"id": "${ARTIST}", "name": "Index Artist"}]' from generate_series(1, 40) i`);
      await store.query(`insert into releases (release_title) select 'Plain release ' || i from generate_series(1, 500) i`);
      await store.query(`insert into releases (release_title, tracks) values ('Linked release', '[{"id": "${LINKED_TRACK}", "position": 1}]')`);
      await store.query('analyze tracks');
      await store.query('analyze releases');
    });
    afterAll(async () => {
      if (store) await disposeStore(store);
    });

    it('each index is partial: only rows with links are in it', async () => {
      const defs = (await store.query<{ indexname: string; indexdef: string }>(`select indexname, indexdef from pg_indexes where schemaname = current_schema() and indexname in ('tracks_credit_ids_idx', 'releases_tracks_links_idx') order by 1`)).rows;
      expect(defs.map((d) => d.indexname)).toEqual(['releases_tracks_links_idx', 'tracks_credit_ids_idx']);
      expect(defs[0].indexdef).toMatch(/WHERE \(tracks IS NOT NULL\)$/);
      expect(defs[1].indexdef).toMatch(/WHERE \(\(primary_artists IS NOT NULL\) OR .*\(engineer_artists IS NOT NULL\)\)$/);
    });

    it('PostgreSQL keeps them without a pending list; the embedded store takes loads through one (migration 14)', async () => {
      const rows = (await store.query<{ relname: string; o: string[] }>(`select relname, reloptions as o from pg_class where relnamespace = current_schema()::regnamespace and relname in ('tracks_credit_ids_idx', 'releases_tracks_links_idx') order by 1`)).rows;
      const expected = kind === 'pglite' ? ['fastupdate=on', 'gin_pending_list_limit=16384'] : ['fastupdate=off'];
      expect(rows).toEqual([
        { relname: 'releases_tracks_links_idx', o: expected },
        { relname: 'tracks_credit_ids_idx', o: expected },
      ]);
    });

    it("an artist's tracks (the embedding's computed relationship) are read through the credits index", async () => {
      const text = await plan(`select t.id from artists a cross join lateral tracks(a) t where a.id = '${ARTIST}'`);
      expect(text).toContain('tracks_credit_ids_idx');
      const rows = (await store.query<{ n: number }>(`select count(*)::int as n from artists a cross join lateral tracks(a) t where a.id = '${ARTIST}'`)).rows;
      expect(rows[0].n).toBe(41);
    });

    it("a cs filter on a release's tracks is read through the releases' index", async () => {
      const sql = `select release_title from releases where tracks @> '[{"id": "${LINKED_TRACK}"}]'`;
      expect(await plan(sql)).toContain('releases_tracks_links_idx');
      expect((await store.query<{ release_title: string }>(sql)).rows).toEqual([{ release_title: 'Linked release' }]);
    });

    it("a renamed artist's name is refreshed in every credit that names it, and only there", async () => {
      await store.query(`update artists set stage_name = 'Renamed Index Artist' where id = '${ARTIST}'`);
      const r = await store.query<{ n: number }>(`select count(*)::int as n from tracks where coalesce(primary_artists, writer_artists)->0->>'name' = 'Renamed Index Artist'`);
      expect(r.rows[0].n).toBe(41);
      const plain = await store.query<{ n: number }>(`select count(*)::int as n from tracks where primary_artists is null and writer_artists is null`);
      expect(plain.rows[0].n).toBe(3000);
    });
  });
}
