import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../support/stores.js';
import { BIN, ROOT, catalog, ensureBuilt, startServe } from './support.js';

ensureBuilt();

/** Runs `catalog serve --port 0` and resolves with its exit code or, once it serves, its URL. */
function serveOrExit(data: string): Promise<{ url?: string; code?: number; stderr: string; stop(): Promise<void> }> {
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--data', data], { cwd: ROOT, env: { ...process.env, CATALOG_URL: undefined }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    const exited = new Promise<void>((r) => proc.on('exit', () => r()));
    const stop = async () => {
      proc.kill('SIGTERM');
      await exited;
    };
    proc.stderr.on('data', (c) => {
      stderr += c;
      const m = /Serving the catalog at (http:\/\/\S+)/.exec(stderr);
      if (m) resolve({ url: m[1], stderr, stop });
    });
    proc.on('exit', (code) => resolve({ code: code ?? -1, stderr, stop }));
  });
}

describe('one process holds an embedded catalog at a time', () => {
  it('30 parallel `labels add` on a fresh directory: every command that exits 0 has its row kept, and only those', async () => {
    const env = { CATALOG_DATA: join(tempDir('lock-30-'), 'catalog') };
    const runs = await Promise.all(Array.from({ length: 30 }, (_, i) => catalog(['labels', 'add', `name=Parallel ${i}`, '-o', 'json'], { env })));
    const ok = runs.filter((r) => r.code === 0);
    for (const r of runs) expect(r.stderr).not.toMatch(/Aborted|RuntimeError|already served/);
    const printed = ok.map((r) => (JSON.parse(r.stdout) as { id: string }).id);
    const listed = await catalog(['labels', 'list', '--all', '-o', 'json'], { env });
    expect(listed.code, listed.stderr).toBe(0);
    const ids = (JSON.parse(listed.stdout) as Array<{ id: string }>).map((r) => r.id);
    expect(ids.length).toBe(ok.length);
    expect(new Set(ids)).toEqual(new Set(printed));
    // nobody was turned away: they talked to the holder or waited for it
    expect(ok.length).toBe(30);
  });

  it('two `catalog serve --data D` started together: one serves, the other exits 2 naming the holder', async () => {
    const data = tempDir('lock-serve-');
    const [a, b] = await Promise.all([serveOrExit(data), serveOrExit(data)]);
    const [serving, refused] = a.url ? [a, b] : [b, a];
    try {
      expect(serving.url).toBeDefined();
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(/the catalog in \S+ is held by process \d+/);
      const added = await catalog(['labels', 'add', 'name=Kept'], { env: { CATALOG_DATA: data } });
      expect(added.code).toBe(0);
    } finally {
      await serving.stop();
    }
    const listed = await catalog(['labels', 'list', '-o', 'json'], { env: { CATALOG_DATA: data } });
    expect((JSON.parse(listed.stdout) as Array<{ name: string }>).map((r) => r.name)).toEqual(['Kept']);
  });

  it('a lock left by a killed holder is taken over with no manual step, also when its pid now belongs to another process', async () => {
    const data = tempDir('lock-stale-');
    // The lock is rewritten by hand below to stand for a dead holder's: no command may leave a live
    // background holder behind it (the suite's CATALOG_KEEP_WARM=5 would, and its lock would be overwritten).
    const env = { CATALOG_DATA: data, CATALOG_KEEP_WARM: '0' };
    const serve = await startServe(['--data', data]);
    expect((await catalog(['labels', 'add', 'name=Before the kill'], { env })).code).toBe(0);
    await serve.stop('SIGKILL');
    const lockPath = join(data, 'catalog-serve.json');
    const left = JSON.parse(readFileSync(lockPath, 'utf8')) as { pid: number; url: string };
    expect(left.pid).toBe(serve.proc.pid);

    // the killed holder's pid, reused by an unrelated process (same lock, another process behind the pid)
    const unrelated = spawn('sleep', ['60'], { stdio: 'ignore' });
    try {
      writeFileSync(lockPath, JSON.stringify({ ...left, pid: unrelated.pid }));
      const r = await catalog(['labels', 'list', '-o', 'json'], { env });
      expect(r.code, r.stderr).toBe(0);
      expect((JSON.parse(r.stdout) as Array<{ name: string }>).map((x) => x.name)).toEqual(['Before the kill']);
      // an older lock without the start time: the recorded URL must answer as this directory's holder
      writeFileSync(lockPath, JSON.stringify({ pid: unrelated.pid, url: left.url }));
      const again = await catalog(['labels', 'add', 'name=After the takeover'], { env });
      expect(again.code, again.stderr).toBe(0);
    } finally {
      unrelated.kill();
    }
    // the plain dead-pid case
    writeFileSync(lockPath, JSON.stringify(left));
    const last = await catalog(['labels', 'list', '-o', 'json'], { env });
    expect((JSON.parse(last.stdout) as Array<{ name: string }>).map((x) => x.name).sort()).toEqual(['After the takeover', 'Before the kill']);
  });
});
