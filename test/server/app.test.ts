import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COLLECTIONS, TABLES } from '../../src/schema/catalog.js';
import type { App } from '../../src/server/app.js';
import type { Store } from '../../src/store/store.js';
import { STORE_KINDS, disposeStore } from '../support/stores.js';
import { appFor, send } from './support.js';

/** A sample value per column type for the round trip. */
function sample(type: string, i: number): unknown {
  switch (type) {
    case 'text':
      return `value ${i}`;
    case 'boolean':
      return i % 2 === 0;
    case 'date':
      return '2024-01-31';
    case 'jsonb':
      return { n: i, tags: ['a'] };
    default:
      return undefined;
  }
}

/** The root, OPTIONS, CORS and the POST/GET/PATCH/DELETE round trip on every collection, on both stores. */
for (const { kind, make, skip } of STORE_KINDS) {
  describe.skipIf(skip)(`service over ${kind}${skip ? ' (SKIPPED: set CATALOG_TEST_DATABASE_URL)' : ''}`, () => {
    let store: Store & { drop?(): Promise<void> };
    let app: App & { logged: string[] };

    beforeAll(async () => {
      store = await make();
      app = appFor(store);
    });
    afterAll(async () => {
      expect(app?.logged ?? []).toEqual([]);
      if (store) await disposeStore(store);
    });

    describe('root', () => {
      it('70: GET / → OpenAPI 2.0 JSON', async () => {
        for (const accept of [undefined, '*/*', 'application/json', 'application/openapi+json']) {
          const r = await send(app, 'GET', '/', { headers: accept ? { Accept: accept } : {} });
          expect(r.status).toBe(200);
          expect(r.headers.get('content-type')).toBe('application/openapi+json; charset=utf-8');
          expect(r.json.swagger).toBe('2.0');
          expect(r.json.paths['/releases']).toBeDefined();
          expect(r.json.definitions.releases).toBeDefined();
        }
      });

      it('71: GET / with only unsupported types → 406; YAML and Atom are our extensions', async () => {
        const csv = await send(app, 'GET', '/', { headers: { Accept: 'text/csv' } });
        expect([csv.status, csv.json.code]).toEqual([406, 'PGRST107']);
        const yaml = await send(app, 'GET', '/', { headers: { Accept: 'application/yaml' } });
        expect(yaml.headers.get('content-type')).toBe('application/yaml; charset=utf-8');
        expect(yaml.text).toMatch(/^swagger: ["']2\.0["']/m);
        const atom = await send(app, 'GET', '/', { headers: { Accept: 'application/atom+xml' } });
        expect(atom.headers.get('content-type')).toBe('application/atom+xml; charset=utf-8');
        expect(atom.text).toContain('<feed');
        const head = await send(app, 'HEAD', '/');
        expect([head.status, head.text, head.headers.get('content-type')]).toEqual([200, '', 'application/openapi+json; charset=utf-8']);
      });

      it('72: OPTIONS / , /releases, /nope', async () => {
        const root = await send(app, 'OPTIONS', '/');
        expect([root.status, root.headers.get('allow'), root.text]).toEqual([200, 'OPTIONS,GET,HEAD', '']);
        const t = await send(app, 'OPTIONS', '/releases');
        expect([t.status, t.headers.get('allow')]).toEqual([200, 'OPTIONS,GET,HEAD,POST,PUT,PATCH,DELETE']);
        expect(t.headers.get('access-control-allow-origin')).toBe('*');
        const nope = await send(app, 'OPTIONS', '/nope');
        expect([nope.status, nope.text]).toEqual([404, '{}']);
      });

      it('writes to / → 405 PGRST117', async () => {
        for (const m of ['POST', 'PATCH', 'PUT', 'DELETE']) {
          const r = await send(app, m, '/', { body: m === 'DELETE' ? undefined : {} });
          expect(r.json).toEqual({ code: 'PGRST117', details: null, hint: null, message: `Unsupported HTTP method: ${m}` });
        }
      });
    });

    describe('CORS', () => {
      it('answers a preflight with PostgREST defaults', async () => {
        const r = await send(app, 'OPTIONS', '/releases', {
          headers: { Origin: 'http://example.com', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type, prefer' },
        });
        expect(r.status).toBe(200);
        expect(r.headers.get('access-control-allow-origin')).toBe('*');
        expect(r.headers.get('access-control-allow-methods')).toBe('GET, POST, PATCH, PUT, DELETE, OPTIONS, HEAD');
        expect(r.headers.get('access-control-allow-headers')).toBe('Authorization, content-type, prefer, Accept, Accept-Language, Content-Language');
        expect(r.headers.get('access-control-max-age')).toBe('86400');
      });

      it('exposes headers on normal requests with an Origin, errors included', async () => {
        const r = await send(app, 'GET', '/labels', { headers: { Origin: 'http://example.com' } });
        expect(r.headers.get('access-control-allow-origin')).toBe('*');
        expect(r.headers.get('access-control-expose-headers')).toContain('Content-Range');
        const e = await send(app, 'GET', '/nope', { headers: { Origin: 'http://example.com' } });
        expect(e.headers.get('access-control-allow-origin')).toBe('*');
        const plain = await send(app, 'GET', '/labels');
        expect(plain.headers.get('access-control-allow-origin')).toBeNull();
      });
    });

    describe('profiles and errors', () => {
      it('Accept-Profile / Content-Profile must name the schema (406 PGRST106)', async () => {
        const ok = await send(app, 'GET', '/labels', { headers: { 'Accept-Profile': store.schema } });
        expect(ok.status).toBe(200);
        const bad = await send(app, 'GET', '/labels', { headers: { 'Accept-Profile': 'other' } });
        expect(bad.status).toBe(406);
        expect(bad.json).toEqual({ code: 'PGRST106', details: null, hint: null, message: `The schema must be one of the following: ${store.schema}` });
        const w = await send(app, 'POST', '/labels', { body: {}, headers: { 'Content-Profile': 'other' } });
        expect(w.json.code).toBe('PGRST106');
      });

      it('unknown table on writes: POST/PATCH with keys → 404 {}, PUT → 405, DELETE → 42P01', async () => {
        const post = await send(app, 'POST', '/users', { body: { a: 1 } });
        expect([post.status, post.text]).toEqual([404, '{}']);
        const patch = await send(app, 'PATCH', '/users', { body: { a: 1 } });
        expect([patch.status, patch.text]).toEqual([404, '{}']);
        const emptyPatch = await send(app, 'PATCH', '/users', { body: {} });
        expect([emptyPatch.status, emptyPatch.json.code]).toEqual([404, '42P01']);
        const put = await send(app, 'PUT', '/users?id=eq.1', { body: { a: 1 } });
        expect([put.status, put.json.code]).toEqual([405, 'PGRST105']);
        const del = await send(app, 'DELETE', '/users');
        expect([del.status, del.json.code]).toEqual([404, '42P01']);
      });

      it('/rpc/<fn>: the catalog has no functions (PGRST202), and RPC takes no PATCH (PGRST101)', async () => {
        const r = await send(app, 'GET', '/rpc/search?q=blue');
        expect(r.status).toBe(404);
        expect(r.json.code).toBe('PGRST202');
        expect(r.json.message).toBe(`Could not find the function ${store.schema}.search(q) in the schema cache`);
        const p = await send(app, 'POST', '/rpc/search', { body: {} });
        expect(p.json.message).toBe(`Could not find the function ${store.schema}.search without parameters in the schema cache`);
        const m = await send(app, 'PATCH', '/rpc/search', { body: {} });
        expect([m.status, m.json]).toEqual([405, { code: 'PGRST101', details: null, hint: null, message: 'Cannot use the PATCH method on RPC' }]);
      });

      it('the Server header is sent when a version is configured', async () => {
        const { createApp } = await import('../../src/server/app.js');
        const versioned = createApp({ store, serverVersion: '12.2.3' });
        const r = await versioned.handle(new Request('http://localhost/labels?limit=1'));
        expect(r.headers.get('server')).toBe('postgrest/12.2.3');
      });
    });

    describe('round trip on every collection', () => {
      for (const name of COLLECTIONS) {
        it(`${name}: POST → GET → PATCH → DELETE`, async () => {
          const table = TABLES.find((t) => t.name === name)!;
          const row: Record<string, unknown> = {};
          table.columns.forEach((c, i) => {
            // a link field takes its documented shape only (issue 29): an empty list of links
            const v = c.keyList ? [] : sample(c.type, i);
            if (v !== undefined && !c.foreignKey) row[c.name] = v;
          });
          const created = await send(app, 'POST', `/${name}`, { body: row, headers: { Prefer: 'return=representation', Accept: 'application/vnd.pgrst.object+json' } });
          expect(created.status, created.text).toBe(201);
          const id = created.json.id as string;
          expect(id).toMatch(/^[0-9a-f-]{36}$/);
          for (const [k, v] of Object.entries(row)) expect(created.json[k], k).toEqual(v);
          expect(created.json.created).toMatch(/^\d{4}-\d\d-\d\dT.*\+00:00$/);

          const got = await send(app, 'GET', `/${name}?id=eq.${id}`);
          expect(got.json).toEqual([created.json]);

          const textCol = table.columns.find((c) => c.type === 'text')!.name;
          const patched = await send(app, 'PATCH', `/${name}?id=eq.${id}`, { body: { [textCol]: 'changed' }, headers: { Prefer: 'return=representation' } });
          expect(patched.status).toBe(200);
          expect(patched.json[0][textCol]).toBe('changed');
          expect(Date.parse(patched.json[0].updated)).toBeGreaterThanOrEqual(Date.parse(created.json.updated));

          const deleted = await send(app, 'DELETE', `/${name}?id=eq.${id}`, { headers: { Prefer: 'count=exact' } });
          expect([deleted.status, deleted.headers.get('content-range')]).toEqual([204, '*/1']);
          const gone = await send(app, 'GET', `/${name}?id=eq.${id}`);
          expect(gone.json).toEqual([]);
        });
      }
    });
  });
}

describe('authentication through the app (JWT, HS256)', () => {
  const SECRET = 'reallyreallyreallyreallyverysafe';
  let store: Store;
  let app: App;

  beforeAll(async () => {
    const { makePGliteStore } = await import('../support/stores.js');
    const { createApp } = await import('../../src/server/app.js');
    store = await makePGliteStore();
    app = createApp({ store, jwtSecret: SECRET });
  });
  afterAll(async () => {
    await store?.close();
  });

  it('anonymous reads; anonymous writes get 401 42501 with WWW-Authenticate: Bearer', async () => {
    expect((await send(app, 'GET', '/labels')).status).toBe(200);
    const w = await send(app, 'POST', '/labels', { body: { name: 'x' } });
    expect(w.status).toBe(401);
    expect(w.json).toEqual({ code: '42501', details: null, hint: null, message: 'permission denied for table labels' });
    expect(w.headers.get('www-authenticate')).toBe('Bearer');
  });

  it('an editor writes, an editor may not delete (403), an expired token is 401 PGRST301 even on unknown paths', async () => {
    const { mintToken } = await import('../../src/server/auth.js');
    const editor = await mintToken(SECRET, 'editor', '1h');
    const auth = { Authorization: `Bearer ${editor}` };
    expect((await send(app, 'POST', '/labels', { body: { name: 'x' }, headers: auth })).status).toBe(201);
    const del = await send(app, 'DELETE', '/labels', { headers: auth });
    expect([del.status, del.json.code]).toEqual([403, '42501']);
    const { SignJWT } = await import('jose');
    const expired = await new SignJWT({ role: 'admin' }).setProtectedHeader({ alg: 'HS256' }).setExpirationTime(Math.floor(Date.now() / 1000) - 3600).sign(new TextEncoder().encode(SECRET));
    const r = await send(app, 'GET', '/nope/deeper', { headers: { Authorization: `Bearer ${expired}` } });
    expect(r.status).toBe(401);
    expect(r.json).toEqual({ code: 'PGRST301', details: null, hint: null, message: 'JWT expired' });
    expect(r.headers.get('www-authenticate')).toBe('Bearer error="invalid_token", error_description="JWT expired"');
  });
});
