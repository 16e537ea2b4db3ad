import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintToken } from '../../src/server/auth.js';
import { ensureBuilt, startServe, type Serve } from '../e2e/support.js';
import { tempDir } from '../support/stores.js';

ensureBuilt();

const SECRET = 'unread-body-suite-secret-long-enough-123';
const MB = 1024 * 1024;

/** The process's resident set now and its peak so far, in bytes (/proc). */
function memory(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)![1]) * 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

/**
 * POSTs `size` bytes of one repeated 1 MiB piece (the client holds 1 MiB, not the body), streamed
 * chunked; resolves with the status and body of the answer, which may come before the body is sent.
 */
function post(url: string, path: string, size: number, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  const piece = Buffer.alloc(MB, 'x');
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers } });
    let sent = 0;
    let answered = false;
    req.on('response', (res) => {
      answered = true;
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, body });
        req.destroy();
      });
    });
    req.on('error', (err) => (answered ? undefined : reject(err)));
    const pump = () => {
      while (!answered && sent < size) {
        sent += MB;
        if (!req.write(piece)) return void req.once('drain', pump);
      }
      if (!answered) req.end();
    };
    pump();
  });
}

describe('with a JWT secret, a write the caller may not make is refused before its body is read', () => {
  let serve: Serve;
  beforeAll(async () => {
    serve = await startServe(['--data', tempDir('unread-'), '--jwt-secret', SECRET]);
  });
  afterAll(async () => {
    await serve?.stop();
  });

  it('8 parallel anonymous 60 MB POSTs each get 401 42501, and the service grows by far less than their bodies', async () => {
    const pid = serve.proc.pid!;
    for (let i = 0; i < 3; i++) await fetch(`${serve.url}/labels?limit=1`);
    const idle = memory(pid);
    const answers = await Promise.all(Array.from({ length: 8 }, () => post(serve.url, '/tracks', 60 * MB)));
    for (const a of answers) {
      expect(a.status).toBe(401);
      expect(JSON.parse(a.body)).toMatchObject({ code: '42501', message: 'permission denied for table tracks' });
    }
    const after = memory(pid);
    // The bodies add up to 480 MB; buffering them would take the peak up by about that much.
    process.stderr.write(`service RSS idle ${(idle.rss / MB).toFixed(0)} MB, peak under the load ${(after.peak / MB).toFixed(0)} MB\n`);
    expect(after.peak - idle.rss).toBeLessThan(100 * MB);
    const ok = await fetch(`${serve.url}/labels?limit=1`);
    expect(ok.status).toBe(200);
  });

  it('a reader token is refused with 403 the same way; an editor is still heard out and writes', async () => {
    const reader = await mintToken(SECRET, 'reader');
    const refused = await post(serve.url, '/tracks', 20 * MB, { Authorization: `Bearer ${reader}` });
    expect(refused.status).toBe(403);
    const editor = await mintToken(SECRET, 'editor');
    const written = await fetch(`${serve.url}/labels`, { method: 'POST', headers: { Authorization: `Bearer ${editor}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ name: 'Heard out' }) });
    expect(written.status).toBe(201);
  });
});
