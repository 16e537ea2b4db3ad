import { request } from 'node:http';
import { beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/server/app.js';
import { startServer } from '../../src/server/listen.js';
import { useTestService } from '../support/service.js';
import { L, R, seedFixture, U } from './support.js';

const service = useTestService();

function raw(method: string, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const url = new URL(path, service.url);
    const req = request({ host: url.hostname, port: url.port, path: url.pathname, method }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('node:http adapter', () => {
  it('answers TRACE (which a WHATWG Request refuses to carry) with 405 PGRST117, not 500', async () => {
    const r = await raw('TRACE', '/');
    expect(r.status).toBe(405);
    expect(JSON.parse(r.body)).toEqual({ code: 'PGRST117', details: null, hint: null, message: 'Unsupported HTTP method: TRACE' });
    const after = await raw('GET', '/labels');
    expect(after.status).toBe(200);
  });

  it('refuses to listen on a non-loopback address without a JWT secret', async () => {
    await expect(startServer({ store: service.store, port: 0, host: '0.0.0.0' })).rejects.toThrow(/refusing to listen on 0\.0\.0\.0 without authentication/);
  });
});

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Headers both adapters send alike; the socket adds its own framing ones. */
const FRAMING = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding', 'content-length']);

function comparable(entries: Iterable<[string, string]>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of entries) if (!FRAMING.has(k.toLowerCase())) out[k.toLowerCase()] = v;
  return out;
}

/** One request over the socket, its header lines exactly as listed (a name may repeat). */
function overSocket(method: string, path: string, headers: Array<[string, string]>, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const url = new URL(service.url);
    // With a header array node:http sends exactly these lines, so Host is ours to add.
    const lines = ['Host', url.host, ...headers.flat()];
    if (body !== undefined) lines.push('Content-Length', String(Buffer.byteLength(body)));
    const req = request({ host: url.hostname, port: url.port, path, method, headers: lines }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const pairs: Array<[string, string]> = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) pairs.push([res.rawHeaders[i], res.rawHeaders[i + 1]]);
        resolve({ status: res.statusCode ?? 0, headers: comparable(pairs), body: Buffer.concat(chunks).toString('utf8') });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The same request through the fetch adapter (`app.handle`), as tests and the in-process transport call it. */
async function throughFetch(method: string, path: string, headers: Array<[string, string]>, body?: string): Promise<Answer> {
  const h = new Headers();
  for (const [k, v] of headers) h.append(k, v);
  const app = createApp({ store: service.store });
  const res = await app.handle(new Request(new URL(path, service.url), { method, headers: h, body }));
  return { status: res.status, headers: comparable(res.headers), body: await res.text() };
}

describe('node:http adapter and fetch adapter give the same answers', () => {
  beforeAll(async () => {
    await seedFixture(service.store);
  });

  const cases: Array<[string, string, Array<[string, string]>, string?]> = [
    ['GET', '/releases?select=id,release_title,labels(name)&order=release_date.desc&limit=3', [['Prefer', 'count=exact']]],
    ['HEAD', '/releases?order=release_date.desc&limit=3', [['Prefer', 'count=exact']]],
    ['GET', `/releases?id=eq.${R[0]}`, [['Accept', 'application/vnd.pgrst.object+json']]],
    ['GET', '/releases?select=id,catalog_number&order=catalog_number&limit=2', [['Accept', 'text/csv']]],
    // Two Prefer lines: fetch joins them with ", ", and so must the socket adapter.
    ['GET', '/releases?select=id,created&limit=1', [['Prefer', 'count=exact'], ['Prefer', 'timezone=America/New_York']]],
    ['GET', '/labels?name=eq.Caf%C3%A9', []],
    ['GET', '/nope', [['Origin', 'http://example.test']]],
    ['GET', '/releases?select=nope', []],
    ['OPTIONS', '/releases', [['Origin', 'http://example.test'], ['Access-Control-Request-Method', 'POST'], ['Access-Control-Request-Headers', 'Prefer']]],
    ['OPTIONS', '/labels', []],
    ['GET', '/', [['Accept', 'application/openapi+json']]],
    ['PATCH', `/labels?id=eq.${L[0]}&select=id,name`, [['Content-Type', 'application/json'], ['Prefer', 'return=representation']], '{"name":"Blue Note"}'],
    ['POST', '/labels', [['Content-Type', 'application/json']], 'not json'],
    ['DELETE', `/labels?id=eq.${U}`, []],
  ];
  for (const [method, path, headers, body] of cases) {
    it(`${method} ${path}${headers.length ? ` (${headers.map(([k, v]) => `${k}: ${v}`).join('; ')})` : ''}`, async () => {
      const socket = await overSocket(method, path, headers, body);
      const fetched = await throughFetch(method, path, headers, body);
      expect(socket).toEqual(fetched);
      expect(socket.status).toBeLessThan(500);
    });
  }
});
