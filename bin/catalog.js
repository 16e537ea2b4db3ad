#!/usr/bin/env node
'use strict';
// CommonJS (bin/package.json): node starts a CommonJS main sooner than an ES module, and a command
// a warm background holder runs for this process (the thin client below) loads no ES module at all.

// Node opens its inspector on SIGUSR1 when nothing listens for it, and anyone who reaches
// 127.0.0.1:9229 can then run code as this process: a listener of our own, first thing, keeps the
// signal from it (`catalog serve` gives SIGUSR1 PostgREST's meaning; other commands ignore it).
process.on('SIGUSR1', () => {});

const { lstatSync, statSync, writeSync } = require('node:fs');
const { join } = require('node:path');

// dist/bundle/ (scripts/bundle.mjs) is the same code as dist/cli/, as one script compiled from a
// V8 code cache. tsc rewrites every file of dist/ it compiles: a bundle older than dist/cli/main.js
// is stale.
const dist = `${__dirname}/../dist/`;
const mtime = (rel) => statSync(dist + rel, { throwIfNoEntry: false })?.mtimeMs ?? -1;
const bundle = mtime('bundle/catalog.js');
const compiled = mtime('cli/main.js');
if (bundle < 0 && compiled < 0) {
  // a clone after `npm ci` (no install script builds it): say what to run instead of a module stack
  const root = require('node:url').pathToFileURL(`${require('node:path').resolve(__dirname, '..')}/`).pathname;
  process.stderr.write(`catalog: this copy is not built yet: run \`npm run build\` in ${root}\n`);
  process.exit(1);
}

/** Runs the command line in this process: the whole CLI, as the bundle (or dist/cli/ while it is newer). */
async function runHere() {
  const { run, systemContext } = await import(bundle >= compiled ? '../dist/bundle/catalog.js' : '../dist/cli/main.js');
  process.exitCode = await run(process.argv, systemContext());
}

/*
 * The thin client: hands the command line to the warm background holder of the embedded catalog
 * through its command door (src/holder/door.ts describes the protocol), writes what the holder
 * sends back to this process's stdout and stderr, and exits with the command's code. A reading
 * command then costs little more than node's own start: the CLI, commander and node:http are never
 * loaded here (BENCHMARKS.md, "start-up").
 *
 * Only when it is safe and exact: a door of this user's (the data directory is theirs and private,
 * the socket theirs), no node options, and the door itself hands back whatever it cannot run as
 * this process would (another bundle or a build since the holder started, another node, locale or
 * time zone, a command that may prompt or page…). Handed back, not reached, or gone before it wrote anything: the command runs here, as it
 * always did, and nobody can tell. (test/e2e/holder-door.test.ts holds these constants to the door's.)
 */
const DOOR_FILE = 'catalog-cli.sock';
const DOOR_PROTOCOL = 1;
const MAX_SOCKET_PATH = 100;
const FRAME = { STARTED: 0, STDOUT: 1, STDERR: 2, EXIT: 3, HAND_BACK: 4 };
const STDOUT_GONE = 1;
/** The verbs a door runs (src/cli/main.ts's HANDED_OVER_VERBS and their aliases): other command lines are not even offered. */
const DOOR_VERBS = new Set(['list', 'ls', 'get', 'count']);
/** How long the door may take to say it read the command line (its holder stuck in one long statement): then it runs here. */
const START_WAIT_MS = 1000;

/**
 * The embedded catalog's directory as src/cli/paths.ts works it out, or null where that needs more
 * than the environment (no absolute HOME, a relative CATALOG_DATA: the command runs here).
 */
function dataDirOf(env) {
  const home = env.HOME;
  if (!home || !home.startsWith('/')) return null;
  const xdg = (name, fallback) => (env[name] && env[name].startsWith('/') ? env[name] : join(home, fallback));
  const dir = env.CATALOG_DATA || join(xdg('XDG_DATA_HOME', '.local/share'), 'catalog');
  return dir.startsWith('/') ? dir : null;
}

/** The door's socket when it is this user's, in a private directory of this user's; else null (also when they cannot be looked at). */
function doorOf(dataDir) {
  const socket = join(dataDir, DOOR_FILE);
  if (Buffer.byteLength(socket) > MAX_SOCKET_PATH) return null;
  const uid = process.getuid();
  try {
    const dir = statSync(dataDir, { throwIfNoEntry: false });
    if (!dir || !dir.isDirectory() || dir.uid !== uid || dir.mode & 0o077) return null;
    const st = lstatSync(socket, { throwIfNoEntry: false });
    return st && st.isSocket() && st.uid === uid ? socket : null;
  } catch {
    return null;
  }
}

