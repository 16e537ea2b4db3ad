import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer } from '../../src/server/listen.js';
import { catalog, ensureBuilt, startServe, type Serve } from '../e2e/support.js';
import { PG_URL, tempDir } from '../support/stores.js';
import { PGBOUNCER, type Started, startPgBouncer } from './topology.js';

const skip = !PG_URL || !PGBOUNCER;
const why = !PG_URL ? 'set CATALOG_TEST_DATABASE_URL' : 'pgbouncer is not installed (apt-get install -y pgbouncer)';

/**
 * The service behind PgBouncer in transaction mode, the pooler most PostgreSQL deployments put in
 * front of PostgREST: PgBouncer refuses the startup `options` that carry a session's settings, so
 * the store sets them inside each transaction (`set_config(…, true)`). The whole conformance suite
 * also passes with CATALOG_TEST_DATABASE_URL pointing at a PgBouncer (see docs/guarantees.md).
 */
describe.skipIf(skip)(`catalog serve behind PgBouncer (transaction mode)${skip ? ` (SKIPPED: ${why})` : ''}`, () => {
  let bouncer: Started | undefined;
  let url: string;
  const schema = `catalog_bouncer_${process.pid}`;
  const serves: Serve[] = [];

  beforeAll(async () => {
    ensureBuilt();
    bouncer = await startPgBouncer(PG_URL!);
    url = bouncer.url;
  });

  afterAll(async () => {
    for (const s of serves) await s.stop();
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`drop schema if exists ${schema} cascade`);
    await admin.end();
    await bouncer?.stop();
  });

  it('PgBouncer refuses the startup options, and each transaction sets search_path, TimeZone and statement_timeout itself', async () => {
    const plain = new pg.Client({ connectionString: url, options: '-c TimeZone=UTC' });
    await expect(plain.connect()).rejects.toThrow(/unsupported startup parameter: options/);
    const server = await startServer({ port: 0, databaseUrl: url, schema, statementTimeoutMs: 4321 });
    try {
      const shown = await server.store.query<Record<string, string>>(`select current_setting('search_path') as sp, current_setting('TimeZone') as tz, current_setting('statement_timeout') as st`);
      expect(shown.rows[0]).toEqual({ sp: schema, tz: 'UTC', st: '4321ms' });
    } finally {
      await server.close();
    }
  });

  it('two catalog serve processes behind it serve 40 concurrent writers without a lost or doubled row; times come back in UTC', async () => {
    serves.push(await startServe(['--database-url', url, '--db-schema', schema]), await startServe(['--database-url', url, '--db-schema', schema]));
    const runs = await Promise.all(
      Array.from({ length: 40 }, (_, i) => catalog(['--url', serves[i % 2].url, 'labels', 'add', `name=Bounced ${i}`, '-o', 'json'])),
    );
    for (const r of runs) expect(r.code, r.stderr).toBe(0);
    const printed = runs.map((r) => (JSON.parse(r.stdout) as { id: string }).id).sort();
    const stored = (await (await fetch(`${serves[0].url}/labels?select=id,name,created&name=like.Bounced*&order=id`)).json()) as Array<{ id: string; created: string }>;
    expect(stored.map((s) => s.id)).toEqual(printed);
    for (const s of stored) expect(s.created).toMatch(/\+00:00$/);
    // a COPY read (export's path) through the pooler, from the other process
    const exported = await catalog(['--url', serves[1].url, 'labels', 'export', '-o', 'csv', '--where', 'name~Bounced*']);
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stdout.trim().split('\n')).toHaveLength(41);
  });

  it('three concurrent keyless imports of one tracks file through two services behind it store each ISRC once (issue 35)', async () => {
    const mine = [await startServe(['--database-url', url, '--db-schema', schema]), await startServe(['--database-url', url, '--db-schema', schema])];
    serves.push(...mine);
    const dir = tempDir('bounced-import-');
    const input = join(dir, 'tracks.csv');
    writeFileSync(input, `isrc_code,track_title\n${Array.from({ length: 3000 }, (_, i) => `QZBNC26${String(i).padStart(5, '0')},Bounced track ${i}`).join('\n')}\n`);
    const runs = await Promise.all([0, 1, 2].map((i) => catalog(['--url', mine[i % 2].url, 'tracks', 'import', input, '--rejects', join(dir, `r${i}.csv`), '--checkpoint', join(dir, `c${i}.json`), '--batch-size', '500'])));
    for (const r of runs) expect(r.code, r.stderr).toBe(0);
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    try {
      const { rows } = await admin.query(`select count(*)::int as n, count(distinct isrc_code)::int as d from ${schema}.tracks where isrc_code like 'QZBNC26%'`);
      expect(rows[0]).toEqual({ n: 3000, d: 3000 });
    } finally {
      await admin.end();
    }
  });
});
