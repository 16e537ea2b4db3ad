import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintToken } from '../../src/server/auth.js';
import { startServer, type RunningServer } from '../../src/server/listen.js';
import type { Store } from '../../src/store/store.js';
import { catalog, ensureBuilt } from '../e2e/support.js';
import { L, seedFixture } from '../server/support.js';
import { makePGliteStore } from '../support/stores.js';
import { snapshot } from './support.js';

/**
 * Authentication and roles over a real socket: anonymous is read-only, `editor` writes, only
 * `admin` deletes; bad tokens are 401 PGRST301 with WWW-Authenticate; a refused request writes
 * nothing; no secret means loopback only; the CLI exits 4 with a hint.
 */

const SECRET = 'security-suite-secret-that-is-long-enough';
const key = new TextEncoder().encode(SECRET);
const now = () => Math.floor(Date.now() / 1000);

describe('startServer without a JWT secret', () => {
  it.each(['0.0.0.0', '::', '192.168.1.10', '127.0.0.1.nip.io', 'localhost.example.com'])('refuses to listen on %s', async (host) => {
    await expect(startServer({ host, port: 0, store: {} as Store })).rejects.toThrow(/refusing to listen on .* without authentication/);
  });

  it('listens on a public address once a secret is given', async () => {
    const store = await makePGliteStore();
    const server = await startServer({ host: '0.0.0.0', port: 0, store, jwtSecret: SECRET });
    try {
      expect(server.url).toMatch(/^http:\/\/0\.0\.0\.0:\d+$/);
    } finally {
      await server.close();
      await store.close();
    }
  });
});

