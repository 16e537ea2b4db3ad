import { afterAll, beforeAll } from 'vitest';
import { startServer } from '../../src/server/listen.js';
import type { Store } from '../../src/store/store.js';
import { makePGliteStore } from './stores.js';

// The service's own test helper: it imports the service and the core only, so test/server and
// test/store run without the CLI (test/architecture/parts.test.ts).

/** A running service for a test file (see useTestService). */
export interface TestService {
  readonly url: string;
  readonly store: Store;
}

/**
 * Starts a real service on a fresh in-memory catalog before the file's tests and stops it after.
 * Call at the top level of a test file; read `url` inside tests.
 */
export function useTestService(): TestService {
  let store: Store | undefined;
  let server: { url: string; close(): Promise<void> } | undefined;
  beforeAll(async () => {
    store = await makePGliteStore();
    server = await startServer({ store, port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await server?.close();
    await store?.close();
  });
  return {
    get url() {
      if (!server) throw new Error('the test service is not running yet');
      return server.url;
    },
    get store() {
      if (!store) throw new Error('the test service is not running yet');
      return store;
    },
  };
}
