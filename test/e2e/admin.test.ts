import { describe, expect, it } from 'vitest';
import { startServer } from '../../src/server/listen.js';
import { startProxy, eventually } from '../reliability/support.js';
import { catalog, ensureBuilt } from '../e2e/support.js';
import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { BIN, ROOT } from '../e2e/support.js';
import { makePGliteStore, PG_URL, tempDir } from '../support/stores.js';

/** The admin port (issue 28 item 3): /live, /ready and /metrics on a port of its own. */
describe('--admin-port', () => {
  it('answers /live and /ready, and /metrics counts the requests made, by method and status', async () => {
    const store = await makePGliteStore();
    const server = await startServer({ port: 0, store, adminPort: 0 });
    try {
      const admin = server.adminUrl!;
      expect((await fetch(`${admin}/live`)).status).toBe(200);
      expect((await fetch(`${admin}/ready`)).status).toBe(200);
      for (let i = 0; i < 3; i++) expect((await fetch(`${server.url}/labels`)).status).toBe(200);
      expect((await fetch(`${server.url}/labels`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"name":"Counted"}' })).status).toBe(201);
      expect((await fetch(`${server.url}/nope`)).status).toBe(404);
      // the main port's answers are counted as their connections close
      let text = '';
      expect(await eventually(async () => /catalog_http_request_duration_seconds_count 5\n/.test((text = await (await fetch(`${admin}/metrics`)).text())))).toBe(true);
      expect(text).toContain('catalog_http_requests_total{method="GET",status="200"} 3\n');
      expect(text).toContain('catalog_http_requests_total{method="POST",status="201"} 1\n');
      expect(text).toContain('catalog_http_requests_total{method="GET",status="404"} 1\n');
      expect(text).toContain('catalog_http_request_duration_seconds_bucket{le="+Inf"} 5\n');
      expect((await fetch(`${admin}/labels`)).status).toBe(404);
      expect((await fetch(`${server.url}/live`)).status).toBe(404);
    } finally {
      await server.close();
      await store.close();
    }
  });

  it('/ready is 503 while the instance drains its requests on the way out, /live still 200', async () => {
    const store = await makePGliteStore();
    const server = await startServer({ port: 0, store, adminPort: 0 });
    const admin = server.adminUrl!;
    const { port } = new URL(server.url);
    // a request whose body is still coming: in flight until its socket goes
    const held = connect(Number(port), '127.0.0.1');
    await new Promise((r) => held.once('connect', r));
    held.write('POST /labels HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"name":');
    held.on('error', () => {});
    // a whole request sent after it has its answer once the server has read the first one's head
    expect((await fetch(`${server.url}/labels`)).status).toBe(200);
    expect((await fetch(`${admin}/ready`)).status).toBe(200);
    let closed = false;
    const closing = server.close().then(() => (closed = true));
    try {
      const ready = await fetch(`${admin}/ready`);
      expect([ready.status, await ready.text()]).toEqual([503, 'shutting down: finishing the requests in flight\n']);
      expect((await fetch(`${admin}/live`)).status).toBe(200);
      expect(closed).toBe(false);
    } finally {
      held.destroy();
      await closing;
      await store.close();
    }
    expect(closed).toBe(true);
  });

  it.skipIf(!PG_URL)(`/ready is 503 while PostgreSQL is unreachable and 200 once it is back, with no restart; pool gauges under PostgREST's names${PG_URL ? '' : ' (SKIPPED: set CATALOG_TEST_DATABASE_URL)'}`, async () => {
    const target = new URL(PG_URL!);
    const proxy = await startProxy(target.hostname, Number(target.port || 5432));
    const schema = `catalog_admin_${process.pid}`;
    const server = await startServer({ port: 0, databaseUrl: proxy.via(PG_URL!), schema, adminPort: 0 });
    try {
      const admin = server.adminUrl!;
      expect((await fetch(`${admin}/ready`)).status).toBe(200);
      expect(await (await fetch(`${admin}/metrics`)).text()).toMatch(/^pgrst_db_pool_max 10$/m);
      proxy.cut();
      expect((await fetch(`${admin}/ready`)).status).toBe(503);
      expect((await fetch(`${admin}/live`)).status).toBe(200);
      proxy.restore();
      expect(await eventually(async () => (await fetch(`${admin}/ready`)).status === 200)).toBe(true);
    } finally {
      proxy.restore();
      await server.store.query(`drop schema if exists ${schema} cascade`).catch(() => {});
      await server.close();
      await proxy.close();
    }
  });

  it('catalog serve --admin-port prints the admin URL; the same port as --port is refused (exit 2)', async () => {
    ensureBuilt();
    const same = await catalog(['serve', '--port', '3999', '--admin-port', '3999', '--data', tempDir('admin-')]);
    expect(same.code).toBe(2);
    expect(same.stderr).toContain('--admin-port must differ from --port');
    const proc = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--admin-port', '0', '--data', tempDir('admin-')], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    proc.stderr.on('data', (c) => (err += c));
    try {
      expect(await eventually(async () => /Admin \(\/live, \/ready, \/metrics\) at (\S+)/.test(err))).toBe(true);
      const admin = /Admin \(\/live, \/ready, \/metrics\) at (\S+)/.exec(err)![1];
      expect((await fetch(`${admin}/live`)).status).toBe(200);
    } finally {
      proc.kill('SIGTERM');
      await new Promise((r) => proc.on('exit', r));
    }
  });
});

describe.skipIf(!PG_URL)(`catalog serve with the database down at start${PG_URL ? '' : ' (SKIPPED: set CATALOG_TEST_DATABASE_URL)'}`, () => {
  it('tries again with backoff, saying so, and serves once the database is reachable', async () => {
    ensureBuilt();
    const target = new URL(PG_URL!);
    const proxy = await startProxy(target.hostname, Number(target.port || 5432));
    proxy.cut();
    const schema = `catalog_down_${process.pid}`;
    const proc = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--database-url', proxy.via(PG_URL!), '--db-schema', schema], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    proc.stderr.on('data', (c) => (err += c));
    try {
      expect(await eventually(async () => /the database cannot be reached \(.*\): trying again in [\d.]+ s/.test(err))).toBe(true);
      expect(proc.exitCode).toBeNull();
      proxy.restore();
      expect(await eventually(async () => /Serving the catalog at (\S+)/.test(err)), err).toBe(true);
      const url = /Serving the catalog at (\S+)/.exec(err)![1];
      expect((await fetch(`${url}/labels`)).status).toBe(200);
    } finally {
      proc.kill('SIGTERM');
      await new Promise((r) => proc.on('exit', r));
      proxy.restore();
      const { default: pg } = await import('pg');
      const c = new pg.Client({ connectionString: PG_URL });
      await c.connect();
      await c.query(`drop schema if exists ${schema} cascade`);
      await c.end();
      await proxy.close();
    }
  });
});
