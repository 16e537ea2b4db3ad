import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CatalogClient, type ClientOptions } from '../../src/client/client.js';
import { ServiceError } from '../../src/client/errors.js';
import type { HttpRequest, HttpResponse, ServiceClient } from '../../src/client/transport.js';
import { HandBack } from '../../src/holder/hand-back.js';
import { InProcessClient } from '../../src/holder/in-process-client.js';
import { HOLDER_HEADER, KEY_HEADER } from '../../src/holder/lock.js';
import { type InProcessRequest, type RequestFigures, type RunningServer, startServer } from '../../src/server/listen.js';
import { tempDir } from '../support/stores.js';

/** Headers the socket adds (framing, date): the in-process answer has no socket. */
const FRAMING = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding', 'content-length']);
const unframed = (h: Record<string, string>) => Object.fromEntries(Object.entries(h).filter(([k]) => !FRAMING.has(k)));
/** A `-v` line without its milliseconds, which differ from run to run. */
const untimed = (line: string) => line.replace(/\(\d+ ms/, '(N ms');

/** What a command sees of an exchange: the answer, or the error it throws, field by field. */
async function outcome(client: ServiceClient, req: HttpRequest, throwing = true): Promise<unknown> {
  try {
    const res: HttpResponse = throwing ? await client.request(req) : await client.send(req);
    return { status: res.status, headers: unframed(res.headers), body: res.body, request: res.request };
  } catch (err) {
    const e = err as ServiceError;
    return { error: e.name, message: e.message, status: e.status, code: e.code, details: e.details, hint: e.hint, body: e.body, request: e.request };
  }
}

describe('the in-process client (src/holder/in-process-client.ts) and RunningServer.serveInProcess', () => {
  let server: RunningServer;
  const figures: RequestFigures[] = [];
  const dataDir = join(tempDir('in-process-'), 'catalog');

  beforeAll(async () => {
    // a private holder of a data directory, as the background holder serves it
    server = await startServer({ dataDir, port: 0, host: '127.0.0.1', private: true, onRequest: (r) => figures.push(r) });
    const setup = new CatalogClient({ baseUrl: server.url, routeHeaders: { [KEY_HEADER]: server.key! } });
    await setup.request({ method: 'POST', path: '/labels', body: JSON.stringify([{ name: 'Blue Note' }, { name: 'Impulse!' }]) });
    await setup.close();
  });

  afterAll(async () => {
    await server?.close();
  });

  /** A CatalogClient over HTTP and an InProcessClient with the same options, and the `-v` lines of each. */
  const pair = (over: Partial<ClientOptions> = {}) => {
    const lines = { http: [] as string[], here: [] as string[] };
    const base: ClientOptions = { baseUrl: server.url, routeHeaders: { [KEY_HEADER]: server.key! }, userAgent: 'catalog/test', relocate: async () => ({ url: server.url, headers: { [KEY_HEADER]: server.key! } }), ...over };
    const http = new CatalogClient({ ...base, onExchange: (l) => lines.http.push(untimed(l)) });
    const here = new InProcessClient({ ...base, onExchange: (l) => lines.here.push(untimed(l)) }, (req) => server.serveInProcess(req));
    return { http, here, lines };
  };

  it('answers as the server answers over HTTP: the same status, headers (the holder tag too), body, errors and -v lines', async () => {
    const { http, here, lines } = pair();
    const cases: Array<[HttpRequest, boolean]> = [
      [{ method: 'GET', path: '/labels', query: 'select=name&order=name' }, true],
      [{ method: 'GET', path: '/labels', query: 'select=name&name=eq.Impulse!', headers: { Accept: 'text/csv' } }, true],
      [{ method: 'HEAD', path: '/labels', headers: { Prefer: 'count=exact' } }, true],
      [{ method: 'GET', path: '/labels', query: 'no_such_field=eq.1' }, true],
      [{ method: 'GET', path: '/labels', query: 'name=xx.1' }, false],
      [{ method: 'GET', path: '/no_such_collection' }, true],
      // the root description names the server by the Host the request carries
      [{ method: 'GET', path: '/', headers: { accept: 'application/openapi+json' } }, true],
      // a request target longer than the server takes (414), a body of a type a private holder refuses (415)
      [{ method: 'GET', path: '/labels', query: `name=in.(${'x,'.repeat(5000)}x)` }, true],
      [{ method: 'POST', path: '/labels', body: 'name=x', headers: { 'content-type': 'text/plain' } }, true],
    ];
    const statuses: unknown[] = [];
    for (const [req, throwing] of cases) {
      const viaHttp = await outcome(http, req, throwing);
      expect(await outcome(here, req, throwing), `${req.method} ${req.path}?${req.query ?? ''}`).toEqual(viaHttp);
      statuses.push((viaHttp as { status: number }).status);
    }
    // and they were these answers, not the same failure every time
    expect(statuses).toEqual([200, 200, 200, 400, 400, 404, 200, 414, 415]);
    expect(lines.here).toEqual(lines.http);
    expect(lines.here[0]).toMatch(new RegExp(`^GET ${server.url}/labels\\?select=name&order=name → 200 \\(N ms\\)$`));
    const tagged = await here.request({ method: 'GET', path: '/labels', query: 'limit=1' });
    expect(tagged.headers[HOLDER_HEADER]).toBeTruthy();
    await http.close();
  });

  it('asks for the private holder\'s credential as over HTTP: none, or another, is refused alike', async () => {
    for (const routeHeaders of [{}, { [KEY_HEADER]: 'not-the-key' }] as Array<Record<string, string>>) {
      const { http, here, lines } = pair({ routeHeaders });
      const req: HttpRequest = { method: 'GET', path: '/labels' };
      const refused = await outcome(here, req);
      expect(refused).toMatchObject({ error: 'ServiceError', status: 401, code: 'PGRST302' });
      expect(refused).toEqual(await outcome(http, req));
      expect(lines.here).toEqual(lines.http);
      await http.close();
    }
  });

  it('is counted and logged by the server as a request over HTTP is (the idle exit and a draining close watch that count)', async () => {
    const { http, here } = pair();
    const seen = async (client: ServiceClient) => {
      const before = figures.length;
      await client.send({ method: 'GET', path: '/labels', query: 'select=name&limit=1' });
      return figures.slice(before).map(({ method, path, status, role }) => ({ method, path, status, role }));
    };
    const viaHttp = await seen(http);
    expect(viaHttp).toEqual([{ method: 'GET', path: '/labels?select=name&limit=1', status: 200, role: expect.any(String) }]);
    expect(await seen(here)).toEqual(viaHttp);
    await http.close();
  });

  it('sends a request again after a 503 (idempotent only), as CatalogClient does', async () => {
    const sent: InProcessRequest[] = [];
    const serve = async (req: InProcessRequest) => {
      sent.push(req);
      return sent.length === 1 ? { status: 503, headers: { 'content-type': 'application/json', 'retry-after': '0' }, body: Buffer.from('{"message":"busy"}') } : server.serveInProcess(req);
    };
    const lines: string[] = [];
    const here = new InProcessClient({ baseUrl: server.url, routeHeaders: { [KEY_HEADER]: server.key! }, sleep: async () => {}, onExchange: (l) => lines.push(untimed(l)) }, serve);
    const res = await here.request({ method: 'GET', path: '/labels', query: 'select=name&limit=1' });
    expect(res.status).toBe(200);
    expect(lines).toEqual([`GET ${server.url}/labels?select=name&limit=1 → 503 (N ms)`, `GET ${server.url}/labels?select=name&limit=1 → 200 (N ms)`]);
    // what node:http would have sent: the target, Host, the credential, the client's headers
    expect(sent[1]).toMatchObject({ method: 'GET', target: '/labels?select=name&limit=1', headers: { host: new URL(server.url).host, [KEY_HEADER]: server.key, accept: 'application/json' } });
  });

  it('gives up after the timeout with CatalogClient\'s error, and cancels the request', async () => {
    // a server that never answers, over HTTP; a serve that never answers, in process
    const silent: Server = createServer(() => {});
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
    const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    let signal: AbortSignal | undefined;
    try {
      const http = new CatalogClient({ baseUrl: url, timeoutMs: 50 });
      const here = new InProcessClient({ baseUrl: url, timeoutMs: 50 }, (req) => ((signal = req.signal), new Promise(() => {})));
      const req: HttpRequest = { method: 'GET', path: '/labels' };
      const viaHttp = await outcome(http, req);
      expect(viaHttp).toMatchObject({ error: 'TimeoutError', message: `no answer from ${url} within 0.05 s` });
      expect(await outcome(here, req)).toEqual(viaHttp);
      expect(signal?.aborted).toBe(true);
      await http.close();
    } finally {
      silent.closeAllConnections();
      await new Promise((r) => silent.close(r));
    }
  });

  it('once the server is closed: refused as over HTTP, and a command following the holder is handed back to its client', async () => {
    const own = await startServer({ dataDir: join(tempDir('in-process-closed-'), 'catalog'), port: 0, host: '127.0.0.1', private: true });
    const options: ClientOptions = { baseUrl: own.url, routeHeaders: { [KEY_HEADER]: own.key! } };
    await own.close();
    const req: HttpRequest = { method: 'GET', path: '/labels', idempotent: false };
    const viaHttp = await outcome(new CatalogClient(options), req);
    expect(viaHttp).toMatchObject({ error: 'ConnectionError' });
    expect(await outcome(new InProcessClient(options, (r) => own.serveInProcess(r)), req)).toEqual(viaHttp);
    const following = new InProcessClient({ ...options, relocate: async () => ({ url: own.url, headers: {} }) }, (r) => own.serveInProcess(r));
    await expect(following.request(req)).rejects.toBeInstanceOf(HandBack);
  });
});
