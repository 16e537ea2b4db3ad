import { afterAll, describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../src/schema/migrations.js';
import { migrate } from '../../src/store/migrate.js';
import type { Store } from '../../src/store/store.js';
import { STORE_KINDS, disposeStore } from '../support/stores.js';

const id = (prefix: string, n: number) => `${prefix}-0000-4000-8000-${String(n).padStart(12, '0')}`;
const T1 = id('70000c29', 1);
const T2 = id('70000c29', 2);
const A1 = id('a0000c29', 1);

/** Turns a migrated catalog back into one made before migration 4: no link triggers, free-form jsonb. */
async function asBeforeMigration4(store: Store): Promise<void> {
  await store.query('drop trigger tracks_links on tracks');
  // migration 5's statement trigger (gone since migration 8) and migration 8's row trigger
  await store.query('drop trigger if exists tracks_links_inserted on tracks');
  await store.query('drop trigger if exists tracks_link_ids on tracks');
  await store.query('drop trigger releases_links on releases');
  await store.query('drop trigger artists_renamed on artists');
  await store.query('delete from catalog_migrations where version >= 4');
}

/** Rows as a catalog held them before: the shapes people improvised, and some that fit nothing. */
const OLD_RELEASES: Array<[string, unknown]> = [
  ['bare ids', [T2, T1.toUpperCase()]],
  ['own keys', [{ track_id: T1, track_number: '2', disc_number: 1 }, { track_id: T2, track_number: 1 }]],
  ['unreadable', [{ id: T1, position: 1 }, { title: 'no id here' }]],
  ['not a list', { side: 'A' }],
];
const OLD_TRACKS: Array<[string, unknown]> = [
  ['names as strings', ['Someone', 'Someone Else']],
  ['artist keys', [{ artist_id: A1, artist: 'Old Name', role: 'vocals' }]],
  ['one object', { name: 'Solo' }],
  ['unreadable credit', [{ name: 'Fine' }, 42]],
];

for (const { kind, make, skip } of STORE_KINDS) {
  describe.skipIf(skip)(`link fields of a catalog made before migration 4: ${kind}${skip ? ' (SKIPPED: set CATALOG_TEST_DATABASE_URL)' : ''}`, () => {
    let store: Store & { drop?(): Promise<void> };
    afterAll(async () => {
      if (store) await disposeStore(store);
    });

    it('are rewritten in place into the documented shapes; what fits no shape is left as it was', async () => {
      store = await make();
      await asBeforeMigration4(store);
      await store.query(`insert into artists (id, stage_name) values ($1, 'Current Name')`, [A1]);
      await store.query(`insert into tracks (id, track_title) values ($1, 'One'), ($2, 'Two')`, [T1, T2]);
      for (const [title, links] of OLD_RELEASES) await store.query('insert into releases (release_title, tracks) values ($1, $2::text::jsonb)', [title, JSON.stringify(links)]);
      for (const [title, credits] of OLD_TRACKS) await store.query('insert into tracks (track_title, primary_artists) values ($1, $2::text::jsonb)', [title, JSON.stringify(credits)]);

      expect((await migrate(store)).applied).toEqual(MIGRATIONS.filter((m) => m.version >= 4).map((m) => m.version));

      const releases = await store.query<{ release_title: string; tracks: unknown }>('select release_title, tracks from releases');
      const byTitle = Object.fromEntries(releases.rows.map((r) => [r.release_title, r.tracks]));
      expect(byTitle['bare ids']).toEqual([{ id: T2, position: 1 }, { id: T1, position: 2 }]);
      expect(byTitle['own keys']).toEqual([{ id: T1, position: 2, disc: 1 }, { id: T2, position: 1 }]);
      expect(byTitle.unreadable).toEqual(OLD_RELEASES[2][1]);
      expect(byTitle['not a list']).toEqual(OLD_RELEASES[3][1]);

      const tracks = await store.query<{ track_title: string; primary_artists: unknown }>('select track_title, primary_artists from tracks');
      const credits = Object.fromEntries(tracks.rows.map((r) => [r.track_title, r.primary_artists]));
      expect(credits['names as strings']).toEqual([{ name: 'Someone' }, { name: 'Someone Else' }]);
      // the old copied name stays until the artist is renamed or `catalog check` reports it (credit-name)
      expect(credits['artist keys']).toEqual([{ id: A1, name: 'Old Name', role: 'vocals' }]);
      expect(credits['one object']).toEqual([{ name: 'Solo' }]);
      expect(credits['unreadable credit']).toEqual(OLD_TRACKS[3][1]);

      // after the migration the release links navigate, and writes are checked
      const { rows } = await store.query<{ track_title: string }>(`select t.track_title from releases r, tracks(r) t where r.release_title = 'bare ids'`);
      expect(rows.map((r) => r.track_title)).toEqual(['Two', 'One']);
      await expect(store.query(`update releases set tracks = '[1]' where release_title = 'bare ids'`)).rejects.toMatchObject({ code: '23514' });
      // a row whose link fits no shape can still be edited in its other fields
      await store.query(`update releases set release_title = 'still unreadable' where release_title = 'unreadable'`);
      expect((await migrate(store)).applied).toEqual([]);
    });
  });
}
