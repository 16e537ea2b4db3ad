import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, readdirSync, readlinkSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PG_URL, tempDir } from '../support/stores.js';

export const ROOT = resolve(import.meta.dirname, '../..');
export const BIN = join(ROOT, 'bin', 'catalog.js');

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(p) : statSync(p).mtimeMs);
  }
  return newest;
}

/** Compiles src/ to dist/ when dist is missing or older than the sources (npm test compiles first anyway). */
export function ensureBuilt(): void {
  const main = join(ROOT, 'dist', 'cli', 'main.js');
  if (existsSync(main) && statSync(main).mtimeMs >= newestMtime(join(ROOT, 'src'))) return;
  try {
    execFileSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', ROOT], { stdio: 'pipe' });
  } catch {
    // Type errors elsewhere in the tree still emit JavaScript; the tests judge the result.
  }
}

export interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `node bin/catalog.js ...args` (stdin not a terminal) and collects its output. */
export function catalog(args: string[], opts: { env?: Record<string, string | undefined>; input?: string; nodeArgs?: string[] } = {}): Promise<Result> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [...(opts.nodeArgs ?? []), BIN, ...args], {
      cwd: ROOT,
      env: { ...process.env, NO_COLOR: undefined, FORCE_COLOR: undefined, CATALOG_URL: undefined, CATALOG_TOKEN: undefined, ...opts.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code: code ?? -1, stdout, stderr }));
    // a command that reads no input may exit before its (empty) stdin is closed: EPIPE then says
    // nothing of the command, whose exit code and output are what the caller asserts
    child.stdin.on('error', (err: NodeJS.ErrnoException) => (err.code === 'EPIPE' ? undefined : reject(err)));
    child.stdin.end(opts.input ?? '');
  });
}

/** Quotes an argument for sh. */
const sh = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * What a terminal shows of `raw`: a spinner (src/io/spinner.ts) draws each frame as
 * `\r\x1b[2K<frame> <text>` and erases itself with `\r\x1b[2K` before any output, so on the
 * screen it leaves nothing. A command slower than the spinner's one-second delay (a loaded machine)
 * then gives the same text as a quick one.
 */
export function asOnScreen(raw: string): string {
  return raw.replace(/\r\x1b\[2K(?:[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] [^\r\n]*)?/g, '');
}

/**
 * Runs the command in a pseudo-terminal (util-linux `script`), `cols` wide and `rows` high. stdout
 * and stderr arrive mixed, as a person sees them (see asOnScreen); `input` is typed into the
 * terminal once `inputAfter` (default: any output) has appeared.
 */
export function catalogInTerminal(
  args: string[],
  opts: { env?: Record<string, string | undefined>; cols?: number; rows?: number; input?: string; inputAfter?: RegExp } = {},
): Promise<Result> {
  const command = `stty cols ${opts.cols ?? 100} rows ${opts.rows ?? 50} 2>/dev/null; exec ${sh(process.execPath)} ${sh(BIN)} ${args.map(sh).join(' ')}`;
  return new Promise((resolvePromise, reject) => {
    const child = spawn('script', ['-qec', command, '/dev/null'], {
      cwd: ROOT,
      env: { ...process.env, NO_COLOR: undefined, FORCE_COLOR: undefined, CATALOG_URL: undefined, TERM: 'xterm', ...opts.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    let typed = !opts.input;
    const onOutput = (c: Buffer) => {
      out += c;
      // Typed when the prompt is there, however long the command took to show it.
      if (!typed && (opts.inputAfter ?? /\S/).test(asOnScreen(out))) {
        typed = true;
        // Left open: an end of input would reach the command as a key press (^D) of its own.
        child.stdin.write(opts.input ?? '');
      }
    };
    child.stdout.on('data', onOutput);
    child.stderr.on('data', onOutput);
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code: code ?? -1, stdout: asOnScreen(out).replace(/\r\n/g, '\n'), stderr: '' }));
    if (typed) child.stdin.end();
  });
}

export interface Serve {
  url: string;
  proc: ChildProcess;
  stderr: () => string;
  /** Sends a signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Starts `catalog serve --port 0` on a data directory and waits for its URL. */
export function startServe(args: string[], env: Record<string, string | undefined> = {}): Promise<Serve> {
  return new Promise((resolvePromise, reject) => {
    const proc = spawn(process.execPath, [BIN, 'serve', '--port', '0', ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    const exited = new Promise<number | null>((r) => proc.on('exit', (code) => r(code)));
    proc.stderr.on('data', (c) => {
      err += c;
      const m = /Serving the catalog at (http:\/\/\S+)/.exec(err);
      if (m) resolvePromise({ url: m[1], proc, stderr: () => err, stop: (signal = 'SIGTERM') => (proc.kill(signal), exited) });
    });
    proc.on('exit', (code) => reject(new Error(`catalog serve exited with ${code}: ${err}`)));
  });
}

/** Where `catalog serve` keeps the catalog in a suite run on each store. */
export interface ServeBackend {
  name: string;
  /** PostgreSQL without CATALOG_TEST_DATABASE_URL: the suite skips, saying so. */
  skip: boolean;
  args: string[];
  /** Drops the PostgreSQL schema (a PGlite directory is left to the temp root). */
  cleanup(): Promise<void>;
}

/** `catalog serve` arguments for a PGlite data directory and, when configured, a fresh PostgreSQL schema named after `prefix`. */
export function serveBackends(prefix: string): ServeBackend[] {
  const schema = `catalog_${prefix.replace(/\W/g, '_')}_${process.pid}`;
  return [
    { name: 'PGlite data directory', skip: false, args: ['--data', join(tempDir(`${prefix}-`), 'data')], cleanup: async () => {} },
    {
      name: 'PostgreSQL',
      skip: !PG_URL,
      args: ['--database-url', PG_URL ?? '', '--db-schema', schema],
      async cleanup() {
        if (!PG_URL) return;
        const pg = (await import('pg')).default;
        const c = new pg.Client({ connectionString: PG_URL });
        await c.connect();
        await c.query(`drop schema if exists ${schema} cascade`);
        await c.end();
      },
    },
  ];
}

/** Whether process `pid` has `path` open (Linux /proc): it is reading or writing it now. */
export function hasOpen(pid: number, path: string): boolean {
  try {
    return readdirSync(`/proc/${pid}/fd`).some((fd) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`) === path;
      } catch {
        return false;
      }
    });
  } catch {
    return false;
  }
}
