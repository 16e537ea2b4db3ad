import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { CatalogClient } from '../../src/client/client.js';
import { shellQuote, toCurl } from '../../src/client/curl.js';
import { ConnectionError, ServiceError } from '../../src/client/errors.js';
import { jsonPages, pagesOf } from '../../src/client/pages.js';
import { backoffMs, retryAfterMs } from '../../src/client/retry.js';

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;
const servers: Server[] = [];

/** A real HTTP server on a free loopback port, answering with `handler` (used to produce faults such as 503s). */
async function serve(handler: Handler): Promise<string> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => handler(req, res, body));
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

const noSleep = { sleep: async () => {}, random: () => 0.5 };

describe('CatalogClient', () => {
  it('sends the bearer token, extra headers and JSON body, and returns status, headers and text', async () => {
    let seen: IncomingMessage | null = null;
    let seenBody = '';
    const url = await serve((req, res, body) => {
      seen = req;
      seenBody = body;
      res.writeHead(201, { 'Content-Type': 'application/json', 'Content-Range': '*/*' }).end('[{"id":1}]');
    });
    const client = new CatalogClient({ baseUrl: `${url}/rest/v1`, token: 't0k', headers: { apikey: 'k3y' } });
    const res = await client.request({ method: 'POST', path: '/labels', query: 'select=id', body: '{"name":"x"}', headers: { Prefer: 'return=representation' } });
    expect(res).toMatchObject({ status: 201, body: '[{"id":1}]' });
    expect(res.headers['content-range']).toBe('*/*');
    expect(seen!.url).toBe('/rest/v1/labels?select=id');
    expect(seen!.headers).toMatchObject({ authorization: 'Bearer t0k', apikey: 'k3y', prefer: 'return=representation', 'content-type': 'application/json' });
    expect(seenBody).toBe('{"name":"x"}');
    await client.close();
  });

  it('retries an idempotent GET on 503, honouring Retry-After', async () => {
    let calls = 0;
    const url = await serve((_req, res) => {
      calls++;
      if (calls < 3) res.writeHead(503, { 'Retry-After': '2' }).end('{"code":"PGRST002","message":"retrying"}');
      else res.writeHead(200).end('[]');
    });
    const waits: number[] = [];
    const client = new CatalogClient({ baseUrl: url, sleep: async (ms) => void waits.push(ms), random: () => 0.5 });
    expect((await client.request({ method: 'GET', path: '/labels' })).status).toBe(200);
    expect(calls).toBe(3);
    expect(waits).toEqual([2000, 2000]);
    await client.close();
  });

  it('stream: hands back the response at its headers, the body piece by piece; retries a 503 first; error statuses are returned', async () => {
    let calls = 0;
    const url = await serve((req, res) => {
      calls++;
      if (calls === 1) return void res.writeHead(503, { 'Retry-After': '1' }).end('{"code":"PGRST000","message":"later"}');
      if (req.url?.startsWith('/missing')) return void res.writeHead(404, { 'Content-Type': 'application/json' }).end('{"code":"PGRST205","message":"no table"}');
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.write('a'.repeat(100_000));
      setTimeout(() => res.end('b'), 20);
    });
    const waits: number[] = [];
    const client = new CatalogClient({ baseUrl: url, sleep: async (ms) => void waits.push(ms), random: () => 0.5 });
    const res = await client.stream({ method: 'GET', path: '/labels', headers: { Accept: 'text/plain' } });
    expect(res.status).toBe(200);
    expect(waits).toEqual([1000]);
    let text = '';
    for await (const piece of res.body) text += Buffer.from(piece).toString();
    expect(text).toBe(`${'a'.repeat(100_000)}b`);
    const missing = await client.stream({ method: 'GET', path: '/missing' });
    expect(missing.status).toBe(404);
    expect(JSON.parse(await missing.text()).code).toBe('PGRST205');
    await client.close();
  });

  it('stream: a body cut off before its end throws from its iterator', async () => {
    const url = await serve((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.write('part of it');
      setTimeout(() => res.destroy(), 20);
    });
    const client = new CatalogClient({ baseUrl: url, ...noSleep });
    const res = await client.stream({ method: 'GET', path: '/labels' });
    const read = async () => {
      for await (const _ of res.body) void _;
    };
    await expect(read()).rejects.toThrow();
    await client.close();
  });

  it('does not retry a plain POST, but does retry one marked idempotent', async () => {
    let calls = 0;
    const url = await serve((_req, res) => {
      calls++;
      res.writeHead(503).end('{"code":"PGRST000","message":"Database connection error. Retrying the connection."}');
    });
    const client = new CatalogClient({ baseUrl: url, retries: 2, ...noSleep });
    await expect(client.request({ method: 'POST', path: '/labels', body: '{}' })).rejects.toMatchObject({ status: 503, code: 'PGRST000' });
    expect(calls).toBe(1);
    await expect(client.request({ method: 'POST', path: '/labels', body: '[]', idempotent: true })).rejects.toBeInstanceOf(ServiceError);
    expect(calls).toBe(1 + 3);
    await client.close();
  });

  it('follows a moved embedded holder after a refused connection for any request, after a reset one only for a request that may be sent again', async () => {
    // the holder's fault (the request ran, then the connection dropped before the answer), made by
    // a loopback server that reads the request and resets the connection instead of answering
    let received = 0;
    const dying = await serve((req) => {
      received++;
      req.socket.resetAndDestroy();
    });
    const good = await serve((_req, res) => res.writeHead(201, { 'Content-Type': 'application/json' }).end('[]'));
    const closed = await serve(() => {});
    await new Promise((r) => servers.pop()!.close(r));
    let relocated = 0;
    const make = (baseUrl: string) => new CatalogClient({ baseUrl, ...noSleep, retries: 0, relocate: async () => (relocated++, { url: good, headers: {} }) });
    // a plain insert the dying holder received: not sent again, the caller hears of the failure
    const plain = make(dying);
    await expect(plain.request({ method: 'POST', path: '/labels', body: '{"name":"x"}' })).rejects.toBeInstanceOf(ConnectionError);
    expect([received, relocated]).toEqual([1, 0]);
    await plain.close();
    // one that may be sent again follows the catalog to its next holder
    const safe = make(dying);
    expect((await safe.request({ method: 'POST', path: '/labels', body: '[]', idempotent: true })).status).toBe(201);
    expect([received, relocated]).toEqual([2, 1]);
    await safe.close();
    // a refused connection carried nothing: even a plain insert follows
    const refused = make(closed);
    expect((await refused.request({ method: 'POST', path: '/labels', body: '{"name":"x"}' })).status).toBe(201);
    expect(relocated).toBe(2);
    await refused.close();
  });

  it('throws ServiceError with PostgREST fields for a 4xx', async () => {
    const url = await serve((_req, res) => {
      res.writeHead(400, { 'Content-Type': 'application/json' }).end('{"code":"42703","details":null,"hint":null,"message":"column labels.nope does not exist"}');
    });
    const client = new CatalogClient({ baseUrl: url });
    const err = (await client.request({ method: 'GET', path: '/labels' }).catch((e: unknown) => e)) as ServiceError;
    expect(err).toBeInstanceOf(ServiceError);
    expect([err.status, err.code, err.message]).toEqual([400, '42703', 'column labels.nope does not exist']);
    await client.close();
  });

  it('throws ConnectionError naming the URL when nothing listens', async () => {
    const url = await serve(() => {});
    await new Promise((r) => servers.pop()!.close(r));
    const client = new CatalogClient({ baseUrl: url, ...noSleep });
    const err = (await client.request({ method: 'GET', path: '/labels' }).catch((e: unknown) => e)) as ConnectionError;
    expect(err).toBeInstanceOf(ConnectionError);
    expect(err.url).toBe(url);
    expect(err.message).toMatch(/ECONNREFUSED/);
  });

  it('joins repeated response headers with ", " and drops a UTF-8 byte-order mark from the body', async () => {
    const url = await serve((_req, res) => {
      res.writeHead(200, [['Vary', 'Accept'], ['Vary', 'Prefer'], ['Content-Type', 'application/json']]);
      res.end(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('[{"name":"Æ"}]')]));
    });
    const client = new CatalogClient({ baseUrl: url });
    const res = await client.request({ method: 'GET', path: '/labels' });
    expect(res.headers.vary).toBe('Accept, Prefer');
    expect(res.body).toBe('[{"name":"Æ"}]');
    await client.close();
  });

  it('treats a response cut off mid-body as a connection failure, and retries it for a GET', async () => {
    let calls = 0;
    const url = await serve((_req, res) => {
      calls++;
      if (calls === 1) {
        res.writeHead(200, { 'Content-Length': '100' });
        res.write('[{"na');
        setTimeout(() => res.socket?.destroy(), 10);
      } else res.writeHead(200).end('[]');
    });
    const client = new CatalogClient({ baseUrl: url, ...noSleep });
    expect((await client.request({ method: 'GET', path: '/labels' })).body).toBe('[]');
    expect(calls).toBe(2);
    const once = new CatalogClient({ baseUrl: url, retries: 0, ...noSleep });
    calls = 0;
    await expect(once.request({ method: 'GET', path: '/labels' })).rejects.toBeInstanceOf(ConnectionError);
    await Promise.all([client.close(), once.close()]);
  });

  it('reports each exchange for -v', async () => {
    const url = await serve((_req, res) => res.writeHead(200).end('[]'));
    const lines: string[] = [];
    const client = new CatalogClient({ baseUrl: url, onExchange: (l) => lines.push(l) });
    await client.request({ method: 'GET', path: '/labels', query: 'limit=1' });
    expect(lines[0]).toMatch(new RegExp(`^GET ${url}/labels\\?limit=1 → 200 \\(\\d+ ms\\)$`));
    await client.close();
  });
});

