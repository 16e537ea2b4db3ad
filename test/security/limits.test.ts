import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../src/server/listen.js';
import type { Store } from '../../src/store/store.js';
import { catalog, ensureBuilt, startServe, type Serve } from '../e2e/support.js';
import { makePGliteStore, PG_URL, tempDir } from '../support/stores.js';
import { httpExchange, rawExchange, snapshot } from './support.js';

/**
 * Limits: request body (413, nothing written), URL (414) and header section (431) with JSON bodies
 * and no crash, db-max-rows (responses capped, the CLI's --all and export still get every row),
 * and a statement timeout that answers 57014 instead of hanging.
 */

const MAX_BODY = 2000;

/** Sends `body` in chunks with Transfer-Encoding: chunked (no Content-Length to refuse early). */
function chunkedPost(url: string, path: string, body: string): Promise<{ status: number; body: string }> {
  const base = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: base.hostname, port: base.port, method: 'POST', path, headers: { 'Content-Type': 'application/json' } }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    // the server may answer and close before the whole body is written
    req.on('error', (err: NodeJS.ErrnoException) => (err.code === 'EPIPE' || err.code === 'ECONNRESET' ? undefined : reject(err)));
    for (let i = 0; i < body.length; i += 500) req.write(body.slice(i, i + 500));
    req.end();
  });
}

