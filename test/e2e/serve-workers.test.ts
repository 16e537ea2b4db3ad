import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { PG_URL, tempDir } from '../support/stores.js';
import { BIN, ensureBuilt, startServe } from './support.js';
import { HAS_PROC, listeningPorts, scrape, total, until, waitForLines, withChildren } from './support-serve.js';
import { PATIENCE_MS } from '../support/patience.js';
import { eventually } from '../support/patience.js';

ensureBuilt();

async function dropSchema(schema: string): Promise<void> {
  const c = new pg.Client({ connectionString: PG_URL });
  await c.connect();
  await c.query(`drop schema if exists ${schema} cascade`);
  await c.end();
}

/** `catalog serve --workers 2 --admin-port 0 …` on a schema and application_name of its own; resolves once it serves. */
async function startCluster(args: string[]) {
  const id = `${process.pid}_${Date.now().toString(36)}`;
  const schema = `catalog_workers_${id}`;
  const appName = `catalog_workers_${id}`;
  const url = `${PG_URL}${PG_URL!.includes('?') ? '&' : '?'}application_name=${appName}`;
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--admin-port', '0', '--workers', '2', '--database-url', url, '--db-schema', schema, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const served = await until(() => /Admin \(\/live, \/ready, \/metrics\) at http/.test(stderr) || child.exitCode !== null, PATIENCE_MS);
  if (!served || child.exitCode !== null) throw new Error(`serve did not start: ${stderr}`);
  return {
    child,
    schema,
    appName,
    stderr: () => stderr,
    url: /Serving the catalog at (\S+) with 2 workers/.exec(stderr)![1],
    adminUrl: /Admin \(\/live, \/ready, \/metrics\) at (\S+)/.exec(stderr)![1],
    async stop() {
      child.kill('SIGTERM');
      const [code] = child.exitCode !== null ? [child.exitCode] : await once(child, 'exit');
      await dropSchema(schema);
      return code as number;
    },
  };
}

