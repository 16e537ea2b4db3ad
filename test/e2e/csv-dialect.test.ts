import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/stores.js';
import { catalog, ensureBuilt, type Result, startServe } from './support.js';

ensureBuilt();

// One CSV dialect (src/format/csv-dialect.ts): `list -o csv` writes rows read as JSON, `export`
// passes the service's COPY bytes through (copy-csv.ts); both must give the same bytes.
describe('list -o csv and export write one CSV dialect', () => {
  const env = { CATALOG_DATA: tempDir('csv-dialect-') };
  const COLLECTIONS = ['labels', 'artists', 'tracks', 'releases'];
  /** `export --order id` of each collection of the seeded catalog, made once: every test reads it. */
  const exports: Record<string, Result> = {};
  const exported: Record<string, string> = {};

  beforeAll(async () => {
    const seeded = await catalog(['seed'], { env });
    expect(seeded.code, seeded.stderr).toBe(0);
    for (const collection of COLLECTIONS) {
      exports[collection] = await catalog([collection, 'export', '--order', 'id'], { env });
      exported[collection] = exports[collection].stdout;
    }
  });

  for (const collection of COLLECTIONS) {
    it(`${collection}: list --all --order id -o csv is byte for byte export --order id`, async () => {
      const [list, exp] = [await catalog([collection, 'list', '--all', '--order', 'id', '-o', 'csv'], { env }), exports[collection]];
      expect(list.code, list.stderr).toBe(0);
      expect(exp.code, exp.stderr).toBe(0);
      expect(list.stdout.split('\n').length).toBeGreaterThan(10);
      expect(list.stdout).toBe(exp.stdout);
      // the default export order (keyset by id) is the same file
      expect((await catalog([collection, 'export'], { env })).stdout).toBe(exp.stdout);
    });
  }

  it('the fixtures put the tricky values through it: edge spaces and line breaks quoted, "" for an empty string, "NULL" as text, jsonb as PostgreSQL prints it', () => {
    const labels = exported.labels;
    expect(labels).toContain(',"  Spaced Out Records  ",');
    expect(labels).toMatch(/,"The ""Quiet"" Room",/);
    expect(labels).toMatch(/^[0-9a-f-]+,Northern Lights Recordings,2024-01-15 12:00:00\.197\+00,/m);
    const artists = exported.artists;
    expect(artists).toContain(',"",');
    expect(artists).toMatch(/,NULL(,|\n)/); // the text "NULL" is text, bare (only the null token \N reads as null)
    expect(artists).toMatch(/,[tf],/);
    expect(artists).toContain('"{""note"": null, ""tags"": [""studio"", ""digital""], ""source"": ""fixture""}"');
    expect(exported.tracks).toMatch(/"[^"]*\n/); // a value with a line break, quoted
  });

  it('imports back into an empty catalog as the same rows (null and empty string kept apart)', async () => {
    // the empty catalog is served (one process for its ten commands, not ten embedded opens)
    const again = await startServe(['--data', tempDir('csv-dialect-again-')]);
    const there = (args: string[]) => catalog(['--url', again.url, ...args]);
    const dir = tempDir('csv-dialect-files-');
    try {
      for (const collection of ['labels', 'artists', 'tracks']) {
        const file = join(dir, `${collection}.csv`);
        writeFileSync(file, exported[collection]);
        const imported = await there([collection, 'import', file]);
        expect(imported.code, imported.stderr).toBe(0);
        const list = [collection, 'list', '--all', '--order', 'id', '-o', 'json'];
        expect(JSON.parse((await there(list)).stdout)).toEqual(JSON.parse((await catalog(list, { env })).stdout));
        const csv = await there([collection, 'export']);
        expect(csv.stdout).toBe(exported[collection]);
      }
    } finally {
      await again.stop();
    }
  });
});
