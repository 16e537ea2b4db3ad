import { once } from 'node:events';
import { Agent, request as httpRequest } from 'node:http';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { startServer } from '../../src/server/listen.js';
import { makePGliteStore, PG_URL } from '../support/stores.js';
import { eventually } from '../support/patience.js';

/**
 * Shutdown drains: close() stops accepting at once, lets requests already being served finish
 * (their answers arrive and their writes land), ignores idle keep-alive connections, and resolves
 * only after the last response has been sent. Ordering is asserted, never timing.
 */
describe('graceful shutdown', () => {
  it('finishes a request whose body is still arriving when close() is called', async () => {
    const store = await makePGliteStore();
    const server = await startServer({ port: 0, store });
    const { port } = new URL(server.url);
    const events: string[] = [];
    try {
      const arrived = once(server.server, 'request');
      server.server.on('request', (_req, res) => res.on('finish', () => events.push('response sent')));
      const body = JSON.stringify([{ name: 'Drained 1' }, { name: 'Drained 2' }]);
      const req = httpRequest({ host: '127.0.0.1', port, method: 'POST', path: '/labels', headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) } });
      const answered = new Promise<number>((resolve, reject) => {
        req.on('response', (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        });
        req.on('error', reject);
      });
      req.write(body.slice(0, 10));
      await arrived; // the server is now serving this request, half of its body still to come
      const closed = server.close().then(() => events.push('closed'));
      // no new connections once closing has begun
      const refused = await fetch(`${server.url}/labels`).then(() => 'served', (e: Error & { cause?: { code?: string } }) => e.cause?.code ?? 'failed');
      expect(refused).toBe('ECONNREFUSED');
      req.end(body.slice(10));
      expect(await answered).toBe(201);
      await closed;
      expect(events).toEqual(['response sent', 'closed']);
      expect((await store.query<{ name: string }>('select name from labels order by name')).rows.map((r) => r.name)).toEqual(['Drained 1', 'Drained 2']);
    } finally {
      await server.close();
      await store.close();
    }
  });

  it('does not wait for idle keep-alive connections', async () => {
    const store = await makePGliteStore();
    const server = await startServer({ port: 0, store });
    const agent = new Agent({ keepAlive: true });
    try {
      const { port } = new URL(server.url);
      const status = await new Promise<number>((resolve, reject) => {
        httpRequest({ host: '127.0.0.1', port, path: '/labels', agent }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        }).on('error', reject).end();
      });
      expect(status).toBe(200);
      await server.close(); // resolves although the agent still holds an open, idle connection
      expect(server.server.listening).toBe(false);
    } finally {
      agent.destroy();
      await store.close();
    }
  });

  it.skipIf(!PG_URL)(`finishes a query blocked on a lock when close() is called, over PostgreSQL${PG_URL ? '' : ' (SKIPPED: set CATALOG_TEST_DATABASE_URL)'}`, async () => {
    const schema = `catalog_drain_${process.pid}`;
    const server = await startServer({ port: 0, databaseUrl: PG_URL, schema });
    const locker = new pg.Client({ connectionString: PG_URL });
    await locker.connect();
    const events: string[] = [];
    try {
      await locker.query('begin');
      await locker.query(`lock table ${schema}.labels in access exclusive mode`);
      const arrived = once(server.server, 'request');
      server.server.on('request', (_req, res) => res.on('finish', () => events.push('response sent')));
      const slow = fetch(`${server.url}/labels?select=name`).then(async (r) => [r.status, await r.json()]);
      await arrived;
      // wait until the query is really waiting on the lock, so close() finds it in flight
      const waiting = async () => (await locker.query(`select count(*)::int as n from pg_locks where not granted and relation = '${schema}.labels'::regclass`)).rows[0].n > 0;
      expect(await eventually(waiting)).toBe(true);
      const closed = server.close().then(() => events.push('closed'));
      await locker.query('rollback');
      expect(await slow).toEqual([200, []]);
      await closed;
      expect(events).toEqual(['response sent', 'closed']);
    } finally {
      await server.close();
      await locker.query(`drop schema if exists ${schema} cascade`);
      await locker.end();
    }
  });
});