// Issue 38 item 2: with --workers the primary answers /metrics for the whole service; --db-pool is the service's pool.
describe.skipIf(!PG_URL)(`catalog serve --workers 2: metrics, pool, signals${PG_URL ? '' : ' (SKIPPED: set CATALOG_TEST_DATABASE_URL)'}`, () => {
  it('six scrapes never go down; process figures are there; the pool figures match pg_stat_activity', async () => {
    const serve = await startCluster(['--db-pool', '4']);
    const admin = new pg.Client({ connectionString: PG_URL });
    const watch = new pg.Client({ connectionString: PG_URL });
    await Promise.all([admin.connect(), watch.connect()]);
    try {
      const counts: number[] = [];
      for (let i = 0; i < 6; i++) {
        const answers = await Promise.all(Array.from({ length: 3 }, () => fetch(`${serve.url}/labels?select=name`).then((r) => r.status)));
        expect(answers).toEqual([200, 200, 200]);
        const m = await scrape(serve.adminUrl);
        counts.push(total(m, 'catalog_http_requests_total'));
        expect(total(m, 'catalog_workers')).toBe(2);
        expect(total(m, 'pgrst_db_pool_max')).toBe(4); // the service's pool, not each worker's
        expect(total(m, 'process_cpu_seconds_total')).toBeGreaterThan(0);
        expect(total(m, 'process_resident_memory_bytes')).toBeGreaterThan(0);
        expect(total(m, 'process_start_time_seconds')).toBeGreaterThan(0);
      }
      // never fewer than the scrape before (a worker counts a request as its last byte goes, so one
      // scrape may come a moment before the last of its three is counted) …
      for (let i = 1; i < 6; i++) expect(counts[i]).toBeGreaterThanOrEqual(counts[i - 1]);
      expect(counts[5]).toBeGreaterThan(counts[0]);
      // … and all 18 answered requests, of both workers, in the sum
      let last = counts[5];
      for (let i = 0; i < 100 && last < 18; i++) last = total(await scrape(serve.adminUrl), 'catalog_http_requests_total');
      expect(last).toBe(18);

      // hold every pooled connection: a lock makes each read wait, so both workers' pools fill
      await admin.query('begin');
      await admin.query(`lock table ${serve.schema}.labels in access exclusive mode`);
      const reads = Array.from({ length: 12 }, () => fetch(`${serve.url}/labels?select=name`).then((r) => r.status));
      // read on a connection of its own: a transaction sees one snapshot of pg_stat_activity
      const sessions = async () => Number((await watch.query('select count(*) as n from pg_stat_activity where application_name = $1', [serve.appName])).rows[0].n);
      await eventually(async () => (await sessions()) >= 4);
      expect(await sessions()).toBe(4); // --db-pool 4 over two workers: never more
      const m = await scrape(serve.adminUrl);
      expect(total(m, 'pgrst_db_pool_available') + total(m, 'catalog_db_pool_in_use')).toBe(await sessions());
      expect(total(m, 'catalog_db_pool_in_use')).toBe(4);
      expect(total(m, 'pgrst_db_pool_waiting')).toBeGreaterThan(0);
      await admin.query('rollback');
      expect(await Promise.all(reads)).toEqual(Array(12).fill(200));
    } finally {
      await Promise.all([admin.end(), watch.end()]);
      expect(await serve.stop()).toBe(0);
    }
  });

  it('the primary passes SIGUSR1 and SIGUSR2 on to both workers: a changed config is served by each, nothing listens on 9229', async () => {
    const config = join(tempDir('workers-'), 'postgrest.conf');
    writeFileSync(config, 'db-max-rows = 2\n');
    const serve = await startCluster(['--config', config]);
    try {
      const post = await fetch(`${serve.url}/labels`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify([{ name: 'A' }, { name: 'B' }, { name: 'C' }]) });
      expect(post.status).toBe(201);
      const loads = total(await scrape(serve.adminUrl), 'pgrst_schema_cache_loads_total');
      process.kill(serve.child.pid!, 'SIGUSR1');
      await waitForLines(serve.stderr, /worker \d+: SIGUSR1: schema description reloaded/, 2);
      expect(total(await scrape(serve.adminUrl), 'pgrst_schema_cache_loads_total')).toBe(loads + 2);

      writeFileSync(config, 'db-max-rows = 1\n');
      process.kill(serve.child.pid!, 'SIGUSR2');
      await waitForLines(serve.stderr, /worker \d+: SIGUSR2: configuration reloaded \(changed: max-rows\)/, 2);
      const sizes = await Promise.all(Array.from({ length: 8 }, () => fetch(`${serve.url}/labels`).then(async (r) => ((await r.json()) as unknown[]).length)));
      expect(sizes).toEqual(Array(8).fill(1));
      if (HAS_PROC) {
        const ports = listeningPorts(withChildren(serve.child.pid!));
        expect(ports).toEqual([Number(new URL(serve.url).port), Number(new URL(serve.adminUrl).port)].sort((a, b) => a - b));
      } else console.warn('SKIPPED the listening-socket check: no /proc on this machine');

      // a worker that dies is replaced; what it had counted stays in the sums
      const before = total(await scrape(serve.adminUrl), 'catalog_http_requests_total');
      process.kill(withChildren(serve.child.pid!)[1], 'SIGKILL');
      await waitForLines(serve.stderr, /worker \d+ serving in its place/);
      expect(total(await scrape(serve.adminUrl), 'catalog_http_requests_total')).toBeGreaterThanOrEqual(before);
    } finally {
      expect(await serve.stop()).toBe(0);
    }
  });
});

describe.skipIf(!PG_URL)(`catalog serve --db-pool, --db-pool-acquisition-timeout${PG_URL ? '' : ' (SKIPPED: set CATALOG_TEST_DATABASE_URL)'}`, () => {
  it('one connection: a second request waits for it at most the acquisition timeout, then 504 PGRST003', async () => {
    const id = `${process.pid}_${Date.now().toString(36)}`;
    const schema = `catalog_pool_${id}`;
    const url = `${PG_URL}${PG_URL!.includes('?') ? '&' : '?'}application_name=catalog_pool_${id}`;
    const serve = await startServe(['--database-url', url, '--db-schema', schema, '--db-pool', '1', '--db-pool-acquisition-timeout', '1']);
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    try {
      await admin.query('begin');
      await admin.query(`lock table ${schema}.labels in access exclusive mode`);
      const first = fetch(`${serve.url}/labels`).then((r) => r.status);
      // the first has the one connection once its statement waits on the lock (seen from another session)
      const watch = new pg.Client({ connectionString: PG_URL });
      await watch.connect();
      const waiting = async () => Number((await watch.query(`select count(*) as n from pg_stat_activity where application_name = $1 and wait_event_type = 'Lock'`, [`catalog_pool_${id}`])).rows[0].n);
      await eventually(async () => (await waiting()) > 0);
      const seen = await waiting();
      await watch.end();
      expect(seen).toBe(1);
      const second = await fetch(`${serve.url}/labels`);
      expect([second.status, ((await second.json()) as { code: string }).code]).toEqual([504, 'PGRST003']);
      await admin.query('rollback');
      expect(await first).toBe(200);
    } finally {
      await admin.end();
      expect(await serve.stop()).toBe(0);
      await dropSchema(schema);
    }
  });
});
