/**
 * The embedded catalog's holder: the one process that has a data directory open and serves it to
 * everyone else (src/holder/lock.ts decides who). This module finds it or becomes it, starts the
 * background holder that keeps the catalog warm between commands (`catalog serve --idle-exit`),
 * and hands a command the way in: `connect(dataDir) → { url, client }`, where the client carries
 * the holder's credential and follows the catalog when its holder changes. A holder a command
 * starts or becomes is private (src/holder/guard.ts); a `catalog serve` someone runs is public.
 */
import { closeSync, constants, existsSync, fstatSync, ftruncateSync } from 'node:fs';
import { join } from 'node:path';
import type { ServiceClient } from '../client/transport.js';
import type { RunningServer, StartOptions } from '../server/listen.js';
import type { Holder } from './lock.js';
import { currentHolder, KEY_HEADER, LOCK_FILE, openPrivateFile, preparePrivateDir, readHolder, stopBackgroundHolder } from './lock.js';
import { holderEngine } from '../store/pglite-engine.js';

/** Whether this process changed a V8 flag (src/store/pglite-engine.ts): for the CLI, whose files reach store/ only through cli/embedded.ts. */
export { v8FlagsChanged } from '../store/pglite-engine.js';

/** What finding or becoming the holder needs of src/server/listen.ts (loaded lazily; a seam for tests). */
export interface HolderControl {
  startServer(opts: StartOptions): Promise<Pick<RunningServer, 'url' | 'close'> & Partial<Pick<RunningServer, 'serveInProcess'>> & { key?: string | null; store?: { died?: Promise<Error> } }>;
  /** The live process holding a directory and listening, from its lock (no request made). */
  readServeLock(dataDir: string): { pid: number; url: string; key?: string } | null;
  /** The live holder of a data directory (its URL null while it opens the catalog), or null. */
  currentHolder?(dataDir: string): Promise<Holder | null>;
  /** Asks a background holder to stop and waits for the directory (true when it is free). */
  stopBackgroundHolder?(dataDir: string): Promise<boolean>;
}

/** A background holder a command started: its pid, and whether it has exited already. */
export interface StartedHolder {
  pid: number;
  exited(): boolean;
}

/** Where a command reaches the holder: its URL and the headers it asks for (the credential of a private one). */
export interface HolderAddress {
  url: string;
  headers: Record<string, string>;
}

export interface ConnectOptions {
  control: HolderControl;
  /** The tool's version: a background holder of another version (an upgrade) is replaced, once. */
  version: string;
  /** Seconds a background holder stays without a request; 0: none is started (the command opens the catalog). */
  keepWarmSeconds: number;
  /** Starts a background holder (only the real command-line process can); see spawnHolder. */
  spawn?: (dataDir: string, idleSeconds: number) => Promise<StartedHolder | null>;
  /** A background holder this command started already (startEarly): waited for, not started again. */
  started?: Promise<StartedHolder | null>;
  /** Messages for people (waiting, creating a catalog). */
  note(message: string): Promise<void>;
  /**
   * Opens the catalog in this process when nobody else holds it: the caller's spinner and engine
   * settings around `start`, which it tells whether PGlite gets a thread of its own (a bulk command).
   */
  openHere(start: (engine: HereEngine) => Promise<HolderAddress | null>): Promise<HolderAddress | null>;
  /** Builds the client for an address; `relocate` finds the holder again after it changed. */
  client(address: HolderAddress, relocate: () => Promise<HolderAddress>): ServiceClient;
}

/** How a command that opens the catalog itself runs it (StartOptions.storeThread, src/store/pglite-remote.ts). */
export interface HereEngine {
  storeThread: boolean;
}

/** A command's way into the embedded catalog. */
export interface HolderConnection {
  url: string;
  client: ServiceClient;
  /** Whether the holder is this process or a background holder: its URL is a temporary one, not an address to keep. */
  temporary: boolean;
  /** Closes the catalog if this process holds it (after the client's pool has closed). */
  close(): Promise<void>;
}

/** How long a command waits for another process that holds the embedded catalog to start serving it. */
const LOCK_WAIT_MS = 60_000;

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * How long to wait before reading the lock again, `waited` ms into the wait: 10 ms while a holder
 * is most likely starting (it opens the catalog in ~0.3 s: a poll costs a command ~0.1 ms, and a
 * 25 ms one cost the first command ~12 ms on average), 50 ms past two seconds.
 */
const pollMs = (waited: number) => (waited < 2_000 ? 10 : 50);

