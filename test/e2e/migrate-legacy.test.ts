import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/stores.js';
import { catalog, type Serve, serveBackends, startServe } from './support.js';

/**
 * Issue 35, done when: another system's multi-file export (integer ids, titles that repeat,
 * references by name, credits as text, releases listing tracks by the source's ids) moves in with
 * ONE `catalog import DIR --plan …` run; a second run changes nothing; a rename, a removed album
 * and an added track are one `--sync` run whose plan says "update 1, insert 1, remove 16".
 */

const PLAN = `source: legacy
files:
  Label.csv:
    collection: labels
    source_id: LabelId
    map: { Name: name }
  Genre.csv:
    collection: genres
    source_id: GenreId
    map: { Name: name }
  Artist.csv:
    collection: artists
    source_id: ArtistId
    map: { Name: stage_name }
  Track.csv:
    collection: tracks
    source_id: TrackId
    map: { Name: track_title }
    ignore: [AlbumId, Milliseconds, UnitPrice]
    links:
      primary_artists: { from: ArtistId, source: artists }
      writer_artists: { from: Composer, split: '\\s*[,/&]\\s*', names_only: true }
  Album.csv:
    collection: releases
    source_id: AlbumId
    map: { Title: release_title, Label: label }
    ignore: [ArtistId]
    links:
      genre_id: { from: GenreId, source: genres }
      tracks: { from: TrackIds, split: ';', source: tracks }
`;

const csvCell = (v: string) => (/[",\n]/.test(v) ? `"${v.replaceAll('"', '""')}"` : v);
const csv = (rows: string[][]) => `${rows.map((r) => r.map(csvCell).join(',')).join('\n')}\n`;

/** Three albums of fifteen tracks; every album is called "Greatest Hits" and track titles repeat. */
function writeExport(dir: string, o: { renamed?: boolean; dropLast?: boolean; added?: boolean } = {}): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'catalog-plan.yaml'), PLAN);
  writeFileSync(join(dir, 'Label.csv'), csv([['LabelId', 'Name'], ['1', 'Legacy Records'], ['2', 'Other Label']]));
  writeFileSync(join(dir, 'Genre.csv'), csv([['GenreId', 'Name'], ['1', 'Rock'], ['2', 'Jazz']]));
  writeFileSync(join(dir, 'Artist.csv'), csv([['ArtistId', 'Name'], ['1', 'AC/DC'], ['2', 'Accept'], ['3', 'Various Artists'], ['4', 'Various Artists']]));
  const albums = o.dropLast ? [1, 2] : [1, 2, 3];
  const tracks: string[][] = [['TrackId', 'Name', 'AlbumId', 'ArtistId', 'Composer', 'Milliseconds', 'UnitPrice']];
  const lists = new Map<number, string[]>();
  for (const a of albums) {
    for (let t = 1; t <= 15; t++) {
      const id = String(a * 100 + t);
      tracks.push([id, `Song ${((t - 1) % 5) + 1}`, String(a), String(((a + t) % 4) + 1), t % 3 === 0 ? 'Angus Young, Malcolm Young & Brian Johnson' : t % 3 === 1 ? 'Udo Dirkschneider/Wolf Hoffmann' : '', String(200000 + t), '0.99']);
      lists.set(a, [...(lists.get(a) ?? []), id]);
    }
  }
  if (o.added) {
    tracks.push(['116', 'Song 6', '1', '1', 'Angus Young', '230000', '0.99']);
    lists.set(1, [...lists.get(1)!, '116']);
  }
  writeFileSync(join(dir, 'Track.csv'), csv(tracks));
  const albumRows = [['AlbumId', 'Title', 'ArtistId', 'Label', 'GenreId', 'TrackIds']];
  for (const a of albums) albumRows.push([String(a), a === 1 && o.renamed ? 'Greatest Hits (Remastered)' : 'Greatest Hits', String(a), a === 2 ? 'other label' : 'Legacy Records', String((a % 2) + 1), lists.get(a)!.join(';')]);
  writeFileSync(join(dir, 'Album.csv'), csv(albumRows));
}

