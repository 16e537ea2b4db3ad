import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/stores.js';
import { catalog, type Serve, serveBackends, startServe } from './support.js';

/**
 * Issue 35: the match is decided where the write happens. Three copies of the same keyless import
 * at once leave each key once (they left every row three times, exit 0 for all), and a re-run is
 * not locked out by an ambiguity it made itself.
 */

const count = async (url: string, collection: string, where: string) => {
  const res = await fetch(`${url}/${collection}?${where}&select=id`, { method: 'HEAD', headers: { Prefer: 'count=exact' } });
  return Number(res.headers.get('content-range')?.split('/')[1]);
};

function tracksFile(prefix: string, n: number): string {
  const dir = tempDir('concurrent-');
  const path = join(dir, 'tracks.csv');
  writeFileSync(path, `isrc_code,track_title\n${Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(5, '0')},Concurrent ${i}`).join('\n')}\n`);
  return path;
}

/** Each copy writes its own rejects and checkpoint (they would otherwise share the input's). */
const own = (path: string, i: number) => ['--rejects', `${path}.${i}.rejects.csv`, '--checkpoint', `${path}.${i}.checkpoint.json`];

for (const backend of serveBackends('concurrent')) {
  describe.skipIf(backend.skip)(`three concurrent imports of one keyless file (catalog serve, ${backend.name})`, () => {
    let serve: Serve;
    beforeAll(async () => {
      serve = await startServe(backend.args);
    });
    afterAll(async () => {
      await serve?.stop();
      await backend.cleanup();
    });

    it('store each ISRC once, and the same import again changes nothing', async () => {
      const input = tracksFile('QZCNC26', 3000);
      const runs = await Promise.all([0, 1, 2].map((i) => catalog(['--url', serve.url, 'tracks', 'import', input, '--batch-size', '500', ...own(input, i)])));
      for (const r of runs) expect(r.code, r.stderr).toBe(0);
      expect(await count(serve.url, 'tracks', 'isrc_code=like.QZCNC26*')).toBe(3000);
      const again = await catalog(['--url', serve.url, 'tracks', 'import', input, ...own(input, 3)]);
      expect(again.code, again.stderr).toBe(0);
      expect(again.stderr).toMatch(/nothing changed/);
    });
  });
}

describe('three concurrent imports of one keyless labels file on the embedded store', () => {
  it('store each name once', async () => {
    const data = join(tempDir('concurrent-embedded-'), 'data');
    const env = { CATALOG_DATA: data, CATALOG_URL: '', CATALOG_KEEP_WARM: '2' };
    const dir = tempDir('concurrent-labels-');
    const input = join(dir, 'labels.csv');
    writeFileSync(input, `name\n${Array.from({ length: 2000 }, (_, i) => `Concurrent Label ${i}`).join('\n')}\n`);
    const runs = await Promise.all([0, 1, 2].map((i) => catalog(['labels', 'import', input, '--batch-size', '400', ...own(input, i)], { env })));
    for (const r of runs) expect(r.code, r.stderr).toBe(0);
    const listed = await catalog(['labels', 'count', '--where', 'name=like.Concurrent Label*'], { env });
    expect(listed.stdout.trim()).toBe('2000');
  });
});
