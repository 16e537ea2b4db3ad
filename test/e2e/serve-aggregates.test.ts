import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/stores.js';
import { catalog, ensureBuilt, type Serve, startServe } from './support.js';

// `catalog serve --aggregates on|off`: PostgREST's db-aggregates-enabled. On by default here
// (docs/service.md says why); off, every aggregate is PostgREST's 400 PGRST123.
describe('catalog serve --aggregates', () => {
  let off: Serve;
  beforeAll(async () => {
    ensureBuilt();
    off = await startServe(['--data', tempDir('aggregates-off-'), '--aggregates', 'off']);
  });
  afterAll(async () => {
    await off?.stop();
  });

  it('off: an aggregate is refused as PostgREST refuses it, and count --by says so; plain reads and counts still work', async () => {
    const res = await fetch(`${off.url}/labels?select=count()`);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ code: 'PGRST123', message: 'Use of aggregate functions is not allowed', details: null, hint: null });
    const byGenre = await catalog(['--url', off.url, 'tracks', 'count', '--by', 'genre']);
    expect(byGenre.code).toBe(2);
    expect(byGenre.stderr).toContain('this service does not count per value: Use of aggregate functions is not allowed');
    expect(byGenre.stderr).toContain('--aggregates off');
    const plain = await catalog(['--url', off.url, 'labels', 'count']);
    expect([plain.code, plain.stdout.trim()]).toEqual([0, '0']);
  });

  it('a value other than on or off exits 2 naming the flag', async () => {
    const r = await catalog(['serve', '--port', '0', '--data', tempDir('aggregates-bad-'), '--aggregates', 'maybe']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--aggregates must be on or off, not "maybe"');
  });
});