describe('roles over HTTP (catalog serve with a secret)', () => {
  let store: Store;
  let server: RunningServer;
  let tokens: Record<'editor' | 'admin' | 'reader' | 'norole', string>;

  const call = async (method: string, path: string, token?: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers: { ...(token ? { Authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, text, json: text ? JSON.parse(text) : undefined };
  };

  beforeAll(async () => {
    store = await makePGliteStore();
    await seedFixture(store);
    server = await startServer({ port: 0, store, jwtSecret: SECRET });
    tokens = {
      editor: await mintToken(SECRET, 'editor', '1h'),
      admin: await mintToken(SECRET, 'admin', '1h'),
      reader: await mintToken(SECRET, 'reader', '1h'),
      norole: await new SignJWT({ sub: 'someone' }).setProtectedHeader({ alg: 'HS256' }).sign(key),
    };
  });
  afterAll(async () => {
    await server?.close();
    await store?.close();
  });

  it('lets anyone read (GET, HEAD, OPTIONS, the root)', async () => {
    expect((await call('GET', '/labels?select=name&order=name')).json).toEqual([{ name: 'Blue Note' }, { name: 'Impulse, Records' }, { name: 'Verve' }]);
    expect((await call('HEAD', '/labels')).status).toBe(200);
    expect((await call('OPTIONS', '/labels')).status).toBe(200);
    expect((await call('GET', '/')).status).toBe(200);
  });

  it('refuses every kind of write without a token or with a token lacking a role: 401 42501 + WWW-Authenticate, nothing written', async () => {
    const before = await snapshot(store);
    const writes: Array<[string, string, unknown?, Record<string, string>?]> = [
      ['POST', '/labels', { name: 'anon' }],
      ['POST', '/labels?on_conflict=id', [{ id: L[0], name: 'anon' }], { Prefer: 'resolution=merge-duplicates' }],
      ['PATCH', `/labels?id=eq.${L[0]}`, { name: 'anon' }],
      ['PUT', `/labels?id=eq.${L[0]}`, { id: L[0], name: 'anon' }],
      ['DELETE', `/labels?id=eq.${L[2]}`],
    ];
    for (const token of [undefined, tokens.norole]) {
      for (const [method, path, body, headers] of writes) {
        const r = await call(method, path, token, body, headers);
        expect([method, r.status, r.json]).toEqual([method, 401, { code: '42501', details: null, hint: null, message: 'permission denied for table labels' }]);
        expect(r.headers.get('www-authenticate')).toBe('Bearer');
      }
    }
    expect(await snapshot(store)).toEqual(before);
  });

  it('lets an editor insert, update and upsert but not delete (403 42501, no WWW-Authenticate, row kept); a reader may not write (403)', async () => {
    const added = await call('POST', '/labels?select=id,name', tokens.editor, { name: 'Edited In' }, { Prefer: 'return=representation' });
    expect(added.status).toBe(201);
    const id = added.json[0].id as string;
    expect((await call('PATCH', `/labels?id=eq.${id}`, tokens.editor, { name: 'Edited Twice' })).status).toBe(204);
    expect([200, 201]).toContain((await call('POST', '/labels?on_conflict=id', tokens.editor, [{ id, name: 'Upserted' }], { Prefer: 'resolution=merge-duplicates' })).status);
    const denied = await call('DELETE', `/labels?id=eq.${id}`, tokens.editor);
    expect([denied.status, denied.json.code, denied.headers.get('www-authenticate')]).toEqual([403, '42501', null]);
    expect((await call('POST', '/labels', tokens.reader, { name: 'reader' })).status).toBe(403);
    expect((await call('GET', `/labels?id=eq.${id}&select=name`)).json).toEqual([{ name: 'Upserted' }]);

    const removed = await call('DELETE', `/labels?id=eq.${id}`, tokens.admin);
    expect(removed.status).toBe(204);
    expect((await call('GET', `/labels?id=eq.${id}`)).json).toEqual([]);
  });

  it('answers expired, not-yet-valid, malformed, wrongly signed, alg=none and tampered tokens with 401 PGRST301 and WWW-Authenticate, even for reads', async () => {
    const expired = await new SignJWT({ role: 'admin' }).setProtectedHeader({ alg: 'HS256' }).setExpirationTime(now() - 3600).sign(key);
    const future = await new SignJWT({ role: 'admin' }).setProtectedHeader({ alg: 'HS256' }).setNotBefore(now() + 3600).sign(key);
    const wrongKey = await mintToken('a-different-secret-that-is-long-enough', 'admin');
    const none = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from('{"role":"admin"}').toString('base64url')}.`;
    const [h, , s] = tokens.editor.split('.');
    const tampered = `${h}.${Buffer.from('{"role":"admin"}').toString('base64url')}.${s}`;
    const cases: Array<[string, string, RegExp]> = [
      ['expired', expired, /^JWT expired$/],
      ['nbf in the future', future, /^JWTClaimsError/],
      ['two parts', 'abc.def', /CompactDecodeError Invalid number of parts/],
      ['garbage', 'x.y.z', /^JWSError/],
      ['wrong key', wrongKey, /^JWSError JWSInvalidSignature$/],
      ['alg none', none, /^JWSError/],
      ['tampered claims', tampered, /^JWSError JWSInvalidSignature$/],
    ];
    for (const [what, token, message] of cases) {
      for (const method of ['GET', 'DELETE']) {
        const r = await call(method, '/labels', token);
        expect([what, method, r.status, r.json.code]).toEqual([what, method, 401, 'PGRST301']);
        expect(r.json.message).toMatch(message);
        expect(r.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token", error_description="/);
      }
    }
    expect((await call('GET', '/labels?select=id')).json).toHaveLength(3);
  });

  it('accepts a token expired less than 30 s ago (the clock-skew leeway PostgREST allows)', async () => {
    const justExpired = await new SignJWT({ role: 'editor' }).setProtectedHeader({ alg: 'HS256' }).setExpirationTime(now() - 5).sign(key);
    expect((await call('PATCH', `/labels?id=eq.${L[2]}`, justExpired, { name: 'Impulse, Records' })).status).toBe(204);
  });
});

describe('the CLI against a secured service', () => {
  let store: Store;
  let server: RunningServer;

  beforeAll(async () => {
    ensureBuilt();
    store = await makePGliteStore();
    await seedFixture(store);
    server = await startServer({ port: 0, store, jwtSecret: SECRET });
  });
  afterAll(async () => {
    await server?.close();
    await store?.close();
  });

  it('exits 4 with a hint for a 403 (editor removing) and for a rejected token (401)', async () => {
    const editor = await mintToken(SECRET, 'editor', '1h');
    const forbidden = await catalog(['--url', server.url, '--token', editor, 'labels', 'remove', L[2], '--yes']);
    expect(forbidden.code).toBe(4);
    expect(forbidden.stderr).toMatch(/permission denied for table labels \(42501, HTTP 403\)[\s\S]*hint: the token is valid but its role may not do this/);
    const expired = await new SignJWT({ role: 'admin' }).setProtectedHeader({ alg: 'HS256' }).setExpirationTime(now() - 3600).sign(key);
    const rejected = await catalog(['--url', server.url, '--token', expired, 'labels', 'list']);
    expect(rejected.code).toBe(4);
    expect(rejected.stderr).toMatch(/JWT expired \(PGRST301, HTTP 401\)[\s\S]*hint: the service rejected the token/);
    expect((await snapshot(store)).counts.labels).toBe(3);
  });
});
