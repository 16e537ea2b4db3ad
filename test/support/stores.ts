import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { openPGlite, templateCachePath } from '../../src/store/pglite.js';
import { openPGliteThread } from '../../src/store/pglite-remote.js';
import { openPostgres } from '../../src/store/postgres.js';
import type { Store } from '../../src/store/store.js';

/** The PostgreSQL URL for store tests, or undefined (those tests then skip, visibly). */
export const PG_URL = process.env.CATALOG_TEST_DATABASE_URL || undefined;

/** A new temporary directory under the test root. */
export function tempDir(prefix = 'dir-'): string {
  return mkdtempSync(join(process.env.CATALOG_TEST_ROOT ?? '/tmp', prefix));
}

/** A new, migrated, empty in-memory PGlite catalog, loaded from the template the global setup made. */
export async function makePGliteStore(): Promise<Store> {
  const template = new Blob([readFileSync(templateCachePath())]);
  return openPGlite({ template });
}

/**
 * A new catalog in a temporary directory, with PGlite on a thread of its own as `catalog serve
 * --data` and the background holder run it (src/store/pglite-remote.ts; the thread runs the build's
 * dist/store/pglite-thread.js). `drop()` closes it and removes the directory.
 */
export async function makePGliteThreadStore(): Promise<Store & { drop(): Promise<void> }> {
  const dir = tempDir('thread-store-');
  const store = await openPGliteThread(join(dir, 'catalog'));
  return Object.assign(store, {
    async drop() {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  });
}

let schemaSeq = 0;

/**
 * A new, migrated, empty catalog in a fresh PostgreSQL schema. `drop()` removes the schema.
 * Only call when PG_URL is set.
 */
export async function makePostgresStore(): Promise<Store & { drop(): Promise<void> }> {
  if (!PG_URL) throw new Error('CATALOG_TEST_DATABASE_URL is not set');
  const schema = `catalog_test_${process.pid}_${Date.now().toString(36)}_${schemaSeq++}`;
  const store = await openPostgres({ url: PG_URL, schema, max: 4 });
  return Object.assign(store, {
    async drop() {
      await store.query(`drop schema if exists ${schema} cascade`);
      await store.close();
    },
  });
}

/** The store makers to run a suite against: PGlite always, PostgreSQL when configured. */
export const STORE_KINDS: Array<{ kind: 'pglite' | 'postgres'; make: () => Promise<Store & { drop?(): Promise<void> }>; skip: boolean }> = [
  { kind: 'pglite', make: makePGliteStore, skip: false },
  { kind: 'postgres', make: makePostgresStore, skip: !PG_URL },
];

/** Closes a store made by one of the makers (dropping a PostgreSQL schema). */
export async function disposeStore(store: Store & { drop?(): Promise<void> }): Promise<void> {
  if (store.drop) await store.drop();
  else await store.close();
}