describe('paging', () => {
  // The one pager of the read side (list --all, export, check): keyset pages on the key, the first
  // one counted when asked, until a short page.
  it('reads every page by keyset until a short page, counting on the first request only', async () => {
    const all = Array.from({ length: 7 }, (_, i) => ({ id: `k${i}` }));
    const seen: Array<{ query: string; prefer?: string }> = [];
    const url = await serve((req, res) => {
      const q = new URL(req.url!, 'http://x').searchParams;
      seen.push({ query: decodeURIComponent(new URL(req.url!, 'http://x').search), prefer: req.headers.prefer as string | undefined });
      const after = q.get('id')?.replace(/^gt\./, '');
      const limit = Number(q.get('limit'));
      const offset = Number(q.get('offset') ?? 0);
      const rows = all.filter((r) => after === undefined || r.id > after).slice(offset, offset + limit);
      const headers: Record<string, string> = { 'Content-Range': `0-${rows.length - 1}/${req.headers.prefer ? all.length : '*'}` };
      res.writeHead(200, headers).end(JSON.stringify(rows));
    });
    const client = new CatalogClient({ baseUrl: url });
    const got: unknown[] = [];
    let total: number | null = null;
    const opts = { transport: client, table: { name: 'labels', primaryKey: ['id'] }, query: { where: [], order: [], page: [] }, pageSize: 3, count: 'exact' as const, onTotal: (t: number | null) => (total = t) };
    for await (const p of pagesOf(opts, jsonPages)) got.push(...p);
    expect(got).toEqual(all);
    expect(total).toBe(7);
    expect(seen[0]).toEqual({ query: '?order=id&limit=3', prefer: 'count=exact' });
    expect(seen.filter((s) => s.prefer !== undefined)).toHaveLength(1);
    // pages asked ahead start one row early (its key must repeat the last one read), later ones after the last key
    expect(seen.map((s) => s.query)).toContain('?order=id&limit=4&offset=2');
    expect(seen.some((s) => s.query.startsWith('?id=gt.k'))).toBe(true);
    await client.close();
  });

  it('reads a key list too long for one URL in parts, in key order, with a limit carried across the parts', async () => {
    const hex = (i: number) => i.toString(16).padStart(12, '0');
    const all = Array.from({ length: 600 }, (_, i) => ({ id: `b0c5a000-0000-4000-8000-${hex(i)}` }));
    let longest = 0;
    const url = await serve((req, res) => {
      longest = Math.max(longest, req.url!.length);
      // as a proxy does: a request line past 8 KB is refused
      if (req.url!.length > 8192) return void res.writeHead(414).end();
      const q = new URL(req.url!, 'http://x').searchParams;
      const list = /^in\.\((.*)\)$/.exec(q.getAll('id').find((v) => v.startsWith('in.')) ?? '')?.[1].split(',') ?? [];
      const after = q.getAll('id').find((v) => v.startsWith('gt.'))?.slice(3);
      const limit = Number(q.get('limit'));
      const offset = Number(q.get('offset') ?? 0);
      const rows = all.filter((r) => list.includes(r.id) && (after === undefined || r.id > after)).slice(offset, offset + limit);
      res.writeHead(200, { 'Content-Range': `0-${rows.length - 1}/*` }).end(JSON.stringify(rows));
    });
    const client = new CatalogClient({ baseUrl: url });
    // asked in reverse order and upper case: read back in key order
    const ids = all.map((r) => r.id.toUpperCase()).reverse();
    const query = (limit?: number) => ({ where: [{ path: [], condition: { kind: 'filter' as const, field: { name: 'id', jsonPath: [] }, negated: false, op: 'in' as const, value: ids } }], order: [], page: limit === undefined ? [] : [{ path: [], limit }] });
    const read = async (limit?: number) => {
      const got: Array<{ id: string }> = [];
      for await (const p of pagesOf({ transport: client, table: { name: 'tracks', primaryKey: ['id'] }, query: query(limit), pageSize: 250 }, jsonPages)) got.push(...(p as Array<{ id: string }>));
      return got;
    };
    expect(await read()).toEqual(all);
    expect(longest).toBeLessThanOrEqual(8192);
    expect(await read(450)).toEqual(all.slice(0, 450));
    await client.close();
  });
});

