import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ServiceClient } from '../../src/client/transport.js';
import { connect, type ConnectOptions, type HolderControl, lockControl, type StartedHolder, startEarly } from '../../src/holder/holder.js';
import { acquireDirLock, type Holder, LOCK_FILE, UnsafeDirError } from '../../src/holder/lock.js';
import { tempDir } from '../support/stores.js';

/** A data directory that holds a catalog (its marker file), private as the holder makes it. */
function catalogDir(): string {
  const dir = join(tempDir('early-'), 'catalog');
  mkdirSync(dir, { mode: 0o700 });
  writeFileSync(join(dir, 'PG_VERSION'), '17\n');
  return dir;
}

/** A spawn that records its calls and starts nothing. */
function recordingSpawn(pid = 4711) {
  const calls: Array<[string, number]> = [];
  const spawn = async (dir: string, seconds: number): Promise<StartedHolder> => {
    calls.push([dir, seconds]);
    return { pid, exited: () => false };
  };
  return { calls, spawn };
}

describe('startEarly: the background holder started before the command line is parsed', () => {
  it('starts one for a catalog nobody holds, with the keep-warm seconds', async () => {
    const dir = catalogDir();
    const { calls, spawn } = recordingSpawn();
    expect(await startEarly(dir, { keepWarmSeconds: 300, spawn })).toEqual({ pid: 4711, exited: expect.any(Function) });
    expect(calls).toEqual([[dir, 300]]);
  });

  it('leaves a directory that is no catalog yet to connect (which says it creates one), and creates nothing', async () => {
    const dir = join(tempDir('early-new-'), 'catalog');
    const { calls, spawn } = recordingSpawn();
    expect(await startEarly(dir, { keepWarmSeconds: 300, spawn })).toBeNull();
    expect(calls).toEqual([]);
    expect(existsSync(dir)).toBe(false);
  });

  it('leaves a directory with a lock to connect, whether its holder lives or not', async () => {
    const dir = catalogDir();
    writeFileSync(join(dir, LOCK_FILE), JSON.stringify({ pid: 999_999_999, start: null, url: null }), { mode: 0o600 });
    const { calls, spawn } = recordingSpawn();
    expect(await startEarly(dir, { keepWarmSeconds: 300, spawn })).toBeNull();
    expect(calls).toEqual([]);
  });

  it('starts none with keep-warm off, or where this process cannot start one', async () => {
    const dir = catalogDir();
    const { calls, spawn } = recordingSpawn();
    expect(await startEarly(dir, { keepWarmSeconds: 0, spawn })).toBeNull();
    expect(await startEarly(dir, { keepWarmSeconds: 300 })).toBeNull();
    expect(calls).toEqual([]);
  });

  it('refuses a data directory others may write to, as connect does, before starting anything', async () => {
    const dir = catalogDir();
    chmodSync(dir, 0o777);
    const { calls, spawn } = recordingSpawn();
    await expect(startEarly(dir, { keepWarmSeconds: 300, spawn })).rejects.toBeInstanceOf(UnsafeDirError);
    expect(calls).toEqual([]);
  });
});

/** connect's options around a control whose holder goes through `states`, one per look at the lock (the last one stays). */
function options(states: Array<Holder | null>, early: StartedHolder | null) {
  const seen = { notes: [] as string[], spawned: 0, urls: [] as string[], relocate: null as null | (() => Promise<{ url: string }>) };
  const control: HolderControl = {
    startServer: async () => {
      throw new Error('this process never opens the catalog here');
    },
    readServeLock: () => null,
    currentHolder: async () => (states.length > 1 ? states.shift()! : states[0]),
  };
  const opts: ConnectOptions = {
    control,
    version: '1.0.0',
    keepWarmSeconds: 300,
    started: Promise.resolve(early),
    spawn: async () => {
      seen.spawned++;
      return { pid: 5150, exited: () => false };
    },
    note: async (m) => void seen.notes.push(m),
    openHere: async () => null,
    client: (address, relocate) => {
      seen.urls.push(address.url);
      seen.relocate = relocate;
      return {} as ServiceClient;
    },
  };
  return { opts, seen };
}

describe('connect, given the holder startEarly started', () => {
  const url = 'http://127.0.0.1:1';

  it('waits for it while it opens the catalog: no second holder, no "Waiting for process" notice', async () => {
    const dir = catalogDir();
    const early = { pid: 777, exited: () => false };
    const { opts, seen } = options([null, { pid: 777, url: null }, { pid: 777, url: null }, { pid: 777, url, background: true, version: '1.0.0' }], early);
    const c = await connect(dir, opts);
    expect(c.url).toBe(url);
    expect(c.temporary).toBe(true);
    expect(seen).toMatchObject({ spawned: 0, notes: [], urls: [url] });
  });

  it('a holder another process started is waited for with the notice, as before', async () => {
    const dir = catalogDir();
    const { opts, seen } = options([{ pid: 888, url: null }, { pid: 888, url, background: true, version: '1.0.0' }], { pid: 777, exited: () => false });
    await connect(dir, opts);
    expect(seen.notes).toEqual([`Waiting for process 888, which is opening the catalog in ${dir}`]);
    expect(seen.spawned).toBe(0);
  });

  it('a lock read while its holder is still writing it (pid unknown) gives no notice when this command started a holder, and names no pid 0 otherwise', async () => {
    const dir = catalogDir();
    const mine = options([{ pid: 0, url: null }, { pid: 777, url, background: true, version: '1.0.0' }], { pid: 777, exited: () => false });
    await connect(dir, mine.opts);
    expect(mine.seen.notes).toEqual([]);
    const other = options([{ pid: 0, url: null }, { pid: 888, url, background: true, version: '1.0.0' }], null);
    await connect(catalogDir(), other.opts);
    expect(other.seen.notes).toEqual([expect.stringMatching(/^Waiting for another process, which is opening the catalog in /)]);
  });

  it('finding the catalog again later (its holder stopped) starts a new background holder', async () => {
    const dir = catalogDir();
    const states: Array<Holder | null> = [{ pid: 777, url, background: true, version: '1.0.0' }];
    const { opts, seen } = options(states, { pid: 777, exited: () => false });
    await connect(dir, opts);
    // the early holder is gone: the next look finds nobody, then the new holder serving
    states.splice(0, states.length, null, { pid: 5150, url: 'http://127.0.0.1:2', background: true, version: '1.0.0' });
    expect(await seen.relocate!()).toMatchObject({ url: 'http://127.0.0.1:2' });
    expect(seen.spawned).toBe(1);
  });
});

describe('lockControl: finding a holder from its lock, without the server', () => {
  it('reads the URL and key a holder recorded, as the server module does', async () => {
    const dir = join(tempDir('lock-control-'), 'catalog');
    const lock = await acquireDirLock(dir, { version: '1.0.0' });
    try {
      const started: unknown[] = [];
      const control = lockControl(async (o) => {
        started.push(o);
        return { url: 'x', close: async () => {} };
      });
      expect(control.readServeLock(dir)).toBeNull(); // holding, not listening yet
      lock.setUrl('http://127.0.0.1:9', 'the-key');
      expect(control.readServeLock(dir)).toEqual({ pid: process.pid, url: 'http://127.0.0.1:9', key: 'the-key' });
      expect(await control.currentHolder!(dir)).toMatchObject({ pid: process.pid, url: 'http://127.0.0.1:9', background: true, key: 'the-key' });
      await control.startServer({ dataDir: dir });
      expect(started).toEqual([{ dataDir: dir }]);
    } finally {
      lock.release();
    }
  });
});
