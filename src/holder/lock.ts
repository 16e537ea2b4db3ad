import { chmodSync, closeSync, constants, fstatSync, lstatSync, mkdirSync, readdirSync, openSync, readFileSync, realpathSync, statSync, unlinkSync, writeSync } from 'node:fs';
import type { Stats } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { writeFileAtomicSync } from '../shared/atomic-write.js';

/**
 * One process holds an embedded data directory at a time. The lock is `catalog-serve.json` in the
 * directory, created with O_CREAT|O_EXCL: the operating system lets exactly one process create it,
 * so there is no window between "nobody holds it" and "I hold it". It records the holder's pid,
 * the pid's start time (so a pid that another process reuses later is not taken for the holder),
 * and, once it listens, its URL. A lock whose holder is gone is taken over with no manual step.
 *
 * Not proper-lockfile: its staleness is an mtime the holder refreshes from a timer, and a PGlite
 * holder's event loop can sit inside one statement for many seconds (a 60 MB write: 24 s), long
 * enough to be declared dead while it still has the files open. A pid and its start time are not
 * fooled by a busy holder.
 *
 * Everything here is private to the directory's owner: the directory is 0700 (one owned by another
 * user, or writable by group or others, is refused, as ssh refuses such a ~/.ssh), files are made
 * 0600 and opened with O_NOFOLLOW, and a lock owned by another user is not trusted.
 */
export const LOCK_FILE = 'catalog-serve.json';

/** The data directory, or a file in it, is not safely this user's (exit 2: fix the permissions). */
export class UnsafeDirError extends Error {
  override readonly name = 'UnsafeDirError';
}

/** O_NOFOLLOW where the platform has it (a symlink planted in the directory is never followed). */
const NOFOLLOW = constants.O_NOFOLLOW ?? 0;

/** This process's user id, or null where there is none (Windows: no POSIX permissions to check). */
const myUid = (): number | null => (typeof process.getuid === 'function' ? process.getuid() : null);

/**
 * Makes the data directory (0700, whatever the umask) or checks the one there: it must be this
 * user's and not writable by group or others; a looser mode of the user's own directory is
 * tightened to 0700. Throws UnsafeDirError naming the problem.
 */
export function preparePrivateDir(dataDir: string): void {
  let st: Stats;
  try {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    st = statSync(dataDir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EACCES' || code === 'EPERM') throw new UnsafeDirError(`cannot use the catalog directory ${dataDir}: permission denied (is it another user's?); give another --data / CATALOG_DATA`);
    throw err;
  }
  const uid = myUid();
  if (uid === null) return;
  if (!st.isDirectory()) throw new UnsafeDirError(`${dataDir} is not a directory`);
  if (st.uid !== uid) {
    throw new UnsafeDirError(`the catalog directory ${dataDir} belongs to user ${st.uid}, not to you (user ${uid}): refusing to use it (another user could read or change the catalog); give another --data / CATALOG_DATA`);
  }
  if (st.mode & 0o022) {
    throw new UnsafeDirError(
      `the catalog directory ${dataDir} is writable by ${st.mode & 0o020 ? 'its group' : 'others'} (mode ${(st.mode & 0o777).toString(8)}): refusing to use it, as ssh refuses such a ~/.ssh; make it private with \`chmod 700 ${dataDir}\``,
    );
  }
  if (st.mode & 0o077) chmodSync(dataDir, 0o700);
}

/**
 * Takes group and other permissions off the files PGlite's file system gives a mode of its own,
 * whatever the umask: the relation cache files (`global/pg_internal.init`, `base/<db>/pg_internal.init`,
 * 0644). The holder runs this after opening the catalog and after closing it; everything else is
 * made under the holder's 0077 umask. A few stat calls, not a walk of the catalog's ~450 files.
 */
export function tightenModes(dataDir: string): void {
  const base = join(dataDir, 'base');
  let dbs: string[] = [];
  try {
    dbs = readdirSync(base).map((db) => join(base, db));
  } catch {
    // no catalog here (yet)
  }
  for (const dir of [join(dataDir, 'global'), ...dbs]) {
    const path = join(dir, 'pg_internal.init');
    try {
      const mode = lstatSync(path).mode;
      if (mode & 0o077 && (mode & constants.S_IFMT) === constants.S_IFREG) chmodSync(path, mode & 0o700);
    } catch {
      // not made yet
    }
  }
}

/**
 * Opens a file of the data directory for writing without following a symlink, 0600 when it is
 * made, and refuses one owned by another user. `flags` adds O_CREAT, O_EXCL, O_APPEND…
 */
