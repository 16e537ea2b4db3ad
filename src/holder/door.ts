/**
 * The background holder's command door: a private Unix socket (`DIR/catalog-cli.sock`, 0600 in the
 * 0700 data directory) where bin/catalog.js hands over a command line (its words, its environment,
 * which of its streams are terminals and their size) instead of starting the whole CLI. The holder
 * runs it with the CLI's own code, in this warm process (the caller's `run`), and streams the output
 * back frame by frame; or hands it back (the client then runs the command itself, as it always
 * did) whenever it cannot serve it exactly as the client would: another build or node, another
 * locale or time zone, a command that may prompt, page, read stdin or files, or open the catalog.
 * The commands served read no path relative to the working directory, so it is not sent.
 *
 * The protocol (bin/catalog.js is the other side; test/e2e/holder-door.test.ts holds both to it):
 *   client → door  u32 length, then the request as JSON (DoorRequest); later a single byte
 *                  STDOUT_GONE when the client's stdout is a closed pipe
 *   door → client  frames of u8 type, u32 length, payload: STARTED (the door read the request),
 *                  STDOUT / STDERR (bytes to write), EXIT (i32 exit code), HAND_BACK (nothing was
 *                  written: run the command yourself)
 */
import { chmodSync, lstatSync, renameSync, unlinkSync } from 'node:fs';
import type { Server, Socket } from 'node:net';
import { join } from 'node:path';
import { colorEnabled, drainedOrClosed, type IO, type Output } from '../io/streams.js';
import { HandBack } from './hand-back.js';

export { HandBack };

/** The socket's name in the data directory. */
export const DOOR_FILE = 'catalog-cli.sock';
/** What bin/thin-client.js sends as `protocol`; a client of another protocol is handed back. */
export const DOOR_PROTOCOL = 1;
/** Unix socket paths are cut at 107 bytes (sun_path); a longer data directory gets no door. */
export const MAX_SOCKET_PATH = 100;
/** A request larger than this (argv and environment) is refused: no client sends one. */
const MAX_REQUEST = 1 << 20;

export const FRAME = { STARTED: 0, STDOUT: 1, STDERR: 2, EXIT: 3, HAND_BACK: 4 } as const;
/** The byte a client sends when its stdout went away (EPIPE). */
export const STDOUT_GONE = 1;

/** What a thin client sends: the command line and everything about its process a command may look at. */
export interface DoorRequest {
  protocol: number;
  /** The bundle's entry (dist/bundle/catalog.js) the client's bin/catalog.js would load: a door of another hands the command back. */
  entry: string;
  /** process.version of the client. */
  node: string;
  /** The command line after `catalog`. */
  args: string[];
  env: Record<string, string | undefined>;
  /** The data directory the client worked out (it found this door there). */
  dataDir: string;
  /** isatty of fds 0, 1, 2. */
  tty: [boolean, boolean, boolean];
  /** columns and rows of stdout and stderr where they are terminals (as process.stdout.columns, …). */
  size: { out?: [number | undefined, number | undefined]; err?: [number | undefined, number | undefined] };
}


/**
 * Environment variables that change how node itself behaves (locale, time zone, its own options,
 * TLS trust): a client whose values differ from this holder's is handed back, since its own process
 * would have started with them.
 */
export function processWideDifference(a: Record<string, string | undefined>, b: Record<string, string | undefined>): string | null {
  const wide = (name: string) => /^(?:TZ|LANG|LANGUAGE|ICU_DATA|LC_\w+|NODE_\w+|UV_\w+|OPENSSL_\w+|SSL_CERT_\w+)$/.test(name);
  for (const name of new Set([...Object.keys(a), ...Object.keys(b)])) {
    if (wide(name) && (a[name] ?? null) !== (b[name] ?? null)) return name;
  }
  return null;
}

/** How the door runs a command: the caller (src/cli/context.ts) builds the command's context from the request and the IO. */
export type RunForClient = (req: DoorRequest, io: IO) => Promise<number>;

export interface DoorOptions {
  dataDir: string;
  /**
   * The bundle's entry this process runs, and whether that file is still the one it loaded: a
   * request for another entry, or after a build replaced this one, is handed back.
   */
  bundle: { entry: string; unchanged(): boolean };
  /** This process's environment (for processWideDifference). */
  env: Record<string, string | undefined>;
  run: RunForClient;
}

export interface Door {
  /** Stops taking commands, removes the socket, and waits (at most `waitMs`) for the commands running to end. */
  close(waitMs?: number): Promise<void>;
}

/** Opens the door: listens on a new socket in the data directory, made 0600, then renamed into place. */
export async function openDoor(opts: DoorOptions): Promise<Door | null> {
  const path = join(opts.dataDir, DOOR_FILE);
  if (Buffer.byteLength(path) > MAX_SOCKET_PATH || !opts.bundle.unchanged()) return null;
  const { createServer } = await import('node:net');
  const running = new Set<Promise<void>>();
  const server: Server = createServer((socket) => {
    const done = serveClient(socket, opts).finally(() => running.delete(done));
    running.add(done);
  });
  const tmp = `${path}.${process.pid}.tmp`;
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(tmp, () => resolve());
    });
    // the directory is 0700 already; the socket is its owner's alone as well before it has its name
    chmodSync(tmp, 0o600);
    renameSync(tmp, path);
  } catch {
    server.close();
    return null;
  }
  server.unref();
  const ino = lstatSync(path).ino;
  return {
    async close(waitMs = 10_000) {
      server.close();
      try {
        // only this door's socket: a newer holder's may have taken the name
        if (lstatSync(path).ino === ino) unlinkSync(path);
      } catch {
        // gone already
      }
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.allSettled([...running]), new Promise((r) => (timer = setTimeout(r, waitMs)))]);
      clearTimeout(timer);
    },
  };
}

