import { defineConfig } from 'vitest/config';

/**
 * What `npm run test:unit` (`vitest run --mode unit`) leaves out: the tests that spawn bin/catalog
 * or servers (e2e, reliability, security) and the files that take longest on their own (large
 * imports and exports, fuzzing, property runs, PGlite data directories, a cluster). The rest is
 * the inner loop: grammar, planning, SQL, formats, commands in process, the client, the stages.
 */
const SLOW = [
  'test/e2e/**',
  'test/reliability/**',
  'test/security/**',
  'test/import/upserts.test.ts',
  'test/import/resume.test.ts',
  'test/import/roundtrip.test.ts',
  'test/import/commands.test.ts',
  'test/import/shape/check.test.ts',
  'test/export/copy-read.test.ts',
  'test/server/copy-out.test.ts',
  'test/server/fuzz.test.ts',
  'test/server/cluster.test.ts',
  'test/store/pglite.test.ts',
  'test/store/collation.test.ts',
  'test/cli/commands.test.ts',
  'test/cli/interactive.test.ts',
  'test/grammar/roundtrip.property.test.ts',
];

/** The options both projects share: the run's own (workers, pool) and every test's (timeouts, environment). */
const SHARED = {
  globalSetup: ['test/global-setup.ts'],
  // A guard against a hang, never a speed check, and the only one: no test sets its own. On a
  // shared CI machine with a load average of 15–30 the suite ran 6× slower than idle, and six
  // tests failed on their own 30–120 s limits (issue 39). Waits for a condition inside a test use
  // test/support/patience.ts. Speed is measured by `npm run bench`.
  testTimeout: 600_000,
  hookTimeout: 600_000,
  // The commands a test runs on one temporary catalog share a background holder, as a user's do,
  // kept warm for 5 s instead of five minutes, so none is left long after its test: each command
  // after the first skips opening PGlite (~0.5–0.9 s). Issue 39: the nine longest e2e files took
  // 355 s instead of 851 s. Tests about the holder itself set CATALOG_KEEP_WARM as they need.
  // NODE_EXTRA_CA_CERTS, where the machine sets it, costs every node start ≈40–100 ms (it parses the
  // system's CA bundle) and the suite starts thousands: none for the tests' processes; npm, which
  // may need the registry, gets it back (test/support/registry-env.ts).
  env: { CATALOG_KEEP_WARM: '5', NODE_EXTRA_CA_CERTS: '', CATALOG_TEST_NODE_CA_CERTS: process.env.NODE_EXTRA_CA_CERTS ?? '' },
};

export default defineConfig(({ mode }) => ({
  test: {
    pool: 'forks',
    // Test files are independent (each makes its own temporary catalogs, data directories, servers
    // on port 0 and PostgreSQL schemas), so they run side by side. Vitest's default on 2 cores is
    // one at a time; most of an e2e file's time is spent waiting on the processes it starts, so
    // three workers keep both cores busy. Slowest files first (vitest's results cache).
    fileParallelism: true,
    maxWorkers: 3,
    projects: [
      // The inner loop's files share their workers' loaded modules (they keep no module state,
      // checked with --sequence.shuffle), in the full run as in `npm run test:unit`: a new process
      // and module graph per file cost the 138 of them 151 s of CPU instead of 88 s (issue 39).
      { extends: true as const, test: { ...SHARED, name: 'inner', include: ['test/**/*.test.ts'], exclude: SLOW, isolate: false } },
      // The slow files (they spawn bin/catalog, servers, holders) share their workers' modules too:
      // none sets process.env, changes directory or mocks a module, and each names its temporary
      // catalogs, data directories and PostgreSQL schemas itself. A process and module graph per file
      // cost the 20 of them that run the service in process 106 s of CPU instead of 89 s.
      ...(mode === 'unit' ? [] : [{ extends: true as const, test: { ...SHARED, name: 'slow', include: SLOW.map((p) => (p.endsWith('/**') ? `${p}/*.test.ts` : p)), isolate: false } }]),
    ],
  },
}));
