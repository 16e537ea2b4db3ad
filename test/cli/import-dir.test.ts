import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { directoryFiles } from '../../src/cli/commands/import-dir.js';
import { bundledSeedDir } from '../../src/cli/commands/seed.js';
import { TABLES } from '../../src/schema/catalog.js';
import { tempDir } from '../support/stores.js';
import { runCli, type TestContextOptions, useTestService } from './support.js';

/** Issue 26: `catalog import DIR` takes the files named after collections, and refuses any other by name. */

const service = useTestService();
const cli = (args: string[], o: TestContextOptions = {}) => runCli(['--url', service.url, ...args], o);
const names = async (table: string) => (await service.store.query<{ name: string }>(`select coalesce(name, '') as name from ${table} order by 1`)).rows.map((r) => r.name);

describe('catalog import DIR', () => {
  it('refuses a file it does not recognise by name, importing nothing; --skip-unknown imports the rest, parents first', async () => {
    const dir = join(tempDir('import-dir-'), 'export');
    mkdirSync(dir);
    writeFileSync(join(dir, 'genre.csv'), 'name\nDir Jazz\n');
    writeFileSync(join(dir, 'Labels.json'), '[{"name":"Dir Label"}]');
    writeFileSync(join(dir, 'releases.csv'), 'release_title,catalog_number,label,genre\nDir One,DIR-1,dir label,DIR JAZZ\n');
    writeFileSync(join(dir, 'notes.txt'), 'not data\n');
    const refused = await cli(['import', dir]);
    expect(refused.code).toBe(2);
    expect(refused.err).toMatch(/notes\.txt is named after no collection; nothing was imported/);
    expect(await names('genres')).not.toContain('Dir Jazz');
    const done = await cli(['import', dir, '--skip-unknown']);
    expect(done.code, done.err).toBe(0);
    expect(done.err).toMatch(/3 files: 3 inserted, 0 updated, 0 unchanged, 0 rejected/);
    const [release] = (await service.store.query<{ label_id: string; genre_id: string }>(`select label_id, genre_id from releases where release_title = 'Dir One'`)).rows;
    const [label] = (await service.store.query<{ id: string }>(`select id from labels where name = 'Dir Label'`)).rows;
    const [genre] = (await service.store.query<{ id: string }>(`select id from genres where name = 'Dir Jazz'`)).rows;
    expect(release).toEqual({ label_id: label.id, genre_id: genre.id });
    const again = await cli(['import', dir, '--skip-unknown']);
    expect(again.err).toMatch(/3 files: 0 inserted, 0 updated, 3 unchanged, 0 rejected; nothing changed/);
  });

  it('a dry run sees the parents earlier files of the same run would create, and counts exactly what the real run does', async () => {
    const dir = join(tempDir('import-dir-dry-'), 'export');
    mkdirSync(dir);
    writeFileSync(join(dir, 'labels.csv'), 'name\nDry Run Label\n');
    writeFileSync(join(dir, 'genres.csv'), 'name\nDry Jazz\n');
    writeFileSync(join(dir, 'releases.csv'), 'release_title,catalog_number,label,genre\nDry One,DRY-1,dry run label,DRY JAZZ\nDry Two,DRY-2,Dry Run Label,Dry Jazz\nDry Bad,DRY-3,No Such Label,Dry Jazz\n');
    const dry = await cli(['import', dir, '--dry-run']);
    expect(dry.code).toBe(3);
    expect(dry.err).toMatch(/3 files \(dry run, nothing written\): 4 inserted, 0 updated, 0 unchanged, 1 rejected/);
    expect(dry.err).toMatch(/label “No Such Label” is not in labels\.name/);
    expect(await names('labels')).not.toContain('Dry Run Label');
    const real = await cli(['import', dir]);
    expect(real.err).toMatch(/3 files: 4 inserted, 0 updated, 0 unchanged, 1 rejected/);
  });

  it('a sync of a directory removes nothing anywhere when any file had a rejected row', async () => {
    const dir = join(tempDir('import-dir-sync-'), 'export');
    mkdirSync(dir);
    writeFileSync(join(dir, 'countries.csv'), 'name\nRunland\nRunia\n');
    writeFileSync(join(dir, 'languages.csv'), 'name\nRunish\nRunese\n');
    expect((await cli(['import', dir])).code).toBe(0);
    // the next export drops a country and a language, and one language row is unreadable
    writeFileSync(join(dir, 'countries.csv'), 'name\nRunland\n');
    writeFileSync(join(dir, 'languages.csv'), 'name,created\nRunish,2024-13-45\n');
    const held = await cli(['import', dir, '--sync', '--scope', 'all', '--yes']);
    expect(held.code).toBe(3);
    expect(held.err).toMatch(/none removed: 1 row of this run \(languages\.csv: 1\) was rejected: nothing is removed until every file loads whole/);
    expect(await names('countries')).toEqual(expect.arrayContaining(['Runland', 'Runia']));
    expect(await names('languages')).toEqual(expect.arrayContaining(['Runish', 'Runese']));
  });

  it('a link cell holding one key that reads as a number is a list of that one key', async () => {
    const dir = tempDir('import-one-key-');
    writeFileSync(join(dir, 'tracks.csv'), 'isrc_code,track_title\n7,Seven\n');
    writeFileSync(join(dir, 'releases.csv'), 'release_title,catalog_number,tracks\nOne Key,ONE-KEY-1,7\n');
    for (const f of ['tracks.csv', 'releases.csv']) {
      const r = await cli([f.replace('.csv', ''), 'import', join(dir, f)]);
      expect(r.code, r.err).toBe(0);
    }
    const [release] = (await service.store.query<{ n: number }>(`select jsonb_array_length(tracks) as n from releases where release_title = 'One Key'`)).rows;
    expect(release).toEqual({ n: 1 });
  });

  it('a re-seed after a record was changed restores it once, and the next one changes nothing', async () => {
    const first = await cli(['seed']);
    expect(first.code, first.err).toBe(0);
    // a label of the sample (the file's first row), not one another test of this file made
    const label = { id: readFileSync(join(bundledSeedDir(), 'labels.csv'), 'utf8').split('\n')[1].split(',')[0] };
    expect((await cli(['labels', 'update', label.id, 'name=Changed Since'])).code).toBe(0);
    const restore = await cli(['seed']);
    expect(restore.err).toMatch(/ 1 updated, \d+ unchanged, 0 rejected$/m);
    const again = await cli(['seed']);
    expect(again.err).toMatch(/0 inserted, 0 updated, \d+ unchanged, 0 rejected; nothing changed/);
  });

  it('passes over what an import leaves beside its input, a checkpoint being written included', () => {
    const dir = tempDir('import-dir-own-');
    for (const name of ['genres.csv', 'genres.csv.checkpoint.json', 'genres.csv.checkpoint.json.e8715b4e.tmp', 'genres.rejects.csv', 'notes.txt']) writeFileSync(join(dir, name), 'name\n');
    const { files, unknown } = directoryFiles(dir, TABLES);
    expect(files.map((f) => f.table.name)).toEqual(['genres']);
    expect(unknown).toEqual(['notes.txt']);
  });
});
