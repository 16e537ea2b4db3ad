import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CatalogClient } from '../../src/client/client.js';
import { createApp } from '../../src/server/app.js';
import { PostgresStore } from '../../src/store/postgres.js';
import { startServer, type RunningServer } from '../../src/server/listen.js';
import { makePostgresStore, PG_URL } from '../support/stores.js';
import { eventually, startProxy, type Proxy } from './support.js';

/**
 * PostgreSQL going away and coming back, produced by a TCP proxy in front of it (the machine's
 * PostgreSQL keeps running): the server answers 503 PGRST000 with Retry-After while it is gone,
 * recovers on its own when it is back, and a client reading during the outage rides it out.
 */
describe.skipIf(!PG_URL)(`PostgreSQL outage behind a TCP proxy${PG_URL ? '' : ' (SKIPPED: set CATALOG_TEST_DATABASE_URL)'}`, () => {
  const schema = `catalog_outage_${process.pid}`;
  let proxy: Proxy;
  let server: RunningServer;
  const logged: string[] = [];

  beforeAll(async () => {
    const target = new URL(PG_URL!);
    proxy = await startProxy(target.hostname, Number(target.port || 5432));
    server = await startServer({ port: 0, databaseUrl: proxy.via(PG_URL!), schema, log: (l) => logged.push(l) });
    const res = await fetch(`${server.url}/labels`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"name":"Before the outage"}' });
    expect(res.status).toBe(201);
  });
  afterAll(async () => {
    proxy?.restore();
    await server?.store.query(`drop schema if exists ${schema} cascade`).catch(() => {});
    await server?.close();
    await proxy?.close();
  });

  it('answers 503 PGRST000 with Retry-After to reads and writes while the database is unreachable, then recovers by itself', async () => {
    proxy.cut();
    for (const [method, body] of [['GET', undefined], ['POST', '{"name":"During the outage"}'], ['PATCH', '{"name":"x"}']] as const) {
      const res = await fetch(`${server.url}/labels?name=eq.Before%20the%20outage`, { method, body, headers: { 'Content-Type': 'application/json' } });
      const err = (await res.json()) as { code: string; message: string; details: string | null; hint: string | null };
      expect([method, res.status]).toEqual([method, 503]);
      expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(err).toMatchObject({ code: 'PGRST000', message: 'Database connection error. Retrying the connection.' });
    }
    expect(proxy.refused()).toBeGreaterThan(0);
    // the process is still serving: requests that need no database are answered
    expect((await fetch(`${server.url}/`)).status).toBe(200);

    proxy.restore();
    const back = await eventually(async () => (await fetch(`${server.url}/labels?select=name`)).status === 200);
    expect(back).toBe(true);
    const rows = (await (await fetch(`${server.url}/labels?select=name&order=name`)).json()) as Array<{ name: string }>;
    expect(rows).toEqual([{ name: 'Before the outage' }]);
    expect((await fetch(`${server.url}/labels`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"name":"After"}' })).status).toBe(201);
  });

  it('a client read started during the outage retries (honouring Retry-After) and succeeds once the database is back', async () => {
    // the labels as this test finds them: the beforeAll's, and 'After' if the recovery test ran first
    const atStart = (await (await fetch(`${server.url}/labels?select=name&order=name`)).json()) as Array<{ name: string }>;
    expect(atStart).toContainEqual({ name: 'Before the outage' });
    proxy.cut();
    const seen: string[] = [];
    const client = new CatalogClient({
      baseUrl: server.url,
      retries: 5,
      onExchange: (line) => {
        seen.push(line);
        if (/→ 503/.test(line)) proxy.restore(); // the outage ends after the first 503 the client sees
      },
    });
    try {
      const res = await client.request({ method: 'GET', path: '/labels', query: 'select=name&order=name' });
      expect(res.status).toBe(200);
      expect(JSON.parse(res.body)).toEqual(atStart);
      expect(seen[0]).toMatch(/→ 503/);
      expect(seen.at(-1)).toMatch(/→ 200/);
    } finally {
      await client.close();
    }
  });

  it('a plain insert during the outage is not retried: one 503 reaches the caller and nothing is written twice', async () => {
    proxy.cut();
    const seen: string[] = [];
    const client = new CatalogClient({ baseUrl: server.url, retries: 5, onExchange: (l) => seen.push(l) });
    try {
      const err = await client.request({ method: 'POST', path: '/labels', body: '{"name":"Once"}' }).catch((e: unknown) => e);
      expect(err).toMatchObject({ status: 503, code: 'PGRST000' });
      expect(seen).toHaveLength(1);
    } finally {
      proxy.restore();
      await client.close();
    }
    expect(await eventually(async () => (await fetch(`${server.url}/labels?name=eq.Once`)).status === 200)).toBe(true);
    expect(await (await fetch(`${server.url}/labels?name=eq.Once`)).json()).toEqual([]);
  });
});

describe.skipIf(!PG_URL)(`a connection pool with no free connection${PG_URL ? '' : ' (SKIPPED: set CATALOG_TEST_DATABASE_URL)'}`, () => {
  it('answers 504 PGRST003 with Retry-After (not a 500), as PostgREST does, when no connection frees up in time, and serves once one does', async () => {
    // a migrated schema of its own (public of the test database may hold no catalog)
    const migrated = await makePostgresStore();
    // no limit while the pool's one connection is opened (a loaded machine may take seconds to
    // connect), then a short one for the request that finds it busy: pg-pool reads the option at
    // each acquisition
    const pool = new pg.Pool({ connectionString: PG_URL, max: 1, connectionTimeoutMillis: 0 });
    const app = createApp({ store: new PostgresStore(pool, migrated.schema), log: () => {} });
    const held = await pool.connect(); // the pool's only connection, busy elsewhere
    pool.options.connectionTimeoutMillis = 300;
    try {
      const res = await app.handle(new Request('http://localhost/labels?limit=0'));
      // was 503 53300 before issue 24: PostgREST answers a pool acquisition timeout 504 PGRST003
      expect(res.status).toBe(504);
      expect(res.headers.get('retry-after')).toBe('1');
      expect(await res.json()).toMatchObject({ code: 'PGRST003', message: 'Timed out acquiring connection from connection pool.' });
    } finally {
      held.release();
    }
    expect((await app.handle(new Request('http://localhost/labels?limit=0'))).status).toBe(200);
    await pool.end();
    await migrated.drop();
  });
});
