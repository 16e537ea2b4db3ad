import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PG_URL, tempDir } from '../support/stores.js';
import { catalog, ensureBuilt, startServe, type Serve } from './support.js';

/**
 * Issue 26's migration, as a label's data person does it: a multi-file export of another system
 * (its own integer ids, names for references, accents and sloppy spacing) goes into an empty
 * catalog with one `catalog import DIR`, no id computing; a second run changes nothing; a renamed
 * artist updates one record; an album gone from the source disappears with --sync; restoring the
 * file brings it back. On the embedded store and (with CATALOG_TEST_DATABASE_URL) PostgreSQL.
 */

const csv = (rows: string[][]) => `${rows.map((r) => r.map((c) => (/[",\n]/.test(c) ? `"${c.replace(/"/g, '""')}"` : c)).join(',')).join('\n')}\n`;

/** The other system's export: `SourceId` columns hold its integer ids, references are names. */
function writeExport(dir: string, opts: { artistName?: string; dropAlbum?: boolean } = {}): void {
  // recreated each time: a file left from an earlier shape must not be imported
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const w = (name: string, rows: string[][]) => writeFileSync(join(dir, name), csv(rows));
  w('genre.csv', [['SourceId', 'name'], ['1', 'Jazz'], ['2', 'Música Popular Brasileira'], ['3', 'Rock']]);
  w('labels.csv', [['SourceId', 'name'], ['10', 'Blue Note'], ['11', 'Gravadora Élite']]);
  w('subgenres.csv', [['SourceId', 'genre', 'name'], ['5', 'Jazz', 'Hard Bop'], ['6', 'Rock', 'Hard Bop']]);
  w('artists.csv', [['SourceId', 'stage_name', 'city'], ['100', opts.artistName ?? 'Antônio Carlos Jobim', 'Rio de Janeiro'], ['101', 'Art Blakey', 'Pittsburgh']]);
  const albums = [
    ['AlbumId', 'release_title', 'upc_code', 'catalog_number', 'label', 'genre', 'subgenre'],
    ['200', 'Wave', '', 'EL-0001', 'gravadora elite', '  musica popular brasileira', ''],
    ['201', 'Moanin’', '0724349532427', 'BN-4003', 'BLUE NOTE ', 'jazz', 'hard bop'],
    ['202', 'Free for All', '0724352148226', 'BN-4170', 'Blue  Note', 'Jazz', 'Hard Bop'],
  ];
  w('releases.csv', opts.dropAlbum ? albums.filter((a) => a[0] !== '202') : albums);
  w('tracks.csv', [
    ['TrackId', 'AlbumId', 'track_title', 'isrc_code', 'genre'],
    ['1', '200', 'Wave', 'BR-AAA-67-00001', 'MPB'],
    ['2', '201', 'Moanin’', 'USBN25900001', 'Jazz'],
    ['3', '202', 'Free for All', 'usbn2-64-00002', 'Jazz'],
  ]);
}

/** Drops a PostgreSQL schema a test made. */
async function dropSchema(name: string): Promise<void> {
  const { default: pg } = await import('pg');
  const c = new pg.Client({ connectionString: PG_URL });
  await c.connect();
  await c.query(`drop schema if exists ${name} cascade`);
  await c.end();
}

const STORES = [
  { kind: 'embedded (PGlite)', skip: false, args: (dir: string) => ['--data', join(dir, 'data')] },
  { kind: 'PostgreSQL', skip: !PG_URL, args: () => ['--database-url', PG_URL!, '--db-schema', `catalog_migrate_${process.pid}`] },
];

