import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Commands the tests run open their temporary catalogs themselves instead of leaving a
    // background holder behind for five minutes each; test/e2e/keep-warm.test.ts turns it on.
    env: { CATALOG_KEEP_WARM: '0' },
  },
});
