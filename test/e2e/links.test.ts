import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PG_URL, tempDir } from '../support/stores.js';
import { catalog, ensureBuilt, type Serve, startServe } from './support.js';

ensureBuilt();

/** Issue 29 end to end: import links by key, navigate them with --select, rename an artist. */

const id = (prefix: string, n: number) => `${prefix}-0000-4000-8000-${String(n).padStart(12, '0')}`;
const ISRC = (n: number) => `FRZ0326${String(n).padStart(5, '0')}`;
const ROLES = ['primary_artists', 'featuring_artists', 'remix_artists', 'writer_artists', 'performer_artists', 'engineer_artists'];

function writeFiles(dir: string): { artists: string; tracks: string; releases: string } {
  const artists = join(dir, 'artists.csv');
  writeFileSync(artists, `id,stage_name\n${id('a0000e29', 1)},Léa Marin\n${id('a0000e29', 2)},Tom Hale\n`);
  // 12 tracks; Léa credited by name in one of the six roles on tracks 1-6, Tom primary on all
  const rows = Array.from({ length: 12 }, (_, i) => {
    const credits = ROLES.map((role, k) => (role === 'primary_artists' ? (k === i ? 'Tom Hale;lea marin' : 'Tom Hale') : k === i ? 'Léa Marin' : ''));
    return [id('70000e29', i + 1), `Track ${i + 1}`, ISRC(i + 1), ...credits].join(',');
  });
  const tracks = join(dir, 'tracks.csv');
  writeFileSync(tracks, `id,track_title,isrc_code,${ROLES.join(',')}\n${rows.join('\n')}\n`);
  // the release lists its 12 tracks by ISRC, in running order (12 first, then 1 … 11), some hyphenated
  const order = [12, ...Array.from({ length: 11 }, (_, i) => i + 1)];
  const cell = order.map((n) => (n % 3 === 0 ? `${ISRC(n).slice(0, 2)}-${ISRC(n).slice(2, 5)}-${ISRC(n).slice(5, 7)}-${ISRC(n).slice(7)}` : ISRC(n))).join(';');
  const releases = join(dir, 'releases.csv');
  writeFileSync(releases, `id,release_title,tracks\n${id('20000e29', 1)},Twelve Steps,"${cell}"\n${id('20000e29', 2)},Typo,"${ISRC(1)};${ISRC(99)}"\n`);
  return { artists, tracks, releases };
}

const STORES = [
  { kind: 'embedded (PGlite)', skip: false },
  { kind: 'PostgreSQL', skip: !PG_URL },
];

