import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { ensureBuilt, startServe, type Serve } from './support.js';
import { tempDir } from '../support/stores.js';

ensureBuilt();

const MB = 1024 * 1024;

/**
 * Issue 15 item 9: PGlite runs one statement at a time, so one large write held every other
 * request (a 60 MB POST: 24 s). The embedded catalog's default body limit is 8 MiB, which bounds
 * that wait; `--max-body` still sets any limit. A 9 MiB body that is not valid JSON tells the two
 * apart cheaply: over the limit it is 413 before it is read, under it the parser answers 400.
 */
describe('catalog serve --data: the default body limit is 8 MiB', () => {
  let serve: Serve | undefined;
  afterEach(async () => {
    await serve?.stop();
    serve = undefined;
  });

  /**
   * POSTs 9 MiB with its length declared. With `whole` false only the headers go (the service
   * answers a declared length over its limit before reading anything, and then closes, so writing
   * on would race that close with EPIPE); with `whole` the body is sent in full.
   */
  const post = (url: string, whole: boolean): Promise<{ status: number; json: () => { code?: string } }> =>
    new Promise((resolve, reject) => {
      const body = Buffer.alloc(9 * MB, '[');
      const req = request(`${url}/labels`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'Content-Length': String(body.length) } });
      let answered = false;
      req.on('response', (res) => {
        answered = true;
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => {
          resolve({ status: res.statusCode ?? 0, json: () => JSON.parse(text) });
          req.destroy();
        });
      });
      req.on('error', (err) => (answered ? undefined : reject(err)));
      if (whole) req.end(body);
      else req.flushHeaders();
    });

  it('answers 413 PGRST413 to a 9 MiB body by default, and nothing is written', async () => {
    serve = await startServe(['--data', tempDir('body-limit-')]);
    const r = await post(serve.url, false);
    expect(r.status).toBe(413);
    expect(r.json()).toMatchObject({ code: 'PGRST413' });
    const labels = await (await fetch(`${serve.url}/labels?select=id`)).json();
    expect(labels).toEqual([]);
  });

  it('takes the same body past the limit with --max-body 16 MiB (the parser refuses it instead)', async () => {
    serve = await startServe(['--data', tempDir('body-limit-'), '--max-body', String(16 * MB)]);
    const r = await post(serve.url, true);
    expect(r.status).toBe(400);
    expect(r.json().code).not.toBe('PGRST413');
  });
});