export function openPrivateFile(path: string, flags: number): number {
  let fd: number;
  try {
    fd = openSync(path, constants.O_WRONLY | NOFOLLOW | flags, 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOOP') throw new UnsafeDirError(`${path} is a symbolic link: refusing to follow it (remove it)`);
    throw err;
  }
  const uid = myUid();
  const st = fstatSync(fd);
  if (uid !== null && st.uid !== uid) {
    closeSync(fd);
    throw new UnsafeDirError(`${path} belongs to user ${st.uid}, not to you (user ${uid}): refusing to use it (remove it)`);
  }
  return fd;
}

export interface Holder {
  pid: number;
  /** The holder's URL; null while it is still opening the catalog. */
  url: string | null;
  /** A background holder a command started (it stops when idle), not a `catalog serve` someone runs. */
  background?: boolean;
  /** The tool's version a background holder runs (a command of another version replaces it). */
  version?: string;
  /** The credential a private holder asks of every request (see src/holder/guard.ts); none for a public `catalog serve`. */
  key?: string;
}

interface LockInfo {
  pid: number;
  /** /proc start time of the pid (clock ticks since boot), or null where /proc is not available. */
  start: string | null;
  url: string | null;
  background?: boolean;
  version?: string;
  key?: string;
}

/** A directory is held by another process (which the message names). */
export class HeldError extends Error {
  override readonly name = 'HeldError';
  constructor(
    readonly dataDir: string,
    readonly holder: Holder,
  ) {
    super(`the catalog in ${dataDir} is held by process ${holder.pid}${holder.url ? ` (catalog serve at ${holder.url})` : ' (opening it now)'}`);
  }
}

/** This process's own start time, read once (the background holder checks its own lock for every command its door runs). */
let ownStart: string | null | undefined;

/** A process's start time from /proc (field 22 of stat), or null when it cannot be read. */
function processStart(pid: number): string | null {
  if (pid === process.pid) return (ownStart ??= readStart(pid));
  return readStart(pid);
}

function readStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The lock's content. A lock that is a symlink or belongs to another user is not trusted: it
 * could send this user's commands, and their rows, to someone else's server (UnsafeDirError).
 */
function readInfo(path: string): LockInfo | null | 'unreadable' {
  let text: string;
  try {
    const fd = openSync(path, constants.O_RDONLY | NOFOLLOW);
    try {
      const owner = fstatSync(fd).uid;
      const uid = myUid();
      if (uid !== null && owner !== uid) {
        throw new UnsafeDirError(`the lock ${path} belongs to user ${owner}, not to you (user ${uid}): it is not trusted; remove it once no process of that user holds the catalog`);
      }
      text = readFileSync(fd, 'utf8');
    } finally {
      closeSync(fd);
    }
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') throw new UnsafeDirError(`the lock ${path} is a symbolic link: it is not trusted (remove it)`);
    if (err instanceof UnsafeDirError) throw err;
    return code === 'ENOENT' ? null : 'unreadable';
  }
  try {
    const v = JSON.parse(text) as Partial<LockInfo>;
    if (typeof v.pid !== 'number') return 'unreadable';
    return {
      pid: v.pid,
      start: typeof v.start === 'string' ? v.start : null,
      url: typeof v.url === 'string' ? v.url : null,
      background: v.background === true,
      ...(typeof v.version === 'string' ? { version: v.version } : {}),
      ...(typeof v.key === 'string' ? { key: v.key } : {}),
    };
  } catch {
    return 'unreadable';
  }
}

/** What a lock says of its holder. */
const holderOf = (info: LockInfo): Holder => ({ pid: info.pid, url: info.url, background: info.background, version: info.version, ...(info.key ? { key: info.key } : {}) });

/** A hash naming a data directory (what a holder answers with), so its path is never sent over the wire. */
export function directoryTag(dataDir: string): string {
  let real = dataDir;
  try {
    real = realpathSync(dataDir);
  } catch {
    // not there (yet): the given path
  }
  // node:crypto (~3 ms to load) only where a holder starts: every command reads this module's lock
  const { createHash } = createRequire(import.meta.url)('node:crypto') as typeof import('node:crypto');
  return createHash('sha256').update(real).digest('hex').slice(0, 32);
}

/** The header a holder answers every request with: the tag of the directory it holds. */
export const HOLDER_HEADER = 'catalog-holder';

/** The header carrying a private holder's credential (the `key` of its lock). */
export const KEY_HEADER = 'catalog-holder-key';

/**
 * Whether a recorded holder is alive: its pid runs and is the same process (same start time).
 * An old lock without a start time counts as alive only while its URL answers as the holder of
 * this directory, so a pid reused by an unrelated process never keeps a dead lock.
 */
async function holderAlive(info: LockInfo, dataDir: string): Promise<boolean> {
  if (!pidAlive(info.pid)) return false;
  const start = processStart(info.pid);
  if (info.start !== null && start !== null) return start === info.start;
  if (!info.url) return info.pid === process.pid;
  try {
    const res = await fetch(`${info.url}/`, { method: 'HEAD', headers: info.key ? { [KEY_HEADER]: info.key } : {}, signal: AbortSignal.timeout(2000) });
    return res.headers.get(HOLDER_HEADER) === directoryTag(dataDir);
  } catch {
    return false;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The live holder of a directory, or null when none holds it (a dead holder's lock counts as none). */
export async function currentHolder(dataDir: string): Promise<Holder | null> {
  const path = join(dataDir, LOCK_FILE);
  const info = readInfo(path);
  if (info === null) return null;
  if (info === 'unreadable') return recentlyMade(path) ? { pid: 0, url: null } : null;
  return (await holderAlive(info, dataDir)) ? holderOf(info) : null;
}

/**
 * A lock file made in the last few seconds whose creator may still be writing it. An mtime in the
 * future is not trusted as "just made": after the clock steps back it would stay "recent" for as
 * long as the step, and wedge every takeover; only a small skew either way counts as recent.
 */
export function recentlyMade(path: string, now = Date.now()): boolean {
  try {
    return Math.abs(now - statSync(path).mtimeMs) < 5000;
  } catch {
    return false;
  }
}

/** The holder a lock names when its pid runs as the same process (no request made), else null. */
export function readHolder(dataDir: string): Holder | null {
  const info = readInfo(join(dataDir, LOCK_FILE));
  if (info === null || info === 'unreadable' || !pidAlive(info.pid)) return null;
  const start = info.start === null ? null : processStart(info.pid);
  return start === null || start === info.start ? holderOf(info) : null;
}

/**
 * Asks a background holder of the directory (one a command started, see `catalog serve
 * --idle-exit`) to stop, and waits until it has let go (at most `waitMs`). True when the
 * directory is free afterwards; false when a holder someone runs in the foreground has it, or the
 * background one did not stop in time.
 */
export async function stopBackgroundHolder(dataDir: string, waitMs = 10_000): Promise<boolean> {
  const holder = await currentHolder(dataDir);
  if (!holder) return true;
  if (!holder.background || holder.pid === process.pid) return false;
  try {
    process.kill(holder.pid, 'SIGTERM');
  } catch {
    // gone already
  }
  const end = Date.now() + waitMs;
  while (Date.now() < end) {
    if (!(await currentHolder(dataDir))) return true;
    await sleep(50);
  }
  return false;
}

export interface DirLock {
  /** Records the URL the holder listens on, and a private holder's credential, in one step (readers then talk to it). */
  setUrl(url: string, key?: string): void;
  /** Gives the directory up (removes the lock if it is still this process's). */
  release(): void;
}

/**
 * Takes the directory for this process, or throws HeldError naming the live holder. A dead
 * holder's lock (its pid gone, or reused by another process) is removed and taken over.
 */
export async function acquireDirLock(dataDir: string, background?: { version?: string }): Promise<DirLock> {
  preparePrivateDir(dataDir);
  const path = join(dataDir, LOCK_FILE);
  const mine: LockInfo = { pid: process.pid, start: processStart(process.pid), url: null, ...(background ? { background: true, version: background.version } : {}) };
  for (let attempt = 0; ; attempt++) {
    try {
      const fd = openPrivateFile(path, constants.O_CREAT | constants.O_EXCL);
      try {
        writeSync(fd, JSON.stringify(mine));
      } catch (err) {
        // a lock left empty (a full disk) would make others wait for it: it goes
        unlinkQuietly(path);
        throw err;
      } finally {
        closeSync(fd);
      }
      return lockHandle(path, mine);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = await currentHolder(dataDir);
    if (holder) throw new HeldError(dataDir, holder);
    if (attempt >= 50) throw new Error(`cannot take the lock ${path}: it keeps changing hands`);
    await removeStale(dataDir, path);
  }
}

/**
 * Removes a dead holder's lock. Two processes may find the same dead lock at once: a second,
 * short-lived O_EXCL file makes one of them the remover, which checks again that the lock is
 * still the dead one before removing it, so a lock a third process just took is never removed.
 */
async function removeStale(dataDir: string, path: string): Promise<void> {
  const guard = `${path}.takeover`;
  let fd: number;
  try {
    fd = openPrivateFile(guard, constants.O_CREAT | constants.O_EXCL);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    // Another process is taking over; a guard left by a killed one goes after a few seconds.
    if (!recentlyMade(guard)) unlinkQuietly(guard);
    await sleep(20 + Math.random() * 30);
    return;
  }
  closeSync(fd);
  try {
    if (!(await currentHolder(dataDir))) unlinkQuietly(path);
  } finally {
    unlinkQuietly(guard);
  }
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // already gone
  }
}

function lockHandle(path: string, mine: LockInfo): DirLock {
  let held = true;
  return {
    setUrl(url, key) {
      mine.url = url;
      if (key) mine.key = key;
      // A rename replaces the file in one step: a reader sees the old content or the new, never half
      // (and never a URL with another holder's key).
      writeFileAtomicSync(path, JSON.stringify(mine), { mode: 0o600 });
    },
    release() {
      if (!held) return;
      held = false;
      let info: ReturnType<typeof readInfo>;
      try {
        info = readInfo(path);
      } catch {
        return; // someone else's file took its place: not ours to remove
      }
      if (info && info !== 'unreadable' && info.pid === process.pid) unlinkQuietly(path);
    },
  };
}