for (const { kind, skip } of STORES) {
  describe.skipIf(skip)(`links end to end on ${kind}${skip ? ' (SKIPPED: set CATALOG_TEST_DATABASE_URL)' : ''}`, () => {
    let target: string[] = [];
    let env: Record<string, string> = {};
    let serve: Serve | null = null;
    const schema = `catalog_links_${process.pid}`;
    const run = (args: string[]) => catalog([...target, ...args], { env });

    beforeAll(async () => {
      if (kind === 'PostgreSQL') {
        serve = await startServe(['--database-url', PG_URL!, '--db-schema', schema]);
        target = ['--url', serve.url];
      } else env = { CATALOG_DATA: tempDir('links-') };
      const files = writeFiles(tempDir('links-files-'));
      for (const c of ['artists', 'tracks'] as const) {
        const r = await run([c, 'import', files[c]]);
        expect(r.code, r.stderr).toBe(0);
      }
      const rejects = join(tempDir('links-rejects-'), 'rejects.csv');
      const rel = await run(['releases', 'import', files.releases, '--rejects', rejects]);
      // the release with an unknown ISRC is rejected with a did-you-mean, the other goes in
      expect(rel.code, rel.stderr).toBe(3);
      expect(rel.stderr).toContain(`tracks[1]: no track has ISRC ${ISRC(99)}`);
    });

    afterAll(async () => {
      if (serve) {
        await serve.stop();
        const { default: pg } = await import('pg');
        const c = new pg.Client({ connectionString: PG_URL });
        await c.connect();
        await c.query(`drop schema if exists ${schema} cascade`);
        await c.end();
      }
    });

    it('a release imported with 12 ISRCs shows its 12 tracks in order through releases get --select', async () => {
      const r = await run(['releases', 'get', id('20000e29', 1), '--select', 'release_title,tracks(track_title)', '-o', 'json']);
      expect(r.code, r.stderr).toBe(0);
      const got = JSON.parse(r.stdout);
      expect(got.release_title).toBe('Twelve Steps');
      expect(got.tracks.map((t: { track_title: string }) => t.track_title)).toEqual(['Track 12', ...Array.from({ length: 11 }, (_, i) => `Track ${i + 1}`)]);
      const csv = await run(['releases', 'list', '--select', 'release_title,tracks(track_title)', '-o', 'csv']);
      expect(csv.stdout.split('\n')[0]).toBe('release_title,tracks');
      expect(csv.stdout).toContain('Twelve Steps');
    });

    it("an artist's tracks across all six roles come back through one embed", async () => {
      const r = await run(['artists', 'list', '--where', 'stage_name=Léa Marin', '--select', 'stage_name,tracks(track_title,isrc_code)', '-o', 'json']);
      expect(r.code, r.stderr).toBe(0);
      const [lea] = JSON.parse(r.stdout);
      expect(lea.tracks.map((t: { track_title: string }) => t.track_title).sort()).toEqual(['Track 1', 'Track 2', 'Track 3', 'Track 4', 'Track 5', 'Track 6']);
      const inner = await run(['artists', 'list', '--select', 'stage_name,tracks!inner(track_title)', '--where', 'tracks.track_title=Track 9', '-o', 'json']);
      expect(inner.code, inner.stderr).toBe(0);
      expect(JSON.parse(inner.stdout)).toEqual([{ stage_name: 'Tom Hale', tracks: [{ track_title: 'Track 9' }] }]);
    });

    it('describe shows the computed relationships', async () => {
      const r = await run(['releases', 'describe', '-o', 'json']);
      expect(JSON.parse(r.stdout).embeds).toContainEqual(expect.objectContaining({ table: 'tracks', computed: true }));
    });

    it('a renamed artist shows the new name everywhere: credits, embeds, filters', async () => {
      const renamed = await run(['artists', 'update', id('a0000e29', 1), 'stage_name=Léa Marin-Roy']);
      expect(renamed.code, renamed.stderr).toBe(0);
      try {
        const tracks = await run(['tracks', 'list', '--select', ROLES.join(','), '-o', 'json']);
        const names = (JSON.parse(tracks.stdout) as Array<Record<string, Array<{ id?: string; name: string }> | null>>).flatMap((t) =>
          ROLES.flatMap((role) => (t[role] ?? []).filter((c) => c.id === id('a0000e29', 1)).map((c) => c.name)),
        );
        expect(names).toEqual(Array(6).fill('Léa Marin-Roy'));
        const embed = await run(['tracks', 'get', id('70000e29', 4), '--select', 'track_title,artists(stage_name)', '-o', 'json']);
        expect(JSON.parse(embed.stdout).artists).toEqual([{ stage_name: 'Tom Hale' }, { stage_name: 'Léa Marin-Roy' }]);
      } finally {
        // the file's other tests find Léa by her imported name
        const restored = await run(['artists', 'update', id('a0000e29', 1), 'stage_name=Léa Marin']);
        expect(restored.code, restored.stderr).toBe(0);
      }
    });

    it('a write of a malformed link is refused with the path of the element', async () => {
      const r = await run(['releases', 'update', id('20000e29', 1), 'tracks=[{"id":"x","position":1}]']);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain('tracks[0].id: must be a track id (a uuid)');
    });
  });
}
