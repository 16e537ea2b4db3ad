import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../support/stores.js';
import { runCli, type TestContextOptions, useTestService } from './support.js';

/** Issue 35: another system's export, shaped by a plan, in one `catalog import DIR` run. */

const service = useTestService();
const cli = (args: string[], o: TestContextOptions = {}) => runCli(['--url', service.url, ...args], o);
const rows = async <T>(sql: string) => (await service.store.query<T>(sql)).rows;

function exportDir(files: Record<string, string>): string {
  const dir = join(tempDir('plan-run-'), 'export');
  mkdirSync(dir);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

describe('catalog import DIR with a plan (no source ids)', () => {
  it('renames, leaves out, adds constants, splits credits given as text into name-only credits, and links a release to its tracks in any file order', async () => {
    const dir = exportDir({
      // releases come first in the directory listing: the plan's order (tracks before releases) decides
      'Album.csv': 'UPC,Title,Label,ISRCs\n0724349532427,Plan Album,Plan Note,USPLN2600001;USPLN2600002\n',
      'Label.csv': 'Name\nPlan Note\n',
      'Track.csv': 'ISRC,Name,Composer,Ms\nUSPLN2600001,Same Title,"Jobim, Antônio / de Moraes",200\nUSPLN2600002,Same Title,Dorival & Jobim,300\n',
      'catalog-plan.yaml': `files:
  Label.csv:
    collection: labels
    map: { Name: name }
  Track.csv:
    collection: tracks
    map: { ISRC: isrc_code, Name: track_title }
    ignore: [Ms]
    constants: { explicit_status: clean }
    links:
      writer_artists: { from: Composer, split: '\\s*[,/&]\\s*', names_only: true }
  Album.csv:
    collection: releases
    map: { UPC: upc_code, Title: release_title, Label: label }
    links:
      tracks: { from: ISRCs, split: ';' }
`,
    });
    const first = await cli(['import', dir]);
    expect(first.code, first.err).toBe(0);
    expect(first.err).toMatch(/3 files: 4 inserted, 0 updated, 0 unchanged, 0 rejected/);
    const tracks = await rows<{ isrc_code: string; explicit_status: string; writer_artists: unknown }>(`select isrc_code, explicit_status, writer_artists from tracks where isrc_code like 'USPLN%' order by 1`);
    expect(tracks).toEqual([
      { isrc_code: 'USPLN2600001', explicit_status: 'clean', writer_artists: [{ name: 'Jobim' }, { name: 'Antônio' }, { name: 'de Moraes' }] },
      { isrc_code: 'USPLN2600002', explicit_status: 'clean', writer_artists: [{ name: 'Dorival' }, { name: 'Jobim' }] },
    ]);
    const [release] = await rows<{ n: number; label_ok: boolean }>(`select jsonb_array_length(r.tracks) as n, r.label_id = l.id as label_ok from releases r join labels l on l.name = 'Plan Note' where r.release_title = 'Plan Album'`);
    expect(release).toEqual({ n: 2, label_ok: true });
    const again = await cli(['import', dir]);
    expect(again.code, again.err).toBe(0);
    expect(again.err).toMatch(/3 files: 0 inserted, 0 updated, 4 unchanged, 0 rejected; nothing changed/);
  });

  it('refuses flags the plan sets per file, and a plan naming a column the file lacks, before anything is sent', async () => {
    const dir = exportDir({ 'Label.csv': 'Name\nNever Sent\n', 'catalog-plan.yaml': 'files:\n  Label.csv: { collection: labels, map: { Title: name } }\n' });
    const flag = await cli(['import', dir, '--map', 'Name=name']);
    expect(flag.code).toBe(2);
    expect(flag.err).toMatch(/--map cannot go with a plan \(catalog-plan\.yaml\): the plan sets it per file/);
    const missing = await cli(['import', dir]);
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/Label\.csv: the plan maps "Title", which the file does not have \(its columns: Name\)/);
    expect(await rows(`select 1 from labels where name = 'Never Sent'`)).toEqual([]);
  });

  it('keeps the source\'s line numbers in its rejects', async () => {
    const dir = exportDir({
      'Album.csv': 'UPC,Title,Date\n0724349532410,"Two\nlines",1999-01-02\n0724349532411,Bad date,nineteen\n',
      'catalog-plan.yaml': 'files:\n  Album.csv: { collection: releases, map: { UPC: upc_code, Title: release_title, Date: release_date } }\n',
    });
    const r = await cli(['import', dir]);
    expect(r.code).toBe(3);
    expect(r.err).toMatch(/line 4: 22\w+ /);
    expect(readFileSync(join(dir, 'Album.rejects.csv'), 'utf8')).toMatch(/^_line,_code,_message,upc_code,release_title,release_date\n4,22\w+,/);
  });
});
