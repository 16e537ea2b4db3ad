import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { LATEST_VERSION, MIGRATIONS } from '../../src/schema/migrations.js';

/**
 * Issue 39 (item 4): a released migration is never edited ("Versions only grow", migrations.ts).
 * Catalogs that applied one keep what it did; the same version with other text would leave new
 * catalogs and upgraded ones different. Each migration's SQL, as the code renders it (constants
 * such as UUID_RE interpolated), is pinned here by its SHA-256. A change to a released migration
 * fails this test: write a new migration instead. A new migration adds its line.
 */
const FROZEN: ReadonlyArray<[version: number, sha256: string]> = [
  [1, '9584e5ffef5b61f2'],
  [2, 'adaccfd8c4fde92a'],
  [3, '74fdb9b40cfda924'],
  [4, '6fdb299f6089095d'],
  [5, '6d0a98c9acbd1407'],
  [6, 'dc46be196facf84c'],
  [7, 'f81e38a3d304335a'],
  [8, 'c9195ad174b51439'],
  [9, '618731073392d5d7'],
  [10, '4dd014bea00a319b'],
  [11, '2d0879a7d00be4b3'],
  [12, '76d161b43fa00548'],
  [13, '2b2ac0487772428d'],
  [14, '7b81eec7bde526ce'],
  [15, 'f55eb00d9b271088'],
];

const digest = (sql: string) => createHash('sha256').update(sql).digest('hex').slice(0, 16);

describe('released migrations are frozen', () => {
  it('every migration has its pinned digest, and every pinned one is still there', () => {
    const actual = MIGRATIONS.map((m) => [m.version, digest(m.sql)] as const);
    expect(actual).toEqual(FROZEN);
    expect(LATEST_VERSION).toBe(FROZEN[FROZEN.length - 1][0]);
  });

  it('versions run 1, 2, 3, … without a gap', () => {
    expect(MIGRATIONS.map((m) => m.version)).toEqual(MIGRATIONS.map((_, i) => i + 1));
  });

  it('the digest notices a one-character change', () => {
    const sql = MIGRATIONS[MIGRATIONS.length - 1].sql;
    expect(digest(`${sql} `)).not.toBe(digest(sql));
  });
});

/** migrations/: each released migration's SQL as a file (issue 39 item 4). */
const DIR = new URL('../../migrations/', import.meta.url);
const sqlFiles = () => readdirSync(DIR).filter((name) => name.endsWith('.sql')).sort();

describe('released migrations are files of text', () => {
  it('one file a migration, named for its version (0001-…, 0002-…), and none left over', () => {
    const files = sqlFiles();
    expect(files.map((name) => Number(name.slice(0, 4)))).toEqual(MIGRATIONS.map((m) => m.version));
    for (const name of files) expect(name).toMatch(/^\d{4}-[a-z0-9]+(-[a-z0-9]+)*\.sql$/);
  });

  it("each file's bytes are the migration's SQL (what the digest above pins)", () => {
    const files = sqlFiles();
    MIGRATIONS.forEach((m, i) => {
      const bytes = readFileSync(new URL(files[i], DIR));
      expect(bytes.equals(Buffer.from(m.sql, 'utf8')), files[i]).toBe(true);
      expect(digest(bytes.toString('utf8')), files[i]).toBe(FROZEN[i][1]);
    });
  });
});