for (const store of STORES) {
  describe.skipIf(store.skip)(`migrating another system's export into ${store.kind}${store.skip ? ' (SKIPPED: set CATALOG_TEST_DATABASE_URL)' : ''}`, () => {
    let serve: Serve;
    let dir: string;
    const run = (args: string[]) => catalog(['--url', serve.url, ...args]);
    const json = async (args: string[]) => JSON.parse((await run([...args, '-o', 'json'])).stdout) as Array<Record<string, unknown>>;

    beforeAll(async () => {
      ensureBuilt();
      dir = tempDir('e2e-migrate-');
      serve = await startServe(store.args(dir));
    });
    afterAll(async () => {
      await serve?.stop();
      if (store.kind === 'PostgreSQL' && PG_URL) {
        await dropSchema(`catalog_migrate_${process.pid}`);
      }
    });

    it('one import DIR migrates it, a re-run changes nothing, a rename updates one record, --sync removes and restores an album', async () => {
      const src = join(dir, 'export');
      writeExport(src);
      // artists have no default key: the city stands for an artist here (names change, as the rename below does)
      const args = ['import', src, '--ignore-unknown', '--key', 'city', '--create-missing'];

      const first = await run(args);
      expect(first.code, first.stderr).toBe(0);
      expect(first.stderr).toMatch(/releases\s+3 rows: 3 inserted/);
      const releases = await json(['releases', 'list', '--select', 'release_title,label,label_id,genre_id,subgenre_id', '--order', 'release_title']);
      const labels = await json(['labels', 'list', '--select', 'id,name']);
      const genres = await json(['genres', 'list', '--select', 'id,name']);
      const idOf = (rows: Array<Record<string, unknown>>, name: string) => rows.find((r) => r.name === name)?.id;
      // names with other case, spacing and accents found their records; the ids were never computed by hand
      expect(releases.map((r) => [r.release_title, r.label_id, r.genre_id])).toEqual([
        ['Free for All', idOf(labels, 'Blue Note'), idOf(genres, 'Jazz')],
        ['Moanin’', idOf(labels, 'Blue Note'), idOf(genres, 'Jazz')],
        ['Wave', idOf(labels, 'Gravadora Élite'), idOf(genres, 'Música Popular Brasileira')],
      ]);
      const subgenres = await json(['subgenres', 'list', '--select', 'id,genre,name']);
      const jazzBop = subgenres.find((s) => s.genre === 'Jazz')?.id;
      expect(releases.filter((r) => r.subgenre_id !== null).map((r) => r.subgenre_id)).toEqual([jazzBop, jazzBop]);
      // a track's genre "MPB" is only text on tracks (no reference): it is kept as written
      expect((await json(['tracks', 'list', '--select', 'isrc_code', '--order', 'isrc_code'])).map((t) => t.isrc_code)).toEqual(['BR-AAA-67-00001', 'USBN25900001', 'usbn2-64-00002']);

      const again = await run(args);
      expect(again.code, again.stderr).toBe(0);
      expect(again.stderr).toMatch(/0 inserted, 0 updated, 15 unchanged, 0 rejected; nothing changed/);

      writeExport(src, { artistName: 'Tom Jobim' });
      const artistsBefore = await json(['artists', 'list', '--select', 'id,stage_name,updated', '--order', 'id']);
      const renamed = await run(args);
      expect(renamed.code, renamed.stderr).toBe(0);
      expect(renamed.stderr).toMatch(/artists\s+2 rows: 0 inserted, 1 updated, 1 unchanged/);
      const artistsAfter = await json(['artists', 'list', '--select', 'id,stage_name,updated', '--order', 'id']);
      expect(artistsAfter.map((a) => a.id)).toEqual(artistsBefore.map((a) => a.id));
      expect(artistsAfter.filter((a, i) => a.updated !== artistsBefore[i].updated).map((a) => a.stage_name)).toEqual(['Tom Jobim']);

      writeExport(src, { artistName: 'Tom Jobim', dropAlbum: true });
      const sync = [...args, '--sync', '--scope', 'all'];
      const plan = await run([...sync, '--dry-run']);
      expect(plan.code, plan.stderr).toBe(0);
      expect(plan.stderr).toMatch(/sync \(all\): would remove 1 release the input does not have\n\s+[0-9a-f-]{36} “Free for All”/);
      expect((await json(['releases', 'list', '--select', 'release_title'])).length).toBe(3);
      const synced = await run([...sync, '--yes']);
      expect(synced.code, synced.stderr).toBe(0);
      expect(synced.stderr).toMatch(/releases\s+2 rows: 0 inserted, 0 updated, 2 unchanged, 1 removed/);
      expect((await json(['releases', 'list', '--select', 'release_title', '--order', 'release_title'])).map((r) => r.release_title)).toEqual(['Moanin’', 'Wave']);

      writeExport(src, { artistName: 'Tom Jobim' });
      const restored = await run([...sync, '--yes']);
      expect(restored.code, restored.stderr).toBe(0);
      expect(restored.stderr).toMatch(/releases\s+3 rows: 1 inserted, 0 updated, 2 unchanged, 0 removed/);
      expect((await json(['releases', 'list', '--select', 'release_title', '--order', 'release_title'])).map((r) => r.release_title)).toEqual(['Free for All', 'Moanin’', 'Wave']);
    });

    it('--sync refuses to remove labels that releases still name, says --cascade; --cascade removes those releases first', async () => {
      // its own catalog: the test above syncs --scope all, which must not meet these rows
      const own = store.kind === 'PostgreSQL' ? ['--database-url', PG_URL!, '--db-schema', `catalog_cascade_${process.pid}`] : ['--data', join(dir, 'cascade-data')];
      const mine = await startServe(own);
      const cli = (args: string[]) => catalog(['--url', mine.url, ...args]);
      try {
        const w = (name: string, rows: string[][]) => writeFileSync(join(dir, name), csv(rows));
        w('cascade-labels.csv', [['name'], ['Cascade A'], ['Cascade B'], ['Other']]);
        w('cascade-releases.csv', [['release_title', 'catalog_number', 'label'], ['One', 'CA-1', 'Cascade A'], ['Two', 'CA-2', 'Cascade A'], ['Three', 'CB-1', 'Cascade B']]);
        expect((await cli(['labels', 'import', join(dir, 'cascade-labels.csv')])).code).toBe(0);
        const rel = await cli(['releases', 'import', join(dir, 'cascade-releases.csv')]);
        expect(rel.code, rel.stderr).toBe(0);
        expect(rel.stderr).toMatch(/3 inserted/);

        // the source no longer has label A; the scope leaves "Other" out of the sync
        w('cascade-labels.csv', [['name'], ['Cascade B']]);
        const sync = ['labels', 'import', join(dir, 'cascade-labels.csv'), '--sync', '--scope', 'name=like.Cascade*', '--yes'];
        const refused = await cli(sync);
        expect(refused.code).toBe(1);
        expect(refused.stderr).toMatch(/--sync would remove labels that releases still refer to \(label_id\): .*“One”.*“Two”|--sync would remove labels that releases still refer to \(label_id\): .*“Two”.*“One”/);
        expect(refused.stderr).toMatch(/--cascade removes those releases first \(nothing was removed/);
        const names = async () => JSON.parse((await cli(['labels', 'list', '--select', 'name', '--order', 'name', '-o', 'json'])).stdout).map((r: { name: string }) => r.name);
        expect(await names()).toEqual(['Cascade A', 'Cascade B', 'Other']);

        const cascaded = await cli([...sync, '--cascade']);
        expect(cascaded.code, cascaded.stderr).toBe(0);
        expect(cascaded.stderr).toMatch(/removed first \(--cascade\): 2 releases that refer to them/);
        expect(await names()).toEqual(['Cascade B', 'Other']);
        const titles = JSON.parse((await cli(['releases', 'list', '--select', 'release_title', '-o', 'json'])).stdout).map((r: { release_title: string }) => r.release_title);
        expect(titles).toEqual(['Three']);
      } finally {
        await mine.stop();
        if (store.kind === 'PostgreSQL' && PG_URL) {
          await dropSchema(`catalog_cascade_${process.pid}`);
        }
      }
    });
  });
}
