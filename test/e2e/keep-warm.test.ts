import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../support/stores.js';
import { catalog, ensureBuilt, startServe } from './support.js';
import { PATIENCE_MS } from '../support/patience.js';

ensureBuilt();

interface Lock {
  pid: number;
  url: string | null;
  background?: boolean;
}

const lockOf = (data: string): Lock | null => {
  const path = join(data, 'catalog-serve.json');
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as Lock) : null;
};

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function until(what: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (what()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return what();
}

/** Stops a background holder a test left (it would stop by itself when idle). */
function stop(data: string): void {
  const lock = lockOf(data);
  if (lock && alive(lock.pid)) process.kill(lock.pid, 'SIGTERM');
}

describe('a background holder keeps the embedded catalog warm (issue 15)', () => {
  it('the first command starts it, later commands talk to it, and it stops by itself when idle', async () => {
    const data = join(tempDir('warm-'), 'catalog');
    const env = { CATALOG_DATA: data, CATALOG_KEEP_WARM: '3' };
    try {
      const first = await catalog(['labels', 'add', 'name=Warm', '-o', 'json'], { env });
      expect(first.code, first.stderr).toBe(0);
      const lock = lockOf(data)!;
      expect(lock).toMatchObject({ background: true, url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/) });
      expect(alive(lock.pid)).toBe(true);
      // a later command finds the same holder and the row the first one added
      const later = await catalog(['labels', 'list', '-o', 'json'], { env });
      expect(later.code, later.stderr).toBe(0);
      expect((JSON.parse(later.stdout) as Array<{ name: string }>).map((r) => r.name)).toEqual(['Warm']);
      expect(lockOf(data)?.pid).toBe(lock.pid);
      expect(readFileSync(join(data, 'catalog-holder.log'), 'utf8')).toMatch(/Serving the catalog at/);
      // `catalog schema` does not report the holder's temporary port as the host
      const schema = await catalog(['schema', '-o', 'json'], { env });
      expect(JSON.parse(schema.stdout).host).toBe('127.0.0.1:3000');
      // idle for its 3 s: it stops, removes its lock, and says why in its log
      expect(await until(() => !alive(lock.pid), PATIENCE_MS)).toBe(true);
      expect(lockOf(data)).toBeNull();
      expect(readFileSync(join(data, 'catalog-holder.log'), 'utf8')).toMatch(/no request for 3 s: stopping/);
      // the next command starts a new one, on the same data
      const again = await catalog(['labels', 'list', '-o', 'json'], { env });
      expect((JSON.parse(again.stdout) as Array<{ name: string }>).map((r) => r.name)).toEqual(['Warm']);
      expect(lockOf(data)?.pid).not.toBe(lock.pid);
    } finally {
      stop(data);
    }
  });

  it('30 parallel commands on a fresh directory start one holder between them and keep every row they report', async () => {
    const data = join(tempDir('warm-30-'), 'catalog');
    const env = { CATALOG_DATA: data, CATALOG_KEEP_WARM: '5' };
    try {
      const runs = await Promise.all(Array.from({ length: 30 }, (_, i) => catalog(['labels', 'add', `name=Parallel ${i}`, '-o', 'json'], { env })));
      for (const r of runs) expect(r.stderr).not.toMatch(/Aborted|RuntimeError|already served/);
      expect(runs.map((r) => r.code)).toEqual(runs.map(() => 0));
      const printed = runs.map((r) => (JSON.parse(r.stdout) as { id: string }).id);
      const listed = await catalog(['labels', 'list', '--all', '-o', 'json'], { env });
      const ids = (JSON.parse(listed.stdout) as Array<{ id: string }>).map((r) => r.id);
      expect(new Set(ids)).toEqual(new Set(printed));
      expect(lockOf(data)?.background).toBe(true);
    } finally {
      stop(data);
    }
  });

  it('`catalog serve` on a directory a background holder keeps takes it over (the holder stops); a foreground serve is not', async () => {
    const data = join(tempDir('warm-serve-'), 'catalog');
    const env = { CATALOG_DATA: data, CATALOG_KEEP_WARM: '60' };
    try {
      expect((await catalog(['labels', 'add', 'name=Before serve'], { env })).code).toBe(0);
      const background = lockOf(data)!;
      expect(background.background).toBe(true);
      const serve = await startServe(['--data', data]);
      try {
        expect(await until(() => !alive(background.pid), PATIENCE_MS)).toBe(true);
        expect(lockOf(data)?.pid).toBe(serve.proc.pid);
        expect(lockOf(data)?.background).not.toBe(true);
        const listed = await catalog(['--url', serve.url, 'labels', 'list', '-o', 'json']);
        expect((JSON.parse(listed.stdout) as Array<{ name: string }>).map((r) => r.name)).toEqual(['Before serve']);
        // a serve someone runs is never stopped that way: a second one still exits 2
        const second = await catalog(['serve', '--port', '0', '--data', data]);
        expect(second.code).toBe(2);
        expect(second.stderr).toMatch(/held by process \d+/);
      } finally {
        await serve.stop();
      }
    } finally {
      stop(data);
    }
  });

  it('CATALOG_KEEP_WARM=0 leaves no process behind', async () => {
    const data = join(tempDir('warm-off-'), 'catalog');
    const r = await catalog(['labels', 'list'], { env: { CATALOG_DATA: data, CATALOG_KEEP_WARM: '0' } });
    expect(r.code, r.stderr).toBe(0);
    expect(lockOf(data)).toBeNull();
    expect(existsSync(join(data, 'catalog-holder.log'))).toBe(false);
  });

  it('a CATALOG_KEEP_WARM that is not a number of seconds is refused (exit 2), not taken as 0', async () => {
    const data = join(tempDir('warm-bad-'), 'catalog');
    const r = await catalog(['labels', 'list'], { env: { CATALOG_DATA: data, CATALOG_KEEP_WARM: 'five' } });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/CATALOG_KEEP_WARM needs a number of seconds \(0: no background holder\), not 'five'/);
    expect(lockOf(data)).toBeNull();
  });
});