/**
 * Hands the command line to the background holder's door. Null when there is no door to ask
 * (nothing was done); else exits with the command's code once it ran there, or resolves false when
 * it is to run here (nothing was written), true when the holder was lost after it began writing.
 */
function handOver(args) {
  const env = process.env;
  if (process.platform === 'win32' || process.execArgv.length > 0 || env.CATALOG_URL || env.CATALOG_PROFILE) return null;
  if (!args.some((a) => DOOR_VERBS.has(a)) || args.some((a) => a === '-h' || a === '--help' || a === '-V' || a === '--version')) return null;
  const dataDir = dataDirOf(env);
  const socket = dataDir && doorOf(dataDir);
  if (!socket) return null;
  const { isatty } = require('node:tty');
  const tty = [isatty(0), isatty(1), isatty(2)];
  const size = {
    ...(tty[1] ? { out: [process.stdout.columns, process.stdout.rows] } : {}),
    ...(tty[2] ? { err: [process.stderr.columns, process.stderr.rows] } : {}),
  };
  const request = Buffer.from(JSON.stringify({ protocol: DOOR_PROTOCOL, entry: join(dist, 'bundle/catalog.js'), node: process.version, args, env, dataDir, tty, size }), 'utf8');
  return exchange(socket, request);
}

/** Writes all of `buf` to fd (waiting out a non-blocking descriptor's EAGAIN). */
function writeAll(fd, buf) {
  let at = 0;
  while (at < buf.length) {
    try {
      at += writeSync(fd, buf, at);
    } catch (err) {
      if (err.code !== 'EAGAIN') throw err;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
    }
  }
}

/**
 * The door's connection, the request written at once (node:net sends it as soon as the socket is
 * connected). Only public APIs: reaching the socket through node's internal libuv bindings
 * (process.binding, deprecated) measured ~4 ms less a command and was left out for that reason.
 */
function netConnection(path, message, onData, onGone) {
  const conn = require('node:net').connect(path);
  conn.write(message);
  conn.on('data', onData);
  conn.on('error', onGone);
  conn.on('close', onGone);
  return { write: (bytes) => void conn.write(bytes), destroy: () => void conn.destroy() };
}

/** Sends the request and plays the door's frames; see handOver. */
function exchange(path, request) {
  const head = Buffer.allocUnsafe(4);
  head.writeUInt32BE(request.length);
  const message = Buffer.concat([head, request]);
  let written = false;
  let stdoutGone = false;
  let pending = Buffer.alloc(0);
  return new Promise((resolve) => {
    let settled = false;
    let conn = null;
    let timer;
    const settle = (done) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      conn?.destroy();
      resolve(done);
    };
    /** The connection failed or closed before the exit code: run here if nothing was written, else say so. */
    const lost = () => {
      if (settled) return;
      if (!written) return settle(false);
      writeAll(2, Buffer.from('catalog: lost the background holder during the command: run it again\n'));
      process.exitCode = 1;
      settle(true);
    };
    const output = (fd, payload) => {
      written = true;
      if (fd === 1 && stdoutGone) return;
      try {
        writeAll(fd, payload);
      } catch (err) {
        // a reader that went away (`| head`) silences the stream, as src/io/streams.ts's nodeOutput does
        if (err.code !== 'EPIPE') throw err;
        if (fd === 1 && !stdoutGone) {
          stdoutGone = true;
          conn.write(Buffer.from([STDOUT_GONE]));
        }
      }
    };
    const onData = (chunk) => {
      pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
      while (!settled && pending.length >= 5) {
        const length = pending.readUInt32BE(1);
        if (pending.length < 5 + length) break;
        const type = pending[0];
        const payload = pending.subarray(5, 5 + length);
        pending = pending.subarray(5 + length);
        if (type === FRAME.STARTED) clearTimeout(timer);
        else if (type === FRAME.STDOUT) output(1, payload);
        else if (type === FRAME.STDERR) output(2, payload);
        // all of the output is written (synchronously): nothing is left to wait for
        else if (type === FRAME.EXIT) process.exit(payload.readInt32BE(0)); else if (type === FRAME.HAND_BACK && !written) settle(false);
        else lost();
      }
    };
    conn = netConnection(path, message, onData, lost);
    // the door reads a request at once unless its holder is stuck in a long statement: then run here
    // (set once the request is on its way: a first timer costs ~0.5 ms, now while the door works)
    timer = setTimeout(() => settle(false), START_WAIT_MS);
  });
}

const handed = bundle >= compiled ? handOver(process.argv.slice(2)) : null;
if (handed) handed.then((done) => (done ? undefined : runHere()));
else runHere();
