import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { startServer } from '../../src/server/listen.js';
import { useTestService } from '../cli/support.js';

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
