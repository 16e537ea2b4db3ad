import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadPlan } from '../../src/import/plan/plan-file.js';
import { TABLES } from '../../src/schema/catalog.js';
import { tempDir } from '../support/stores.js';

/** Issue 35: a plan is checked whole, each mistake named by its place in the plan, before anything is read. */

function planIn(yaml: string, files: Record<string, string> = { 'Track.csv': 'TrackId,Name\n1,One\n', 'Album.csv': 'AlbumId,Title,TrackIds\n10,A,1\n', 'Artist.csv': 'ArtistId,Name\n5,X\n' }): string {
  const dir = tempDir('plan-');
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  writeFileSync(join(dir, 'catalog-plan.yaml'), yaml);
  return join(dir, 'catalog-plan.yaml');
}

const refused = (yaml: string) => {
  try {
    loadPlan(planIn(yaml), TABLES);
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('the plan was accepted');
};

describe('an import plan', () => {
  it('orders files parents first, links included, and reads every setting', () => {
    const plan = loadPlan(
      planIn(`source: legacy
files:
  Album.csv:
    collection: releases
    source_id: AlbumId
    map: { Title: release_title }
    links:
      tracks: { from: TrackIds, source: tracks }
  Track.csv:
    collection: tracks
    source_id: TrackId
    map: { Name: track_title }
    constants: { explicit_status: clean, recording_year: 1999 }
  Artist.csv:
    collection: artist
    source_id: ArtistId
    key: stage_name
    ignore: [Notes]
`),
      TABLES,
    );
    expect(plan.source).toBe('legacy');
    expect(plan.entries.map((e) => e.table.name)).toEqual(['artists', 'tracks', 'releases']);
    const [artists, tracks, releases] = plan.entries;
    expect(artists.key).toEqual([['stage_name']]);
    expect(artists.ignore).toEqual(['Notes']);
    expect(tracks.key).toEqual([['isrc_code']]);
    expect(tracks.constants).toEqual({ explicit_status: 'clean', recording_year: '1999' });
    expect(releases.links).toEqual([{ field: 'tracks', from: 'TrackIds', split: /;/, source: 'tracks', namesOnly: false, list: true }]);
  });

  it('names each mistake by its place, with a did-you-mean', () => {
    expect(refused('files:\n  Track.csv: { collection: trakcs }\n')).toMatch(/catalog-plan\.yaml: files\.Track\.csv\.collection: no collection "trakcs"; did you mean "tracks"\?/);
    expect(refused('files:\n  Track.csv: { collection: tracks, map: { Name: track_titel } }\n')).toMatch(/files\.Track\.csv\.map\.Name: tracks has no field "track_titel"; did you mean "track_title"\?/);
    expect(refused('files:\n  Trak.csv: { collection: tracks }\n')).toMatch(/files\.Trak\.csv: no such file .*Trak\.csv/);
    expect(refused('files:\n  Track.csv: { collection: tracks, source_id: TrackId }\n')).toMatch(/files\.Track\.csv\.source_id: needs the plan's `source:`/);
    expect(refused('source: legacy\nfiles:\n  Album.csv: { collection: releases, links: { tracks: { from: TrackIds, source: artists } } }\n')).toMatch(/links\.tracks\.source: tracks names tracks, not artists/);
    expect(refused('files:\n  Track.csv: { collection: tracks, links: { track_title: { from: Name } } }\n')).toMatch(/track_title is neither a link field/);
    expect(refused('files:\n  Track.csv: { collection: tracks, colection: tracks }\n')).toMatch(/files\.Track\.csv: unknown setting "colection"; did you mean "collection"\?/);
    expect(refused('files:\n  Track.csv: { collection: tracks, links: { writer_artists: { from: Name, split: "[" } } }\n')).toMatch(/links\.writer_artists\.split: not a regular expression/);
    expect(refused('source: Legacy System\nfiles:\n  Track.csv: { collection: tracks }\n')).toMatch(/source: "Legacy System" is not a source name/);
    expect(refused('- not\n- a mapping\n')).toMatch(/must be a mapping with `files:`/);
  });

  const root = process.getuid?.() === 0;
  if (root) console.warn('[catalog] SKIPPED the unreadable plan file test: root reads every file (run the suite as another user)');
  it.skipIf(root)('names a file this user may not read, before anything is read', () => {
    const plan = planIn('files:\n  Track.csv: { collection: tracks }\n');
    chmodSync(plan.replace('catalog-plan.yaml', 'Track.csv'), 0o000);
    expect(() => loadPlan(plan, TABLES)).toThrow(/files\.Track\.csv: .*Track\.csv: permission denied \(it is not readable by this user\)/);
  });
});