for (const backend of serveBackends('migrate-legacy')) {
  describe.skipIf(backend.skip)(`migrating a legacy export (${backend.name})`, () => {
    let serve: Serve;
    beforeAll(async () => {
      serve = await startServe(backend.args);
    });
    afterAll(async () => {
      await serve?.stop();
      await backend.cleanup();
    });
    const run = (args: string[]) => catalog(['--url', serve.url, ...args], { env: { CATALOG_KEEP_WARM: '0' } });
    const json = async (args: string[]) => {
      const r = await run([...args, '-o', 'json']);
      expect(r.code, r.stderr).toBe(0);
      return JSON.parse(r.stdout) as Array<Record<string, unknown>>;
    };

    it('one run moves it in, a second changes nothing, and one --sync applies a rename, a removed album and an added track', async () => {
      const dir = join(tempDir('legacy-'), 'export');
      writeExport(dir);
      // the dry run on an empty catalog: links by source id to records earlier files would make count as there
      const dry = await run(['import', dir, '--dry-run']);
      expect(dry.code, dry.stderr).toBe(0);
      expect(dry.stderr).toMatch(/5 files \(dry run, nothing written\): 56 inserted, 0 updated, 0 unchanged, 0 rejected/);
      const first = await run(['import', dir]);
      expect(first.code, first.stderr).toBe(0);
      expect(first.stderr).toMatch(/5 files: 56 inserted, 0 updated, 0 unchanged, 0 rejected/);

      const bySource = (rows: Array<Record<string, unknown>>) => rows.sort((a, b) => Number((a.source_ids as { legacy: string }).legacy) - Number((b.source_ids as { legacy: string }).legacy));
      const releases = bySource(await json(['releases', 'list', '--select', 'release_title,catalog_number,upc_code,source_ids,labels(name),genres(name),tracks(track_title,isrc_code,source_ids,primary_artists,writer_artists)', '--all']));
      expect(releases).toHaveLength(3);
      expect(releases.map((r) => r.source_ids)).toEqual([{ legacy: '1' }, { legacy: '2' }, { legacy: '3' }]);
      expect(releases.map((r) => (r.labels as { name: string }).name)).toEqual(['Legacy Records', 'Other Label', 'Legacy Records']);
      expect(releases.map((r) => (r.genres as { name: string }).name)).toEqual(['Jazz', 'Rock', 'Jazz']);
      // nothing in fields meant for other data
      expect(releases.every((r) => r.catalog_number === '' && r.upc_code === '')).toBe(true);
      const [album1] = releases;
      const tracks = album1.tracks as Array<Record<string, unknown>>;
      expect(tracks.map((t) => (t.source_ids as { legacy: string }).legacy)).toEqual(Array.from({ length: 15 }, (_, i) => String(101 + i)));
      expect(tracks.every((t) => t.isrc_code === '')).toBe(true);
      expect(tracks[0].primary_artists).toEqual([expect.objectContaining({ name: 'Various Artists' })]);
      expect(tracks[0].writer_artists).toEqual([{ name: 'Udo Dirkschneider' }, { name: 'Wolf Hoffmann' }]);
      expect(tracks[2].writer_artists).toEqual([{ name: 'Angus Young' }, { name: 'Malcolm Young' }, { name: 'Brian Johnson' }]);
      // the two artists the source calls "Various Artists" stay two records
      expect((await json(['artists', 'list', '--where', 'stage_name=Various Artists', '--select', 'source_ids'])).map((a) => a.source_ids)).toEqual(expect.arrayContaining([{ legacy: '3' }, { legacy: '4' }]));
      const check = await run(['check']);
      expect(check.code, check.stdout + check.stderr).toBe(0);

      const again = await run(['import', dir]);
      expect(again.code, again.stderr).toBe(0);
      expect(again.stderr).toMatch(/5 files: 0 inserted, 0 updated, 56 unchanged, 0 rejected; nothing changed/);

      writeExport(dir, { renamed: true, dropLast: true, added: true });
      const plan = await run(['import', dir, '--sync', '--scope', 'all', '--dry-run']);
      expect(plan.code, plan.stderr).toBe(0);
      expect(plan.stderr).toMatch(/5 files \(dry run, nothing written\): 1 inserted, 1 updated, 39 unchanged, 0 rejected, 16 removed/);
      const sync = await run(['import', dir, '--sync', '--scope', 'all', '--yes']);
      expect(sync.code, sync.stderr).toBe(0);
      expect(sync.stderr).toMatch(/5 files: 1 inserted, 1 updated, 39 unchanged, 0 rejected, 16 removed/);
      const after = bySource(await json(['releases', 'list', '--select', 'release_title,source_ids,tracks(source_ids)']));
      expect(after.map((r) => [r.release_title, (r.tracks as unknown[]).length])).toEqual([['Greatest Hits (Remastered)', 16], ['Greatest Hits', 15]]);
      expect((await run(['tracks', 'count'])).stdout.trim()).toBe('31');
    });
  });
}