describe('retry timing and curl', () => {
  it('backs off exponentially with jitter, or waits as Retry-After says', () => {
    expect(backoffMs(0, null, () => 1)).toBe(200);
    expect(backoffMs(2, null, () => 0.5)).toBe(400);
    expect(backoffMs(10, null, () => 1)).toBe(30_000);
    expect(backoffMs(0, 5000)).toBe(5000);
    expect(retryAfterMs('3', 0)).toBe(3000);
    expect(retryAfterMs(new Date(10_000).toUTCString(), 4000)).toBe(6000);
    expect(retryAfterMs(undefined, 0)).toBeNull();
  });

  it('prints requests as curl with credentials redacted', () => {
    const line = toCurl('http://h/labels?name=eq.it%27s', { method: 'POST', path: '/labels', body: `{"name":"it's"}` }, { authorization: 'Bearer abc', apikey: 'xyz', prefer: 'return=representation' });
    expect(line).toBe(`curl -X POST 'http://h/labels?name=eq.it%27s' -H 'authorization: Bearer <redacted>' -H 'apikey: <redacted>' -H 'prefer: return=representation' --data-binary '{"name":"it'\\''s"}'`);
    expect(line).not.toMatch(/abc|xyz/);
    expect(shellQuote('plain')).toBe('plain');
  });
});
