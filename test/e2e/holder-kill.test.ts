import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../support/stores.js';
import { catalog, ensureBuilt, startServe, type Result } from './support.js';

ensureBuilt();

/** The pid recorded in the embedded catalog's lock, or null when nobody holds it. */
function holderPid(data: string): number | null {
  const lock = join(data, 'catalog-serve.json');
  try {
    return existsSync(lock) ? ((JSON.parse(readFileSync(lock, 'utf8')) as { pid?: number }).pid ?? null) : null;
  } catch {
    return null; // being written at this moment
  }
}

/**
 * The embedded catalog's holder killed with SIGKILL while `labels add` commands talk to it, four
 * times: first a `catalog serve`, then whichever command holds the catalog at that moment (it is
 * killed with its own request in any state: before, during or after its commit). Every command
 * that exited 0 has its row stored, exactly once; no row is stored twice by anyone.
 */
describe('kill -9 of the embedded holder while commands write', () => {
  it('every acknowledged add is kept, none is doubled', async () => {
    const data = tempDir('holder-kill-');
    const env = { CATALOG_DATA: data, CATALOG_KEEP_WARM: '0' };
    const serve = await startServe(['--data', data]);
    const runs: Array<{ name: string; run: Promise<Result> }> = [];
    const killed: number[] = [];
    for (let wave = 0; wave < 4; wave++) {
      const names = Array.from({ length: 6 }, (_, i) => `Kill ${wave}-${i}`);
      const started = names.map((name) => ({ name, run: catalog(['labels', 'add', `name=${name}`, '-o', 'json'], { env }) }));
      runs.push(...started);
      // once one of them is acknowledged the others are under way: kill whoever holds the catalog now
      await Promise.race(started.map((s) => s.run));
      const pid = wave === 0 ? serve.proc.pid! : holderPid(data);
      if (pid !== null) {
        try {
          process.kill(pid, 'SIGKILL');
          killed.push(pid);
        } catch {
          // it had just finished and let the catalog go
        }
      }
      await Promise.all(started.map((s) => s.run));
    }
    await serve.stop('SIGKILL');
    const results = await Promise.all(runs.map(async (r) => ({ name: r.name, ...(await r.run) })));
    const listed = await catalog(['labels', 'list', '--all', '-o', 'json'], { env });
    expect(listed.code, listed.stderr).toBe(0);
    const stored = JSON.parse(listed.stdout) as Array<{ id: string; name: string }>;
    const acknowledged = results.filter((r) => r.code === 0);
    for (const r of acknowledged) {
      const printed = JSON.parse(r.stdout) as { id: string; name: string };
      expect(printed.name).toBe(r.name);
      expect(stored.filter((s) => s.name === r.name).map((s) => s.id)).toEqual([printed.id]);
    }
    // nothing doubled, and nothing that nobody asked for
    expect(new Set(stored.map((s) => s.name)).size).toBe(stored.length);
    for (const s of stored) expect(runs.map((r) => r.name)).toContain(s.name);
    expect(killed.length).toBeGreaterThanOrEqual(1);
    expect(acknowledged.length).toBeGreaterThan(0);
    for (const r of results) expect(r.stderr).not.toMatch(/Aborted|RuntimeError/);
    console.info(`[holder-kill] ${killed.length} holders killed; ${acknowledged.length} of ${results.length} adds acknowledged, ${stored.length} rows stored`);
  });
});
