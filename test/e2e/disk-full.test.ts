import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkFreeSpace, MIN_FREE_BYTES } from '../../src/store/pglite.js';
import { tempDir } from '../support/stores.js';
import { catalog, ensureBuilt } from './support.js';
import { eventually } from '../support/patience.js';

ensureBuilt();

/** Whether this run can mount a small tmpfs (root, and a kernel and sandbox that allow it). */
const canMount = (() => {
  if (process.getuid?.() !== 0) return false;
  const probe = tempDir('mount-probe-');
  const ok = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', probe]).status === 0;
  if (ok) spawnSync('umount', [probe]);
  return ok;
})();
if (!canMount) console.warn('[catalog] cannot mount a tmpfs (not root, or not allowed): the real disk-full import test is SKIPPED (the fault-injected one runs)');

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('a disk that fills up during an import (issue 24)', () => {
  it.skipIf(!canMount)('on a real 80 MB filesystem: the import stops with exit 1 and a clear message, the holder keeps answering and stops on SIGTERM, nothing committed is lost', async () => {
    const mountPoint = tempDir('disk-full-');
    expect(spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=80m,mode=0700', 'tmpfs', mountPoint]).status).toBe(0);
    const data = join(mountPoint, 'catalog');
    const env = { CATALOG_DATA: data, CATALOG_KEEP_WARM: '60' };
    let holder = 0;
    try {
      expect((await catalog(['labels', 'add', 'name=Before'], { env })).code).toBe(0);
      holder = (JSON.parse(readFileSync(join(data, 'catalog-serve.json'), 'utf8')) as { pid: number }).pid;
      // ~18 MB of names that do not compress: more than the ~8 MB the 80 MB disk has above the reserve
      const file = join(tempDir('disk-full-input-'), 'fat.csv');
      writeFileSync(file, `name\n${Array.from({ length: 6000 }, (_, i) => `Fat ${i} ${randomBytes(1500).toString('hex')}`).join('\n')}\n`);
      const r = await catalog(['labels', 'import', file], { env });
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toMatch(/could not write: the disk holding the catalog has \d+ MB free, less than the 64 MB the embedded catalog keeps free \(53100, HTTP 503\)/);
      expect(r.stderr).toContain('hint: Free some space on that disk');
      // the holder was not wedged: it still answers, from the same process and lock
      const counted = await catalog(['labels', 'count'], { env });
      expect(counted.code, counted.stderr).toBe(0);
      const rows = Number(counted.stdout.trim());
      expect(rows).toBeGreaterThan(1);
      expect(JSON.parse(readFileSync(join(data, 'catalog-serve.json'), 'utf8')).pid).toBe(holder);
      // it stops when asked (a wedged one ignored SIGTERM) and gives the lock up
      process.kill(holder, 'SIGTERM');
      await eventually(() => !alive(holder));
      expect(alive(holder)).toBe(false);
      // a disk filled to the last byte by something else: opening says why instead of failing blindly
      const filler = join(mountPoint, 'filler');
      const fd = openSync(filler, 'w');
      try {
        for (;;) writeSync(fd, Buffer.alloc(1 << 20));
      } catch (err) {
        expect((err as NodeJS.ErrnoException).code).toBe('ENOSPC');
      } finally {
        closeSync(fd);
      }
      const full = await catalog(['labels', 'count'], { env: { ...env, CATALOG_KEEP_WARM: '0' } });
      expect(full.code).toBe(1);
      expect(full.stderr).toMatch(/cannot open the embedded catalog in \S+: (the disk holding it is full \(no space left on device\)|could not open the catalog: the disk holding the catalog has 0 MB free)/);
      expect(existsSync(join(data, 'catalog-serve.json'))).toBe(false);
      rmSync(filler);
      // reopened by another process once there is room: every row the holder had committed is there
      const reopened = await catalog(['labels', 'count'], { env: { ...env, CATALOG_KEEP_WARM: '0' } });
      expect(reopened.code, reopened.stderr).toBe(0);
      expect(Number(reopened.stdout.trim())).toBe(rows);
      const before = await catalog(['labels', 'list', '--where', 'name=Before', '-o', 'json'], { env: { ...env, CATALOG_KEEP_WARM: '0' } });
      expect((JSON.parse(before.stdout) as Array<{ name: string }>).map((x) => x.name)).toEqual(['Before']);
    } finally {
      if (holder && alive(holder)) process.kill(holder, 'SIGKILL');
      spawnSync('umount', ['-l', mountPoint]);
    }
  });

  it('the check itself (fault injected: a reserve larger than any disk) refuses with 53100 before anything is written', () => {
    const dir = tempDir('reserve-');
    expect(() => checkFreeSpace(dir, Number.MAX_SAFE_INTEGER)).toThrow(expect.objectContaining({ code: '53100', message: expect.stringMatching(/^could not write: the disk holding the catalog has \d+ MB free/) }));
    expect(() => checkFreeSpace(dir, 0)).not.toThrow();
    expect(MIN_FREE_BYTES).toBe(64 * 1024 * 1024);
  });
});
