import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { CatalogClient } from '../../src/client/client.js';
import { ConnectionError, ServiceError } from '../../src/client/errors.js';

/**
 * The client against real loopback servers that fail on purpose: connections reset mid-request,
 * 502/503/504 with and without Retry-After. Idempotent requests (reads, upsert batches) are retried
 * with jittered backoff or the server's Retry-After; a plain insert is sent exactly once. Waiting
 * goes through the client's sleep seam so the delays can be read, not timed.
 */

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

/** A server whose n-th request (1-based) is answered by `plan(n)`: 'reset' destroys the connection. */
async function flaky(plan: (n: number, req: IncomingMessage) => 'reset' | [number, Record<string, string>?]): Promise<{ url: string; calls: () => number; bodies: string[] }> {
  let n = 0;
  const bodies: string[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      bodies.push(body);
      const step = plan(++n, req);
      if (step === 'reset') return void req.socket.resetAndDestroy();
      res.writeHead(step[0], { 'Content-Type': 'application/json', ...step[1] }).end(step[0] < 300 ? '[]' : '{"code":"PGRST000","message":"down"}');
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, calls: () => n, bodies };
}

function client(url: string, waits: number[], random: number[] = [0.5]) {
  let i = 0;
  return new CatalogClient({ baseUrl: url, retries: 3, sleep: async (ms) => void waits.push(ms), random: () => random[i++ % random.length], now: () => 0 });
}

describe('client retries against failing servers', () => {
  it('retries a read after connections are reset, with exponential backoff scaled by jitter', async () => {
    const srv = await flaky((n) => (n <= 2 ? 'reset' : [200]));
    const waits: number[] = [];
    const c = client(srv.url, waits, [0.1, 0.9]);
    expect((await c.request({ method: 'GET', path: '/labels' })).status).toBe(200);
    expect(srv.calls()).toBe(3);
    expect(waits).toEqual([Math.round(200 * 0.1), Math.round(400 * 0.9)]);
    await c.close();
  });

  it('retries reads on 502, 503 and 504, waiting as Retry-After says (seconds or an HTTP date)', async () => {
    const srv = await flaky((n) => (n === 1 ? [502] : n === 2 ? [503, { 'Retry-After': '3' }] : n === 3 ? [504, { 'Retry-After': new Date(7_000).toUTCString() }] : [200]));
    const waits: number[] = [];
    const c = client(srv.url, waits);
    expect((await c.request({ method: 'HEAD', path: '/labels' })).status).toBe(200);
    expect(srv.calls()).toBe(4);
    expect(waits).toEqual([100, 3000, 7000]);
    await c.close();
  });

  it('sends a plain insert exactly once, whether the connection is reset or the answer is 503', async () => {
    const reset = await flaky(() => 'reset');
    const waits: number[] = [];
    const c1 = client(reset.url, waits);
    await expect(c1.request({ method: 'POST', path: '/labels', body: '{"name":"once"}' })).rejects.toBeInstanceOf(ConnectionError);
    expect(reset.calls()).toBe(1);
    const unavailable = await flaky(() => [503, { 'Retry-After': '1' }]);
    const c2 = client(unavailable.url, waits);
    await expect(c2.request({ method: 'POST', path: '/labels', body: '{"name":"once"}' })).rejects.toMatchObject({ status: 503 });
    expect(unavailable.calls()).toBe(1);
    expect(waits).toEqual([]);
    await c1.close();
    await c2.close();
  });

  it('retries an upsert batch marked idempotent after a reset, sending the same body again', async () => {
    const srv = await flaky((n) => (n === 1 ? 'reset' : [201]));
    const c = client(srv.url, []);
    const body = '[{"id":"10000000-0000-4000-8000-000000000001","name":"x"}]';
    const res = await c.request({ method: 'POST', path: '/labels', query: 'on_conflict=id', headers: { Prefer: 'resolution=merge-duplicates' }, body, idempotent: true });
    expect(res.status).toBe(201);
    expect(srv.bodies).toEqual([body, body]);
    await c.close();
  });

  it('gives up after the configured retries with the last answer (ServiceError) or ConnectionError', async () => {
    const down = await flaky(() => [503]);
    const c = client(down.url, []);
    const err = await c.request({ method: 'GET', path: '/labels' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServiceError);
    expect(down.calls()).toBe(4);
    const gone = await flaky(() => 'reset');
    const c2 = client(gone.url, []);
    expect(await c2.request({ method: 'GET', path: '/labels' }).catch((e: unknown) => e)).toBeInstanceOf(ConnectionError);
    expect(gone.calls()).toBe(4);
    await c.close();
    await c2.close();
  });
});
