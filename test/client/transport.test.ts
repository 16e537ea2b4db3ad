import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../src/client/errors.js';
import { retrying } from '../../src/client/retry.js';
import { faultCode, faultOf, transportClient } from '../../src/client/transport.js';

describe('the one retry loop', () => {
  it('tries again while the policy says so, then returns or throws the last outcome', async () => {
    const waits: number[] = [];
    let n = 0;
    const value = await retrying(async () => ++n, { retries: 5, sleep: async (ms) => void waits.push(ms), again: (o) => ('value' in o && o.value < 3 ? 10 : null) });
    expect(value).toBe(3);
    expect(waits).toEqual([10, 10]);
    let calls = 0;
    const err = await retrying(async () => {
      calls++;
      throw new Error(`boom ${calls}`);
    }, { retries: 2, sleep: async () => {}, again: () => 1 }).catch((e: Error) => e.message);
    expect(err).toBe('boom 3');
  });
});

describe('one fault type', () => {
  it('faultOf reads PostgREST errors, and names a non-JSON answer as not the service', () => {
    const pg = faultOf({ status: 409, headers: { 'content-type': 'application/json' }, body: '{"code":"23505","message":"dup","details":"Key (id)","hint":null}' });
    expect(pg).toBeInstanceOf(ServiceError);
    expect(pg).toMatchObject({ status: 409, code: '23505', message: 'dup', details: 'Key (id)' });
    const html = faultOf({ status: 404, headers: { 'content-type': 'text/html; charset=utf-8' }, body: '<html>nope</html>', request: 'GET http://x.test/labels' });
    expect(html.message).toBe('http://x.test/labels did not answer like a PostgREST service (HTTP 404, content type text/html): check --url / CATALOG_URL');
    expect(faultCode(html)).toBe('HTTP404');
  });

  it('a Transport as a client: request throws the fault, send returns every answer', async () => {
    const client = transportClient({ send: async (req) => ({ status: req.path === '/ok' ? 200 : 401, headers: { 'content-type': 'application/json' }, body: req.path === '/ok' ? '[]' : '{"code":"PGRST301","message":"JWT expired"}' }) });
    expect((await client.request({ method: 'GET', path: '/ok' })).body).toBe('[]');
    expect((await client.send({ method: 'GET', path: '/no' })).status).toBe(401);
    await expect(client.request({ method: 'GET', path: '/no' })).rejects.toMatchObject({ status: 401, code: 'PGRST301', request: 'GET http://catalog.local/no' });
  });
});