const addressOf = (url: string, key: string | null | undefined): HolderAddress => ({ url, headers: key ? { [KEY_HEADER]: key } : {} });

/** What a connection knows of the holder: the catalog this process serves, if it became the holder. */
interface LinkState {
  own: { address: HolderAddress; close(): Promise<void> } | null;
  /** Whether the holder found is a background holder (its URL is a temporary port). */
  background: boolean;
}

/**
 * The HolderControl of a command that finds the holder: the lock's readers (this folder's lock.ts),
 * and `startServer` (src/server/listen.ts, which the caller loads) only for a command that opens
 * the catalog itself. Finding a holder then loads no server module.
 */
export function lockControl(startServer: HolderControl['startServer']): HolderControl {
  return {
    startServer,
    readServeLock(dataDir) {
      const holder = readHolder(dataDir);
      return holder?.url ? { pid: holder.pid, url: holder.url, ...(holder.key ? { key: holder.key } : {}) } : null;
    },
    currentHolder,
    stopBackgroundHolder: (dataDir) => stopBackgroundHolder(dataDir),
  };
}

/**
 * Starts the background holder before the command line is even parsed, when the caller guesses
 * the command will need the embedded catalog, the catalog exists and nobody holds it: its start
 * (~0.5 s, PGlite's) then overlaps loading and parsing the command. connect, given the result as
 * `started`, waits for this holder instead of starting another. A new catalog is left to connect,
 * which says it creates one, so a command line that fails before it creates nothing.
 */
export async function startEarly(dataDir: string, opts: Pick<ConnectOptions, 'keepWarmSeconds' | 'spawn'>): Promise<StartedHolder | null> {
  // a lock, even a dead holder's, is left to connect: a warm command only looks for it here
  if (!opts.spawn || opts.keepWarmSeconds === 0 || existsSync(join(dataDir, LOCK_FILE)) || !existsSync(join(dataDir, 'PG_VERSION'))) return null;
  // refuses another user's or a shared directory as connect would (connect then says why)
  preparePrivateDir(dataDir);
  if (await currentHolder(dataDir)) return null;
  return opts.spawn(dataDir, opts.keepWarmSeconds);
}

/** Finds or becomes the holder of `dataDir` and returns the way in (the data directory checked first: see preparePrivateDir). */
export async function connect(dataDir: string, opts: ConnectOptions): Promise<HolderConnection> {
  preparePrivateDir(dataDir);
  const state: LinkState = { own: null, background: false };
  const address = await findOrBecome(dataDir, opts, state, (await opts.started) ?? null);
  return {
    url: address.url,
    // finding it again (the holder changed) may start a new background holder
    client: opts.client(address, () => findOrBecome(dataDir, opts, state, null)),
    get temporary() {
      return state.own !== null || state.background;
    },
    close: async () => {
      await state.own?.close();
    },
  };
}

/**
 * The holder's address: the `catalog serve` or process that holds the directory now, or this
 * process, which takes the lock and opens it when nobody holds it (after starting a background
 * holder, or waiting for the one `early` names, unless keep-warm is off). A holder still opening
 * the catalog is waited for (bounded, with a message); only the lock's holder ever opens the files.
 */
async function findOrBecome(dataDir: string, opts: ConnectOptions, state: LinkState, early: StartedHolder | null): Promise<HolderAddress> {
  const { control } = opts;
  if (state.own) return state.own.address;
  const since = Date.now();
  const deadline = since + LOCK_WAIT_MS;
  let told = false;
  // a background holder this command started early is waited for as one it started here
  let started: StartedHolder | null = early;
  let replaced = false;
  for (;;) {
    const holder: Holder | null = control.currentHolder ? await control.currentHolder(dataDir) : control.readServeLock(dataDir);
    if (holder?.url) {
      // a background holder left by another version of the tool (an upgrade) is replaced, once
      if (holder.background && !replaced && holder.version && holder.version !== opts.version && control.stopBackgroundHolder) {
        replaced = true;
        if (await control.stopBackgroundHolder(dataDir)) continue;
      }
      state.background = holder.background === true;
      return addressOf(holder.url, holder.key);
    }
    if (holder) {
      // pid 0: a lock just made, not written yet (lock.ts): its process is not known
      const who = holder.pid ? `process ${holder.pid}` : 'another process';
      if (Date.now() > deadline) {
        throw new Error(`${who} has held the catalog in ${dataDir} for ${LOCK_WAIT_MS / 1000} s without serving it: stop it, or give --url`);
      }
      // no notice for the holder this command started (an unknown pid is taken for it, when there is one)
      const ours = started !== null && (holder.pid === started.pid || holder.pid === 0);
      if (!told && !ours) {
        await opts.note(`Waiting for ${who}, which is opening the catalog in ${dataDir}`);
        told = true;
      }
      await pause(pollMs(Date.now() - since));
      continue;
    }
    // Nobody holds it: start a background holder that stays warm for later commands, and wait
    // for it (or for whichever holder won the directory); open it here when none could start.
    if (!started) {
      started = await startBackground(dataDir, opts);
      if (started) continue;
    } else if (!started.exited() && Date.now() < deadline) {
      await pause(pollMs(Date.now() - since));
      continue;
    }
    const mine = await opts.openHere((engine) => openHere(dataDir, opts, state, engine));
    if (mine) return mine;
  }
}

