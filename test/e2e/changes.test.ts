import { spawnSync } from 'node:child_process';
import { parse as parseCsv } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalog, catalogInTerminal, ensureBuilt, serveBackends, startServe, type Serve } from './support.js';

// Issue 37 item 4: `catalog changes --since yesterday` lists what was added, changed and removed
// across the collections; removals are recorded by the service (migration 9) on both stores.

const hasScript = spawnSync('script', ['--version']).status === 0;
const LONG_AGO = '2020-01-01T00:00:00Z';

interface Change {
  collection: string;
  id: string;
  title: string | null;
  change: string;
  when: string;
}

for (const backend of serveBackends('changes')) {
  describe.skipIf(backend.skip)(`catalog changes (catalog serve over ${backend.name}${backend.skip ? ', SKIPPED: set CATALOG_TEST_DATABASE_URL' : ''})`, () => {
    let serve: Serve;
    const run = (...args: string[]) => catalog(['--url', serve.url, ...args]);
    const ids: Record<string, string> = {};
    const add = async (collection: string, ...pairs: string[]) => {
      const r = await run(collection, 'add', ...pairs, '-o', 'json');
      expect(r.code, r.stderr).toBe(0);
      return (JSON.parse(r.stdout) as { id: string }).id;
    };

    beforeAll(async () => {
      ensureBuilt();
      serve = await startServe(backend.args);
      // made long ago: what the test does to them today is a change and a removal, not an addition
      ids.old = await add('labels', 'name=Old Label', `created=${LONG_AGO}`, `updated=${LONG_AGO}`);
      ids.gone = await add('tracks', 'track_title=Gone Track', `created=${LONG_AGO}`, `updated=${LONG_AGO}`);
      ids.untouched = await add('genres', 'name=Untouched', `created=${LONG_AGO}`, `updated=${LONG_AGO}`);
      // today: an addition, an update, a removal
      ids.added = await add('artists', 'stage_name=👍🏽 New Artist');
      const updated = await run('labels', 'update', ids.old, 'name=Old Label Renamed');
      expect(updated.code, updated.stderr).toBe(0);
      const removed = await run('tracks', 'remove', ids.gone, '--yes');
      expect(removed.code, removed.stderr).toBe(0);
    });

    afterAll(async () => {
      await serve?.stop();
      await backend.cleanup();
    });

    it('--since yesterday shows the addition, the update and the removal, and nothing older', async () => {
      const r = await run('changes', '--since', 'yesterday', '-o', 'json');
      expect(r.code, r.stderr).toBe(0);
      const changes = JSON.parse(r.stdout) as Change[];
      const seen = changes.map((c) => [c.collection, c.id, c.title, c.change]);
      expect(seen).toContainEqual(['artists', ids.added, '👍🏽 New Artist', 'added']);
      expect(seen).toContainEqual(['labels', ids.old, 'Old Label Renamed', 'changed']);
      expect(seen).toContainEqual(['tracks', ids.gone, 'Gone Track', 'removed']);
      expect(changes.map((c) => c.id)).not.toContain(ids.untouched);
      expect(changes).toHaveLength(3);
      // the oldest first, each when a timestamp of today
      const when = changes.map((c) => Date.parse(c.when));
      expect(when).toEqual([...when].sort((a, b) => a - b));
      for (const t of when) expect(t).toBeGreaterThan(Date.now() - 86_400_000);
    });

    it('piped as CSV with a header; --collection narrows; --since 2019 sees the old records added', async () => {
      const csv = await run('changes', '--since', 'yesterday', '-o', 'csv', '--collection', 'tracks');
      expect(csv.code, csv.stderr).toBe(0);
      const rows = parseCsv(csv.stdout) as string[][];
      expect(rows[0]).toEqual(['collection', 'id', 'title', 'change', 'when']);
      expect(rows.slice(1).map((row) => [row[1], row[3]])).toEqual([[ids.gone, 'removed']]);
      const since2019 = JSON.parse((await run('changes', '--since', '2019-06-01', '-o', 'json')).stdout) as Change[];
      expect(since2019.find((c) => c.id === ids.untouched)?.change).toBe('added');
    });

    it('--limit keeps the oldest and says how many there are', async () => {
      const r = await run('changes', '--since', 'yesterday', '--limit', '2', '-o', 'json');
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout)).toHaveLength(2);
      expect(r.stderr).toContain('2 of 3 changes since yesterday');
    });

    it('refuses a moment it cannot read (exit 2), and writes to removals (403)', async () => {
      const bad = await run('changes', '--since', 'last-tuesday');
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(/--since: 'last-tuesday' is not a moment/);
      const res = await fetch(`${serve.url}/removals`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"collection":"tracks"}' });
      expect(res.status).toBe(403);
      expect(await res.json()).toMatchObject({ code: '42501', message: 'permission denied for table removals' });
    });

    it.skipIf(!hasScript)('on a terminal: a table with relative times', async () => {
      const r = await catalogInTerminal(['--url', serve.url, 'changes', '--since', 'yesterday'], { cols: 100, env: { NO_COLOR: '1' } });
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^collection\s+id\s+title\s+change\s+when$/m);
      expect(r.stdout).toMatch(/^tracks\s+\S+\s+Gone Track\s+removed\s+(just now|\d+ (seconds|minutes?) ago)$/m);
      expect(r.stdout).toContain('3 changes since yesterday');
    });
  });
}
