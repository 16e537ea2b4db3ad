import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { migratedTemplate, openPGlite, unpackDataDir } from '../../src/store/pglite.js';
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

  it('starts a new catalog over when an earlier start was interrupted while unpacking', async () => {
    const dir = tempDir('pglite-cut-');
    mkdirSync(join(dir, '.catalog-new', 'base'), { recursive: true });
    writeFileSync(join(dir, '.catalog-new', 'base', 'half-written'), 'x');
    const store = await openPGlite({ dataDir: dir });
    const { rows } = await store.query<{ n: number }>('select count(*)::int as n from labels');
    expect(rows[0].n).toBe(0);
    await store.close();
    expect(readdirSync(dir)).not.toContain('.catalog-new');
    expect(existsSync(join(dir, 'base', 'half-written'))).toBe(false);
  });

  it('finishes moving a fully unpacked catalog into place when an earlier start stopped half-way', async () => {
    const unpacked = tempDir('pglite-unpacked-');
    unpackDataDir(new Uint8Array(await (await migratedTemplate()).arrayBuffer()), unpacked);
    const dir = tempDir('pglite-half-');
    mkdirSync(join(dir, '.catalog-new'));
    const names = readdirSync(unpacked);
    expect(names).toContain('PG_VERSION');
    // Two entries already moved in, the rest (PG_VERSION among them) still staged.
    for (const [i, name] of names.entries()) {
      renameSync(join(unpacked, name), i < 2 && name !== 'PG_VERSION' ? join(dir, name) : join(dir, '.catalog-new', name));
    }
    const store = await openPGlite({ dataDir: dir });
    await store.query(`insert into labels (name) values ('Kept')`);
    const { rows } = await store.query<{ name: string }>('select name from labels');
    expect(rows).toEqual([{ name: 'Kept' }]);
    await store.close();
    // Everything moved in (postmaster.pid, which the template was dumped with, is gone after a clean close).
    expect(readdirSync(dir).sort()).toEqual(names.filter((n) => n !== 'postmaster.pid').sort());
    expect(readFileSync(join(dir, 'PG_VERSION'), 'utf8').trim()).toMatch(/^\d+$/);
  });

  it('unpacks the template byte for byte as tar does (zero pages left as holes read back as zeros)', async () => {
    const tgz = join(tempDir('pglite-tgz-'), 'template.tar.gz');
    writeFileSync(tgz, new Uint8Array(await (await migratedTemplate()).arrayBuffer()));
    const byTar = tempDir('pglite-by-tar-');
    execFileSync('tar', ['-xzf', tgz, '-C', byTar]);
    const ours = tempDir('pglite-ours-');
    unpackDataDir(readFileSync(tgz), ours);
    const files = (root: string): string[] =>
      readdirSync(root, { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile())
        .map((e) => relative(root, join(e.parentPath, e.name)))
        .sort();
    expect(files(ours)).toEqual(files(byTar));
    expect(files(ours).length).toBeGreaterThan(500);
    for (const f of files(byTar)) expect(readFileSync(join(ours, f)).equals(readFileSync(join(byTar, f))), f).toBe(true);
    const wal = files(ours).find((f) => f.startsWith('pg_wal/0'))!;
    expect(statSync(join(ours, wal)).size).toBe(16 * 1024 * 1024);
  });

  it('fails (and starts no PostgreSQL) when the template cannot be unpacked', async () => {
    // A one-entry ustar archive holding a symbolic link, which a catalog template never has.
    const header = new Uint8Array(512);
    header.set(new TextEncoder().encode('/base/link'), 0);
    header.set(new TextEncoder().encode('0000000\0'), 124);
    header[156] = '2'.charCodeAt(0);
    const tar = new Blob([header, new Uint8Array(1024)]);
    const dir = join(tempDir('pglite-bad-'), 'catalog');
    await expect(openPGlite({ dataDir: dir, template: tar })).rejects.toThrow(/unexpected entry type '2' for \/base\/link/);
    expect(existsSync(join(dir, 'PG_VERSION'))).toBe(false);
  });
});
