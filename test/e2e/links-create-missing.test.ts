import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PG_URL, tempDir } from '../support/stores.js';
import { catalog, ensureBuilt, type Serve, startServe } from './support.js';

ensureBuilt();

/** Issue 29 item 4: `catalog import --create-missing` creates the artists a tracks file credits by a name no artist has. */

const ROLES = ['primary_artists', 'featuring_artists', 'remix_artists', 'writer_artists', 'performer_artists', 'engineer_artists'];
type Credit = { id?: string; name: string };
type Track = Record<string, Credit[] | null | string>;

/** "Nova Q." is credited on three rows in four roles, spelt three ways, once in a JSON array cell. */
function tracksFile(dir: string): string {
  const row = (isrc: string, title: string, credits: Partial<Record<string, string>>) => [isrc, title, ...ROLES.map((r) => credits[r] ?? '')].join(',');
  const path = join(dir, 'tracks.csv');
  const rows = [
    row('FRZ032700001', 'One', { primary_artists: 'Tom Hale;Nova Q.' }),
    row('FRZ032700002', 'Two', { primary_artists: 'Tom Hale', writer_artists: 'nova  q.', remix_artists: 'NOVA Q.' }),
    row('FRZ032700003', 'Three', { featuring_artists: '"[""Nova Q."", ""Nova Quinn""]"' }),
    row('FRZ032700004', 'Four', { primary_artists: 'Nova Quinn' }),
  ];
  writeFileSync(path, `isrc_code,track_title,${ROLES.join(',')}\n${rows.join('\n')}\n`);
  return path;
}

const STORES = [
  { kind: 'embedded (PGlite)', skip: false },
  { kind: 'PostgreSQL', skip: !PG_URL },
];

for (const { kind, skip } of STORES) {
  describe.skipIf(skip)(`import --create-missing for credit names on ${kind}${skip ? ' (SKIPPED: set CATALOG_TEST_DATABASE_URL)' : ''}`, () => {
    type Run = (args: string[]) => ReturnType<typeof catalog>;
    const serves: Serve[] = [];
    const schemas: string[] = [];
    let run: Run = () => Promise.reject(new Error('no catalog'));
    let made: Run = run;
    let file = '';
    const schema = `catalog_links_cm_${process.pid}`;
    /** A catalog of its own (a data directory, or a server on a schema of its own) holding the artists Tom Hale and Nova Quinn. */
    const newCatalog = async (suffix: string): Promise<Run> => {
      let target: string[] = [];
      let env: Record<string, string> = {};
      if (kind === 'PostgreSQL') {
        schemas.push(`${schema}${suffix}`);
        const serve = await startServe(['--database-url', PG_URL!, '--db-schema', `${schema}${suffix}`]);
        serves.push(serve);
        target = ['--url', serve.url];
      } else env = { CATALOG_DATA: tempDir('links-cm-') };
      const r: Run = (args) => catalog([...target, ...args], { env });
      const dir = tempDir('links-cm-files-');
      writeFileSync(join(dir, 'artists.csv'), 'stage_name\nTom Hale\nNova Quinn\n');
      const a = await r(['artists', 'import', join(dir, 'artists.csv')]);
      expect(a.code, a.stderr).toBe(0);
      return r;
    };
    const artistsOn = async (on: Run) => {
      const r = await on(['artists', 'list', '--select', 'id,stage_name', '--order', 'stage_name', '-o', 'json']);
      expect(r.code, r.stderr).toBe(0);
      return JSON.parse(r.stdout) as Array<{ id: string; stage_name: string }>;
    };
    const tracksOn = async (on: Run) => {
      const r = await on(['tracks', 'list', '--select', `isrc_code,${ROLES.join(',')}`, '--order', 'isrc_code', '-o', 'json']);
      expect(r.code, r.stderr).toBe(0);
      return JSON.parse(r.stdout) as Track[];
    };
    const artists = async () => artistsOn(run);
    const tracks = async () => tracksOn(run);

    // two catalogs, made side by side: one for the test without the flag, one for the test that
    // makes an artist (which would spoil the first for a test expecting no "Nova Q.")
    beforeAll(async () => {
      [run, made] = await Promise.all([newCatalog(''), newCatalog('_made')]);
      file = tracksFile(tempDir('links-cm-files-'));
    });

    afterAll(async () => {
      await Promise.all(serves.map((s) => s.stop()));
      if (schemas.length) {
        const { default: pg } = await import('pg');
        const c = new pg.Client({ connectionString: PG_URL });
        await c.connect();
        for (const s of schemas) await c.query(`drop schema if exists ${s} cascade`);
        await c.end();
      }
    });

    it('without the flag, a row crediting an unknown name is rejected with a did-you-mean and no artist is made', async () => {
      const rejects = join(tempDir('links-cm-rejects-'), 'rejects.csv');
      const r = await run(['tracks', 'import', file, '--rejects', rejects]);
      expect(r.code).toBe(3);
      expect(r.stderr).toContain('no artist is named "Nova Q."');
      expect(r.stderr).toContain('did you mean "Nova Quinn"?');
      expect((await artists()).map((x) => x.stage_name)).toEqual(['Nova Quinn', 'Tom Hale']);
      expect((await tracks()).map((t) => t.isrc_code)).toEqual(['FRZ032700004']);
    });

    it('with --create-missing the artist is made once and every credit carries its id; a re-run changes nothing', async () => {
      // its own catalog: the artist it makes would spoil the other for the test without the flag
      const run = made;
      const artists = async () => artistsOn(run);
      const tracks = async () => tracksOn(run);
      const r = await run(['tracks', 'import', file, '--create-missing']);
      expect(r.code, r.stderr).toBe(0);
      expect(`${r.stdout}${r.stderr}`).toContain('created 1 artists for names that had none');
      const all = await artists();
      expect(all.map((x) => x.stage_name)).toEqual(['Nova Q.', 'Nova Quinn', 'Tom Hale']);
      const nova = all.find((x) => x.stage_name === 'Nova Q.')!.id;
      const stored = await tracks();
      expect(stored.map((t) => t.isrc_code)).toEqual(['FRZ032700001', 'FRZ032700002', 'FRZ032700003', 'FRZ032700004']);
      const credited = stored.flatMap((t) => ROLES.flatMap((role) => ((t[role] as Credit[] | null) ?? []).filter((c) => c.name === 'Nova Q.').map((c) => `${t.isrc_code} ${role} ${c.id}`)));
      expect(credited).toEqual([
        `FRZ032700001 primary_artists ${nova}`,
        `FRZ032700002 remix_artists ${nova}`,
        `FRZ032700002 writer_artists ${nova}`,
        `FRZ032700003 featuring_artists ${nova}`,
      ]);

      const again = await run(['tracks', 'import', file, '--create-missing']);
      expect(again.code, again.stderr).toBe(0);
      expect(`${again.stdout}${again.stderr}`).not.toContain('created');
      expect(await artists()).toEqual(all);
      expect(await tracks()).toEqual(stored);
    });
  });
}
