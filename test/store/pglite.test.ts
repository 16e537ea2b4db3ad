import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openPGlite, templatePack, useSmallBufferPool } from '../../src/store/pglite.js';
import { packToTar, unpackPack, writePack } from '../../src/store/pglite-template.js';
import { tempDir } from '../support/stores.js';
import { MIGRATIONS } from '../../src/schema/migrations.js';

/** The regular files under `root`, relative, sorted. */
const files = (root: string): string[] =>
  readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(root, join(e.parentPath, e.name)))
    .sort();

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
    expect(versions.rows.map((r) => r.version)).toEqual(MIGRATIONS.map((m) => m.version));
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
    unpackPack(await templatePack(), unpacked);
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
    expect(readdirSync(dir).sort()).toEqual(names.sort());
    expect(readFileSync(join(dir, 'PG_VERSION'), 'utf8').trim()).toMatch(/^\d+$/);
  });

  it('unpacks a data directory byte for byte as it was packed, and as tar extracts the pack as a tarball (zero pages left as holes)', async () => {
    const pack = await templatePack();
    const first = tempDir('pglite-first-');
    unpackPack(pack, first);
    // Pack what was unpacked again, unpack that: the same bytes come back.
    const again = join(tempDir('pglite-repack-'), 'again.pack');
    writePack(first, again);
    const second = tempDir('pglite-second-');
    unpackPack(again, second);
    const byTar = tempDir('pglite-by-tar-');
    const tarFile = join(tempDir('pglite-tar-'), 'template.tar');
    writeFileSync(tarFile, packToTar(pack));
    execFileSync('tar', ['-xf', tarFile, '-C', byTar]);
    expect(files(first).length).toBeGreaterThan(300);
    expect(files(second)).toEqual(files(first));
    expect(files(byTar)).toEqual(files(first));
    for (const f of files(first)) {
      const bytes = readFileSync(join(first, f));
      expect(readFileSync(join(second, f)).equals(bytes), f).toBe(true);
      expect(readFileSync(join(byTar, f)).equals(bytes), f).toBe(true);
    }
    const wal = files(first).find((f) => f.startsWith('pg_wal/0'))!;
    expect(statSync(join(first, wal)).size).toBe(16 * 1024 * 1024);
    expect(statSync(join(first, wal)).blocks * 512).toBeLessThan(1024 * 1024);
  });

  it('packs a template that starts cleanly: no postmaster.pid, one database, little WAL, so little to write per catalog', async () => {
    const pack = await templatePack();
    const dir = tempDir('pglite-clean-');
    unpackPack(pack, dir);
    expect(existsSync(join(dir, 'postmaster.pid'))).toBe(false);
    // pg_control's state (after system identifier, control and catalog versions): 1 = DB_SHUTDOWNED,
    // so the first open runs no crash recovery (a dump of a running database says 6, in production).
    expect(readFileSync(join(dir, 'global', 'pg_control')).readUInt32LE(16)).toBe(1);
    // template0 and template1 (600 files) were dropped and the WAL switched past initdb's segment.
    expect(statSync(pack).size).toBeLessThan(12 * 1024 * 1024);
    const store = await openPGlite({ dataDir: dir });
    const { rows } = await store.query<{ datname: string }>('select datname from pg_database order by datname');
    expect(rows.map((r) => r.datname)).toEqual(['postgres']);
    await store.close();
  });

  it('fails (and leaves no catalog behind) when the template pack is cut short', async () => {
    const source = tempDir('pglite-src-');
    mkdirSync(join(source, 'base'));
    writeFileSync(join(source, 'PG_VERSION'), '18\n');
    writeFileSync(join(source, 'base', 'data'), 'x'.repeat(10_000));
    const pack = join(tempDir('pglite-pack-'), 'cut.pack');
    writePack(source, pack);
    truncateSync(pack, statSync(pack).size - 100);
    const dir = join(tempDir('pglite-bad-'), 'catalog');
    await expect(openPGlite({ dataDir: dir, templatePack: pack })).rejects.toThrow(/cut short/);
    expect(existsSync(join(dir, 'PG_VERSION'))).toBe(false);
  });

  it('runs with a 16 MB buffer pool once asked for one (short commands), else with the default 128 MB', async () => {
    const sizes: string[] = [];
    for (const small of [true, false]) {
      useSmallBufferPool(small);
      try {
        const store = await openPGlite({ dataDir: join(tempDir('pglite-pool-'), 'catalog') });
        sizes.push((await store.query<{ shared_buffers: string }>('show shared_buffers')).rows[0].shared_buffers);
        await store.close();
      } finally {
        useSmallBufferPool(false);
      }
    }
    expect(sizes).toEqual(['16MB', '128MB']);
  });
});
