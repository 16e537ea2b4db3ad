import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, ROOT, ensureBuilt, startServe, type Serve } from '../e2e/support.js';
import { PG_URL, tempDir } from '../support/stores.js';
import { eventually } from './support.js';

/**
 * PostgreSQL ending the service's own sessions (`pg_terminate_backend`, what a restart or an
 * operator does): the request running on a terminated session is answered 503 PGRST001, the
 * process lives on, the pool connects anew, and an import running meanwhile ends with every row.
 * The service's sessions are found by the application_name its URL gives them.
 */
describe.skipIf(!PG_URL)(`database sessions terminated under catalog serve${PG_URL ? '' : ' (SKIPPED: set CATALOG_TEST_DATABASE_URL)'}`, () => {
  const schema = `catalog_drop_${process.pid}`;
  const app = `catalog-drop-${process.pid}`;
  const url = new URL(PG_URL ?? 'postgres://x/y');
  url.searchParams.set('application_name', app);
  let admin: pg.Client;
  let serve: Serve;

  /** Terminates every session of the service under test; how many there were. */
  const terminate = async (): Promise<number> => {
    const r = await admin.query('select count(pg_terminate_backend(pid))::int as n from pg_stat_activity where application_name = $1', [app]);
    return r.rows[0].n as number;
  };

  beforeAll(async () => {
    ensureBuilt();
    admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    serve = await startServe(['--database-url', url.href, '--db-schema', schema]);
  });
  afterAll(async () => {
    await serve?.stop();
    await admin?.query(`drop schema if exists ${schema} cascade`);
    await admin?.end();
  });

  it('a request whose session is terminated mid-statement gets 503 PGRST001; the process lives and the next request is served', async () => {
    expect((await fetch(`${serve.url}/labels`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"name":"Before"}' })).status).toBe(201);
    // hold the table so the next write waits in the database, on a session of the service
    const locker = new pg.Client({ connectionString: PG_URL });
    await locker.connect();
    await locker.query('begin');
    await locker.query(`lock table ${schema}.labels`);
    try {
      const pending = fetch(`${serve.url}/labels`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"name":"Blocked"}' });
      const waiting = async () => (await admin.query(`select 1 from pg_stat_activity where application_name = $1 and wait_event_type = 'Lock'`, [app])).rowCount === 1;
      expect(await eventually(waiting)).toBe(true);
      expect(await terminate()).toBeGreaterThan(0);
      const res = await pending;
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('1');
      expect(await res.json()).toEqual({
        code: 'PGRST001',
        message: 'Database client error. Retrying the connection.',
        details: 'terminating connection due to administrator command',
        hint: null,
      });
    } finally {
      await locker.query('rollback');
      await locker.end();
    }
    expect(serve.proc.exitCode).toBeNull();
    const after = await fetch(`${serve.url}/labels?select=name&order=name`);
    expect(after.status).toBe(200);
    expect(await after.json()).toEqual([{ name: 'Before' }]);
  });

  it('an import whose sessions are terminated mid-statement three times ends with exactly the file’s rows', async () => {
    const ROWS = 20_000;
    const dir = tempDir('drop-import-');
    const input = join(dir, 'tracks.csv');
    const id = (n: number) => `d7090000-0000-4000-8000-${String(n).padStart(12, '0')}`;
    writeFileSync(input, `id,track_title\n${Array.from({ length: ROWS }, (_, i) => `${id(i)},Track ${i}`).join('\n')}\n`);
    const importer = spawn(process.execPath, [BIN, '--url', serve.url, 'tracks', 'import', input, '--batch-size', '20', '--concurrency', '2'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    importer.stderr.on('data', (c) => (stderr += c));
    let code: number | null = null;
    const exited = new Promise<number>((resolve) => importer.on('exit', (c) => resolve((code = c ?? -1))));
    const terminatedAt: number[] = [];
    const locker = new pg.Client({ connectionString: PG_URL });
    await locker.connect();
    try {
      // Each round: the table is locked, so a batch is certainly mid-statement in the database when
      // its session is terminated; then the import must get past the terminated batches before the
      // next round (each batch is retried at most twice). Batches go out in file order, at most two
      // of 20 rows at once: under the lock, the first missing row starts the first one in flight.
      const firstMissing = `select min(i)::int as m from generate_series(0, ${ROWS - 1}) i
        where not exists (select 1 from ${schema}.tracks t where t.id = ('d7090000-0000-4000-8000-' || lpad(i::text, 12, '0'))::uuid)`;
      for (let round = 0; round < 3 && code === null; round++) {
        await locker.query('begin');
        await locker.query(`lock table ${schema}.tracks in share mode`);
        const waiting = async () => code !== null || (await admin.query(`select 1 from pg_stat_activity where application_name = $1 and wait_event_type = 'Lock'`, [app])).rowCount! > 0;
        expect(await eventually(waiting)).toBe(true);
        const m = (await locker.query(firstMissing)).rows[0].m as number | null;
        if (m !== null && (await terminate()) > 0) terminatedAt.push(m);
        await locker.query('rollback');
        if (m === null) break;
        const last = id(Math.min(m + 59, ROWS - 1));
        const past = async () => code !== null || (await admin.query(`select count(*)::int as n from ${schema}.tracks where id <= $1`, [last])).rows[0].n === Math.min(m + 60, ROWS);
        expect(await eventually(past)).toBe(true);
      }
    } finally {
      await locker.end();
    }
    const exitCode = await exited;
    if (exitCode !== 0) console.info(stderr);
    expect(exitCode, stderr).toBe(0);
    expect(terminatedAt).toHaveLength(3);
    expect(serve.proc.exitCode).toBeNull();
    const res = await fetch(`${serve.url}/tracks?select=id,track_title&order=id`, { headers: { Prefer: 'count=exact' } });
    expect(res.headers.get('content-range')).toBe(`0-${ROWS - 1}/${ROWS}`);
    expect(await res.json()).toEqual(Array.from({ length: ROWS }, (_, i) => ({ id: id(i), track_title: `Track ${i}` })));
    console.info(`[connection-drop] sessions terminated with the first row in flight at ${terminatedAt.join(', ')}`);
  });
});
