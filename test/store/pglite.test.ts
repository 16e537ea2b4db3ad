import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openPGlite } from '../../src/store/pglite.js';
import { tempDir } from '../support/stores.js';

describe('PGlite store over a data directory', () => {
  it('creates a new catalog from the migrated template, and a reopen keeps every row', async () => {
    const dir = join(tempDir('pglite-'), 'catalog');
    const first = await openPGlite({ dataDir: dir });
    await first.query(`insert into labels (name) select 'Label ' || g from generate_series(1, 250) g`);
    await first.close();
    expect(existsSync(join(dir, 'PG_VERSION'))).toBe(true);

    const second = await openPGlite({ dataDir: dir });
    const { rows } = await second.query<{ n: number }>('select count(*)::int as n from labels');
    expect(rows[0].n).toBe(250);
    const versions = await second.query<{ version: number }>('select version from catalog_migrations order by version');
    expect(versions.rows.map((r) => r.version)).toEqual([1, 2]);
    await second.close();
  });

  it('refuses a non-empty directory that holds no catalog instead of writing into it', async () => {
    const dir = tempDir('pglite-foreign-');
    writeFileSync(join(dir, 'notes.txt'), 'mine');
    await expect(openPGlite({ dataDir: dir })).rejects.toThrow(/not empty and holds no catalog/);
    expect(readdirSync(dir)).toEqual(['notes.txt']);
  });
});
