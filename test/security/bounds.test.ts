import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COPY_CSV } from '../../src/grammar/media.js';
import { MAX_JSON_DEPTH } from '../../src/schema/json-depth.js';
import { ensureBuilt, serveBackends, startServe, type Serve } from '../e2e/support.js';
import { httpExchange, rawExchange } from './support.js';

/**
 * Bounds on what a request body may hold, on `catalog serve` (the real binary) over each store:
 * JSON nested past MAX_JSON_DEPTH in a JSON body, a CSV body's cell or a COPY body's jsonb cell is
 * a 400 before the database's recursive jsonb parser sees it (it answered 54001 on PostgreSQL, and
 * on PGlite "bad buffer ID" or a server spinning past 1.4 GB that lost an acknowledged row);
 * bytes that are not UTF-8 are a 400, never stored as U+FFFD; a Host no URL can be made of is a 400.
 */

const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
const JSON_TYPE = { 'Content-Type': 'application/json', Prefer: 'return=minimal' };

for (const backend of serveBackends('bounds')) {
  describe.skipIf(backend.skip)(`request body bounds (catalog serve over ${backend.name}${backend.skip ? ', SKIPPED: set CATALOG_TEST_DATABASE_URL' : ''})`, () => {
    const args = backend.args;
    let serve: Serve;
    const post = (body: string | Buffer, headers: Record<string, string> = JSON_TYPE) =>
      httpExchange(serve.url, { method: 'POST', path: '/artists', headers, body });
    const names = async () => {
      const res = await httpExchange(serve.url, { path: '/artists?select=stage_name&order=stage_name' });
      expect(res.status).toBe(200);
      return (JSON.parse(res.body) as Array<{ stage_name: string }>).map((r) => r.stage_name);
    };
    // Each test compares the names with those it found at its start (other tests store rows of their
    // own), plus the ones it stores itself, in the service's order (these names sort alike everywhere).
    const plus = (before: string[], ...added: string[]) => [...before, ...added].sort();

    beforeAll(async () => {
      ensureBuilt();
      serve = await startServe(args);
    });
    afterAll(async () => {
      await serve?.stop('SIGKILL');
      await backend.cleanup();
    });

    it(`takes a jsonb value nested ${MAX_JSON_DEPTH} deep and answers 400 PGRST102 to one level more, and to 100,000 levels`, async () => {
      const before = await names();
      expect((await post(`[{"stage_name":"at limit","metadata":${nested(MAX_JSON_DEPTH)}}]`)).status).toBe(201);
      for (const depth of [MAX_JSON_DEPTH + 1, 100_000]) {
        const res = await post(`[{"stage_name":"too deep ${depth}","metadata":${nested(depth)}}]`);
        expect(res.status).toBe(400);
        expect(JSON.parse(res.body)).toEqual({
          code: 'PGRST102',
          message: `JSON nested too deeply: a value may nest at most ${MAX_JSON_DEPTH} levels of arrays and objects`,
          details: `A value in the body nests deeper than ${MAX_JSON_DEPTH} levels.`,
          hint: null,
        });
      }
      expect(await names()).toEqual(plus(before, 'at limit'));
    });

    it('answers 400 to a CSV body whose jsonb cell is nested too deep, naming the row', async () => {
      const before = await names();
      const res = await post(`stage_name,metadata\nfine,[1]\ncsv deep,"${nested(5_000)}"\n`, { 'Content-Type': 'text/csv' });
      expect(res.status).toBe(400);
      expect(JSON.parse(res.body)).toMatchObject({ code: 'PGRST102', details: `The metadata value of data row 2 nests deeper than ${MAX_JSON_DEPTH} levels.` });
      expect(await names()).toEqual(before);
    });

    it('answers 400 to a ~20 KB COPY body whose jsonb cell is nested 10,000 deep (naming its line), and keeps every acknowledged row', async () => {
      const before = await names();
      const body = `stage_name,biography,metadata\ncopy fine,"[[[[ text is not counted ]]]]","{""a"":""[[[[""}"\ncopy deep,x,"${nested(10_000)}"\n`;
      expect(Buffer.byteLength(body)).toBeGreaterThan(20_000);
      const res = await post(body, { 'Content-Type': COPY_CSV, Prefer: 'return=minimal' });
      expect(res.status).toBe(400);
      expect(JSON.parse(res.body)).toMatchObject({ code: 'PGRST102', details: `The metadata cell on line 3 nests deeper than ${MAX_JSON_DEPTH} levels.` });
      // the server is not wedged: the next COPY is taken, and survives kill -9 of the server
      const ok = await post(`stage_name,biography,metadata\ncopy ok,"[[[[","${nested(MAX_JSON_DEPTH).replace(/"/g, '""')}"\n`, { 'Content-Type': COPY_CSV, Prefer: 'return=minimal' });
      expect(ok.status).toBe(201);
      await serve.stop('SIGKILL');
      serve = await startServe(args);
      expect(await names()).toEqual(plus(before, 'copy ok'));
    });

    it('answers 400 to a JSON or CSV body that is not UTF-8 (nothing stored with U+FFFD), and 400 22021 to such a COPY body', async () => {
      const before = await names();
      const bad = (before: string, after: string) => Buffer.concat([Buffer.from(before), Buffer.from([0xff, 0xfe]), Buffer.from(after)]);
      const json = await post(bad('[{"stage_name":"bad ', '"}]'));
      expect(json.status).toBe(400);
      expect(JSON.parse(json.body)).toEqual({
        code: 'PGRST102',
        message: 'Empty or invalid json',
        details: 'The body is not valid UTF-8: invalid byte sequence at byte 20 (0xff).',
        hint: 'Send the body encoded as UTF-8.',
      });
      const csv = await post(bad('stage_name\nbad ', '\n'), { 'Content-Type': 'text/csv' });
      expect(csv.status).toBe(400);
      expect(JSON.parse(csv.body)).toMatchObject({ code: 'PGRST102', message: 'Empty or invalid csv' });
      const copy = await post(bad('stage_name\nbad ', '\n'), { 'Content-Type': COPY_CSV });
      expect(copy.status).toBe(400);
      expect(JSON.parse(copy.body)).toMatchObject({ code: '22021' });
      expect(await names()).toEqual(before);
    });

    it('answers 400 PGRST400, not 500, to a Host header or request target no URL can be made of, and keeps serving', async () => {
      const before = await names();
      for (const head of ['GET /artists HTTP/1.1\r\nHost: a b', 'GET /artists HTTP/1.1\r\nHost: [::1', 'GET http://[x/artists HTTP/1.1\r\nHost: localhost']) {
        const reply = await rawExchange(serve.url, `${head}\r\nConnection: close\r\n\r\n`);
        expect(reply.status, head).toBe(400);
        expect(JSON.parse(reply.body), head).toMatchObject({ code: 'PGRST400', message: 'Bad Request' });
      }
      expect(await names()).toEqual(before);
    });
  });
}
