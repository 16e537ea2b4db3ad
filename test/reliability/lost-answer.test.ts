import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalog, ensureBuilt, startServe, type Serve } from '../e2e/support.js';
import { tempDir } from '../support/stores.js';
import { startAnswerLosingProxy } from './support.js';

/**
 * `catalog … add` whose answer is lost after the service stored the rows (a proxy resets the
 * connection when the answer starts): the client sends it again, and the rows are stored once,
 * because `add` sends ids of its own with `resolution=ignore-duplicates`. Before issue 24 a plain
 * insert was resent after a reset by a moving embedded holder, and stored twice.
 */
describe('an add whose answer is lost is stored once', () => {
  let serve: Serve;
  beforeAll(async () => {
    ensureBuilt();
    serve = await startServe(['--data', tempDir('lost-answer-')]);
  });
  afterAll(async () => {
    await serve?.stop();
  });

  for (const [what, args, names] of [
    ['one record', ['labels', 'add', 'name=Lost Once'], ['Lost Once']],
    ['three records', ['labels', 'add', '--json', '[{"name":"Lost A"},{"name":"Lost B"},{"name":"Lost C"}]'], ['Lost A', 'Lost B', 'Lost C']],
  ] as const) {
    it(`${what}: exit 0, each row once, the printed ids are the stored ones, in the order given`, async () => {
      const port = Number(new URL(serve.url).port);
      const proxy = await startAnswerLosingProxy(port, 1);
      try {
        const r = await catalog(['--url', proxy.url, ...args, '-o', 'json']);
        expect(r.code, r.stderr).toBe(0);
        expect(proxy.lost()).toBe(1);
        const printed = [JSON.parse(r.stdout)].flat() as Array<{ id: string; name: string }>;
        expect(printed.map((p) => p.name)).toEqual(names);
        const stored = (await (await fetch(`${serve.url}/labels?select=id,name&name=in.(${names.map((n) => `"${n}"`).join(',')})&order=id`)).json()) as Array<{ id: string; name: string }>;
        expect(stored).toEqual(printed.map(({ id, name }) => ({ id, name })));
      } finally {
        await proxy.close();
      }
    });
  }

  it('a record that brings its own id is not sent again after a lost answer: the command fails, the row is stored once', async () => {
    const port = Number(new URL(serve.url).port);
    const proxy = await startAnswerLosingProxy(port, 1);
    try {
      const r = await catalog(['--url', proxy.url, 'labels', 'add', 'id=5a5a5a5a-0000-4000-8000-000000000001', 'name=Own Id']);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/the connection to \S+ was lost before the answer \(ECONNRESET.*\): POST \/labels may or may not have been applied/);
      const stored = (await (await fetch(`${serve.url}/labels?select=name&name=eq.Own%20Id`)).json()) as unknown[];
      expect(stored).toEqual([{ name: 'Own Id' }]);
    } finally {
      await proxy.close();
    }
  });
});