/** One frame for the client. */
function frame(type: number, payload: Uint8Array = Buffer.alloc(0)): Buffer {
  const head = Buffer.allocUnsafe(5);
  head[0] = type;
  head.writeUInt32BE(payload.length, 1);
  return Buffer.concat([head, payload]);
}

/** Reads the request: a u32 length, then that much JSON. Null when the client went away first or sent nonsense. */
function readRequest(socket: Socket, onGone: () => void): Promise<DoorRequest | null> {
  return new Promise((resolve) => {
    let got = Buffer.alloc(0);
    let need = -1;
    const finish = (req: DoorRequest | null) => {
      socket.off('data', onData);
      socket.off('end', onEnd);
      socket.off('close', onEnd);
      resolve(req);
    };
    const onEnd = () => finish(null);
    const onData = (chunk: Buffer) => {
      got = Buffer.concat([got, chunk]);
      if (need < 0 && got.length >= 4) {
        need = got.readUInt32BE(0);
        if (need > MAX_REQUEST) return finish(null);
      }
      if (need < 0 || got.length < 4 + need) return;
      const rest = got.subarray(4 + need);
      try {
        const req = JSON.parse(got.subarray(4, 4 + need).toString('utf8')) as DoorRequest;
        // anything after the request: the client's stdout went away
        if (rest.includes(STDOUT_GONE)) onGone();
        finish(req);
      } catch {
        finish(null);
      }
    };
    socket.on('data', onData);
    socket.on('end', onEnd);
    socket.on('close', onEnd);
  });
}

/** An Output that sends what a command writes as frames of `type`, described as the client's stream is. */
function clientOutput(socket: Socket, type: number, tty: boolean, size: [number | undefined, number | undefined] | undefined, env: DoorRequest['env'], state: { written: boolean; stdoutGone: boolean }): Output {
  const isStdout = type === FRAME.STDOUT;
  return {
    isTTY: tty,
    // as src/io/streams.ts's nodeOutput reads a process stream
    columns: tty ? size?.[0] ?? 80 : 0,
    rows: tty ? size?.[1] : undefined,
    get closed() {
      return isStdout && state.stdoutGone;
    },
    color: colorEnabled(env, tty),
    write(text: string): Promise<void> {
      if (text === '' || socket.destroyed) return Promise.resolve();
      state.written = true;
      // what is written in one turn of the event loop (the last output and the exit code) goes in one write
      if (!socket.writableCorked) {
        socket.cork();
        setImmediate(() => socket.uncork());
      }
      return socket.write(frame(type, Buffer.from(text, 'utf8'))) ? Promise.resolve() : drainedOrClosed(socket);
    },
  };
}

/** Why a request is handed back before anything runs, or null when the door may run it. */
function refusal(req: DoorRequest, opts: DoorOptions): string | null {
  if (req.protocol !== DOOR_PROTOCOL) return 'protocol';
  if (req.entry !== opts.bundle.entry || !opts.bundle.unchanged()) return 'build';
  if (req.node !== process.version) return 'node';
  if (req.dataDir !== opts.dataDir) return 'data directory';
  if (!Array.isArray(req.args) || typeof req.env !== 'object' || req.env === null || !Array.isArray(req.tty)) return 'request';
  return processWideDifference(req.env, opts.env);
}

/** Serves one client: its request, the command's output as it comes, then its exit code (or the hand-back). */
async function serveClient(socket: Socket, opts: DoorOptions): Promise<void> {
  socket.on('error', () => {});
  const state = { written: false, stdoutGone: false };
  const req = await readRequest(socket, () => (state.stdoutGone = true));
  if (!req) return void socket.destroy();
  socket.on('data', (chunk: Buffer) => {
    if (chunk.includes(STDOUT_GONE)) state.stdoutGone = true;
  });
  // a client that gave up waiting (its holder was busy) runs the command itself
  if (socket.destroyed) return;
  socket.write(frame(FRAME.STARTED));
  if (refusal(req, opts) !== null) return void socket.end(frame(FRAME.HAND_BACK));
  const io: IO = {
    stdin: {
      isTTY: Boolean(req.tty[0]),
      get stream(): never {
        throw new HandBack('stdin');
      },
    },
    stdout: clientOutput(socket, FRAME.STDOUT, Boolean(req.tty[1]), req.size?.out, req.env, state),
    stderr: clientOutput(socket, FRAME.STDERR, Boolean(req.tty[2]), req.size?.err, req.env, state),
  };
  let code: number;
  try {
    code = await opts.run(req, io);
  } catch (err) {
    if (err instanceof HandBack && !state.written) return void socket.end(frame(FRAME.HAND_BACK));
    // the command had begun to write: it cannot be run again by the client
    const message = err instanceof Error ? err.message : String(err);
    if (!socket.destroyed) socket.write(frame(FRAME.STDERR, Buffer.from(`catalog: the background holder could not finish the command (${message}): run it again\n`)));
    code = 1;
  }
  const exit = Buffer.alloc(4);
  exit.writeInt32BE(code);
  socket.end(frame(FRAME.EXIT, exit));
}
