import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migratedTemplate, templateCachePath } from '../src/store/pglite.js';

/**
 * Runs once before every test file: a private cache directory holding one migrated PGlite template,
 * so each test's new catalog (in-process or a spawned `catalog serve`) loads it in well under a second
 * instead of running initdb. Both projects of vitest.config.ts name it; it runs once a run.
 */
export default async function setup(): Promise<() => void> {
  const once = globalThis as { catalogTestSetup?: true };
  if (once.catalogTestSetup) return () => {};
  once.catalogTestSetup = true;
  const root = mkdtempSync(join(tmpdir(), 'catalog-test-'));
  process.env.XDG_CACHE_HOME = join(root, 'cache');
  process.env.XDG_DATA_HOME = join(root, 'data');
  process.env.XDG_CONFIG_HOME = join(root, 'config');
  process.env.CATALOG_TEST_ROOT = root;
  await migratedTemplate(templateCachePath());
  if (!process.env.CATALOG_TEST_DATABASE_URL) {
    console.warn('\n[catalog] CATALOG_TEST_DATABASE_URL is not set: the PostgreSQL store tests are SKIPPED (PGlite tests run).\n');
  }
  return () => rmSync(root, { recursive: true, force: true });
}
