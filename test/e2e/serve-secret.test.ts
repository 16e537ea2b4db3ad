import { describe, expect, it } from 'vitest';
import { tempDir } from '../support/stores.js';
import { catalog, ensureBuilt, startServe } from './support.js';

ensureBuilt();

describe('catalog serve: a JWT secret must be at least 32 characters, as PostgREST requires', () => {
  for (const [how, args, env] of [
    ['--jwt-secret', ['--jwt-secret', 'short-secret-31-characters-long'], {}],
    ['CATALOG_JWT_SECRET', [], { CATALOG_JWT_SECRET: 'tiny' }],
  ] as const) {
    it(`refuses a short one given by ${how} at start, exit 2, naming the rule`, async () => {
      const r = await catalog(['serve', '--port', '0', '--data', tempDir('secret-'), ...args], { env: { ...env } });
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/JWT secret must be at least 32 characters/);
      expect(r.stderr).not.toMatch(/Serving the catalog/);
    });
  }

  it('refuses it with --workers too (the cluster path)', async () => {
    const r = await catalog(['serve', '--port', '0', '--workers', '2', '--database-url', 'postgres://127.0.0.1:1/none', '--jwt-secret', 'x'.repeat(31)]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/at least 32 characters long \(it has 31\)/);
  });

  it('starts with a secret of exactly 32 characters', async () => {
    const serve = await startServe(['--data', tempDir('secret-'), '--jwt-secret', 'x'.repeat(32)]);
    expect(await serve.stop()).toBe(0);
  });
});