describe('request size limits (socket adapter over PGlite)', () => {
  let store: Store;
  let server: RunningServer;

  beforeAll(async () => {
    store = await makePGliteStore();
    server = await startServer({ port: 0, store, maxBodyBytes: MAX_BODY });
  });
  afterAll(async () => {
    await server?.close();
    await store?.close();
  });

  const rows = (n: number) => JSON.stringify(Array.from({ length: n }, (_, i) => ({ name: `Label ${i} ${'x'.repeat(40)}` })));

  it('answers 413 PGRST413 to a body over the limit, declared or streamed, and writes nothing', async () => {
    const big = rows(60);
    expect(Buffer.byteLength(big)).toBeGreaterThan(MAX_BODY);
    const declared = await httpExchange(server.url, { method: 'POST', path: '/labels', headers: { 'Content-Type': 'application/json' }, body: big });
    expect(declared.status).toBe(413);
    expect(JSON.parse(declared.body)).toMatchObject({ code: 'PGRST413', message: 'Payload Too Large' });
    const streamed = await chunkedPost(server.url, '/labels', big);
    expect(streamed.status).toBe(413);
    expect(JSON.parse(streamed.body).code).toBe('PGRST413');
    expect((await snapshot(store)).counts.labels).toBe(0);

    const small = rows(10);
    expect(Buffer.byteLength(small)).toBeLessThanOrEqual(MAX_BODY);
    expect((await chunkedPost(server.url, '/labels', small)).status).toBe(201);
    expect((await snapshot(store)).counts.labels).toBe(10);
  });

  it('answers 414 to a request target over 8 KiB and 431 to a header section over 16 KiB, in JSON, and keeps serving', async () => {
    const longUrl = await httpExchange(server.url, { path: `/labels?name=in.(${'a,'.repeat(5000)}b)` });
    expect(longUrl.status).toBe(414);
    expect(JSON.parse(longUrl.body)).toEqual({ code: 'PGRST414', details: 'The request target is longer than the maximum of 8192 bytes.', hint: null, message: 'URI Too Long' });

    const hugeUrl = await rawExchange(server.url, `GET /labels?name=eq.${'a'.repeat(100_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    const bigHeader = await rawExchange(server.url, `GET /labels HTTP/1.1\r\nHost: x\r\nPrefer: ${'a'.repeat(20_000)}\r\n\r\n`);
    const manyHeaders = await rawExchange(server.url, `GET /labels HTTP/1.1\r\nHost: x\r\n${Array.from({ length: 3000 }, (_, i) => `X-H${i}: v`).join('\r\n')}\r\n\r\n`);
    for (const reply of [hugeUrl, bigHeader, manyHeaders]) {
      expect(reply.status).toBe(431);
      expect(JSON.parse(reply.body)).toMatchObject({ code: 'PGRST431', message: 'Request Header Fields Too Large' });
    }
    const garbage = await rawExchange(server.url, 'NOT HTTP AT ALL\r\n\r\n');
    expect(garbage.status).toBe(400);
    expect(JSON.parse(garbage.body).code).toBe('PGRST400');

    const fine = await httpExchange(server.url, { path: `/labels?select=name&name=in.(${'a,'.repeat(1000)}b)` });
    expect(fine).toMatchObject({ status: 200, body: '[]' });
  });

  it('answers a HEAD with a URL or headers too long without a body, so the client reads the status (issue 26)', async () => {
    const raw = await rawExchange(server.url, `HEAD /labels?name=in.(${'a,'.repeat(10_000)}b) HTTP/1.1\r\nHost: x\r\n\r\n`);
    expect(raw.status).toBe(431);
    expect(raw.body).toBe('');
    // node's own client used to fail with "Parse Error: Data after Connection: close" here
    for (const n of [5_000, 10_000]) {
      const status = await new Promise<number>((resolve, reject) => {
        const base = new URL(server.url);
        const req = httpRequest({ host: base.hostname, port: base.port, method: 'HEAD', path: `/labels?name=in.(${'a,'.repeat(n)}b)` }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        });
        req.on('error', reject);
        req.end();
      });
      expect(status).toBe(n === 5_000 ? 414 : 431);
    }
  });
});

describe('catalog serve --max-rows', () => {
  let serve: Serve;

  beforeAll(async () => {
    ensureBuilt();
    serve = await startServe(['--data', join(tempDir('max-rows-'), 'data'), '--max-rows', '7']);
    const body = JSON.stringify(Array.from({ length: 23 }, (_, i) => ({ name: `Label ${String(i).padStart(2, '0')}` })));
    const res = await fetch(`${serve.url}/labels`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
    expect(res.status).toBe(201);
  });
  afterAll(async () => {
    await serve?.stop();
  });

  it('caps every response at 7 rows (Content-Range says so) while list --all and export still get all 23', async () => {
    const res = await fetch(`${serve.url}/labels?select=name&order=name`, { headers: { Prefer: 'count=exact' } });
    expect((await res.json()) as unknown[]).toHaveLength(7);
    expect(res.headers.get('content-range')).toBe('0-6/23');
    const embedded = await fetch(`${serve.url}/labels?select=name,releases(id)&limit=100`);
    expect((await embedded.json()) as unknown[]).toHaveLength(7);

    const all = await catalog(['--url', serve.url, 'labels', 'list', '--all', '--select', 'name', '--order', 'name', '-o', 'json', '--page-size', '5']);
    expect(all.code, all.stderr).toBe(0);
    expect((JSON.parse(all.stdout) as Array<{ name: string }>).map((r) => r.name)).toEqual(Array.from({ length: 23 }, (_, i) => `Label ${String(i).padStart(2, '0')}`));
    const exported = await catalog(['--url', serve.url, 'labels', 'export', '--format', 'ndjson', '--select', 'name']);
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stdout.trim().split('\n')).toHaveLength(23);
  });

  it('refuses --max-rows 0 and --statement-timeout without PostgreSQL (exit 2)', async () => {
    expect((await catalog(['serve', '--port', '0', '--max-rows', '0'])).code).toBe(2);
    const r = await catalog(['serve', '--port', '0', '--statement-timeout', '100', '--data', tempDir('st-')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--statement-timeout needs --database-url');
  });
});

describe.skipIf(!PG_URL)(`catalog serve --statement-timeout over PostgreSQL${PG_URL ? '' : ' (SKIPPED: set CATALOG_TEST_DATABASE_URL)'}`, () => {
  const schema = `catalog_timeout_${process.pid}`;
  let serve: Serve;
  let locker: pg.Client;

  beforeAll(async () => {
    ensureBuilt();
    serve = await startServe(['--database-url', PG_URL!, '--db-schema', schema, '--statement-timeout', '300']);
    locker = new pg.Client({ connectionString: PG_URL });
    await locker.connect();
  });
  afterAll(async () => {
    await serve?.stop();
    await locker?.query('rollback').catch(() => {});
    await locker?.query(`drop schema if exists ${schema} cascade`);
    await locker?.end();
  });

  it('answers a statement stuck behind a lock with 500 57014 and a hint instead of hanging, then serves normally', async () => {
    expect((await fetch(`${serve.url}/labels`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"name":"Locked"}' })).status).toBe(201);
    await locker.query('begin');
    await locker.query(`lock table ${schema}.labels in access exclusive mode`);
    for (const [method, body] of [['GET', undefined], ['PATCH', '{"name":"Never"}']] as const) {
      const res = await fetch(`${serve.url}/labels?name=eq.Locked`, { method, body, headers: { 'Content-Type': 'application/json' } });
      expect(res.status).toBe(500);
      const err = (await res.json()) as { code: string; message: string; hint: string };
      expect(err.code).toBe('57014');
      expect(err.message).toBe('canceling statement due to statement timeout');
      expect(err.hint).toMatch(/statement timeout/);
    }
    await locker.query('rollback');
    const after = await fetch(`${serve.url}/labels?select=name`);
    expect(await after.json()).toEqual([{ name: 'Locked' }]);
  });
});