/** Starts the background holder unless keep-warm is off (or this process cannot start one). */
async function startBackground(dataDir: string, opts: ConnectOptions): Promise<StartedHolder | null> {
  if (!opts.spawn || opts.keepWarmSeconds === 0) return null;
  if (!existsSync(join(dataDir, 'PG_VERSION'))) await opts.note(`Creating a new catalog in ${dataDir}`);
  return opts.spawn(dataDir, opts.keepWarmSeconds);
}

/** Takes the lock and serves the catalog in this process, privately; null when another process took it first. */
async function openHere(dataDir: string, opts: ConnectOptions, state: LinkState, engine: HereEngine): Promise<HolderAddress | null> {
  let server: Pick<RunningServer, 'url' | 'close'> & { key?: string | null };
  try {
    server = await opts.control.startServer({ dataDir, port: 0, host: '127.0.0.1', private: true, storeThread: engine.storeThread });
  } catch (err) {
    const name = (err as Error).name;
    if (name === 'HeldError') return null;
    if (name === 'UnsafeDirError') throw err;
    const why = (err as NodeJS.ErrnoException).code === 'ENOSPC' ? 'the disk holding it is full (no space left on device): free some space, then run the command again' : (err as Error).message;
    throw new Error(`cannot open the embedded catalog in ${dataDir}: ${why}`);
  }
  const address = addressOf(server.url, server.key);
  state.own = { address, close: () => server.close() };
  return address;
}

/**
 * What makes `catalog serve --idle-exit N` the background holder: it serves privately and stops
 * once no request has been in flight or arrived for N seconds (listen.ts counts requests). Sets
 * this process's engine for the holder's life too (src/store/pglite-engine.ts, holderEngine): a
 * command is waiting for it to open the catalog.
 */
export function backgroundServeOptions(idleSeconds: number, version: string, stop: () => void): Pick<StartOptions, 'private' | 'onIdle'> {
  holderEngine();
  return { private: true, onIdle: { idleMs: idleSeconds * 1000, run: stop, version } };
}

/** The holder's log: appended to across holders, started afresh once it passes 1 MB; never through a symlink, 0600. */
function openHolderLog(dataDir: string): number {
  const fd = openPrivateFile(join(dataDir, 'catalog-holder.log'), constants.O_CREAT | constants.O_APPEND);
  if (fstatSync(fd).size > 1 << 20) ftruncateSync(fd, 0);
  return fd;
}

/**
 * `catalog serve --data DIR --port 0 --idle-exit N`, detached, in its own session (a Ctrl-C at the
 * terminal does not reach it), output appended to DIR/catalog-holder.log. Null when it cannot start
 * (then the command opens the catalog itself).
 */
export async function spawnHolder(bin: string, dataDir: string, idleSeconds: number, env: NodeJS.ProcessEnv): Promise<StartedHolder | null> {
  // loaded only when a holder is started: most commands never need it
  const { spawn } = await import('node:child_process');
  // a log that is a symlink or another user's file is refused (UnsafeDirError), never followed
  const log = openHolderLog(dataDir);
  try {
    const child = spawn(process.execPath, [bin, 'serve', '--data', dataDir, '--port', '0', '--idle-exit', String(idleSeconds)], {
      detached: true,
      stdio: ['ignore', log, log],
      env: { ...env, CATALOG_KEEP_WARM: '0', CATALOG_URL: '' },
    });
    let exited = child.pid === undefined;
    child.once('exit', () => (exited = true));
    child.once('error', () => (exited = true));
    child.unref();
    return { pid: child.pid ?? 0, exited: () => exited };
  } catch {
    return null;
  } finally {
    closeSync(log);
  }
}
