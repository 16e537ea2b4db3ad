import { createHash, randomUUID } from 'node:crypto';
import { open } from 'node:fs/promises';
import { Worker } from 'node:worker_threads';
import type { Transport } from '../../client/transport.js';
import { LATEST_VERSION } from '../../schema/migrations.js';
import type { ImportOptions } from '../options.js';

/**
 * Unchanged re-runs, the client's side (the service's: src/server/runs.ts, migrations 11 and 12). A run
 * that left the catalog as its file says is recorded under a fingerprint of the file's bytes and
 * every setting that decides what the run writes, with the catalog's write count after it. The
 * next run with the same fingerprint asks first: when nothing has written the catalog since, it
 * would find every row unchanged, so it sends nothing and says so (`--recheck` compares anyway).
 *
 * Exact, not a guess: the count advances at every statement that writes a collection, whoever
 * writes (psql, a real PostgREST, another import); a run is recorded only when nobody else wrote
 * while it ran (the count moved by exactly the run's own statements, each tagged `Prefer: run=`)
 * and no other writer was open when it started or ended. Anything else (a service without the
 * functions, a plain PostgREST, a database role that may not call them) means a full run.
 *
 * The fingerprint is `<probe>.<hash>`: the probe (the settings, the file's size and its first and
 * last 64 KiB) is asked first, and only a probe the service knows at the current count makes the
 * run wait for the whole file's hash before it reads anything; otherwise the hash runs beside the
 * run (a worker thread) and is needed only to record it. A first import pays nothing for it.
 */

/** What the service answered for this fingerprint or probe (fresh: the fingerprint of the record it found). */
export type RunCheck = { fresh: true; records: number; finished: string; fingerprint: string | null } | { fresh: false; generation: number | null };

/**
 * A run being counted: its whole fingerprint (still being hashed), its tag for `Prefer: run=`,
 * and the write count when it started (null: another writer was open). `stop` ends the hashing
 * when the run will not be recorded.
 */
export interface CountedRun {
  fingerprint: Promise<string>;
  id: string;
  started: number | null;
  stop: () => void;
}

/** The settings that decide what a run writes (not batch sizes, paths or callbacks), in a fixed order. */
function decisive(opts: ImportOptions, tool: string): unknown[] {
  const t = opts.table;
  return [
    'catalog import run 1',
    tool,
    LATEST_VERSION,
    t.name,
    t.columns.map((c) => [c.name, c.type]),
    opts.format ?? null,
    opts.map ?? null,
    Boolean(opts.ignoreUnknown),
    opts.nullToken === undefined ? '(default)' : opts.nullToken,
    opts.key ?? null,
    opts.refs ?? null,
    Boolean(opts.createMissing),
    opts.sync ? { scope: opts.sync.scopeText, cascade: opts.sync.cascade } : null,
    opts.onConflict ?? null,
    Boolean(opts.ignoreDuplicates),
    opts.dedupe ?? null,
    opts.encoding ?? null,
    opts.delimiter ?? null,
    opts.dateFormat ?? null,
    opts.sheet ?? null,
    opts.headerRow ?? null,
    opts.match ?? null,
  ];
}

/**
 * Why this run cannot be recorded or skipped, or null when it can: not asked for
 * (`ImportOptions.unchangedRuns`; the CLI's `--recheck`), a dry run, a resume, row checks
 * (a check may read today's date), or a file that is one step of a directory run (the directory's
 * links and removals come after every file).
 */
export function notCountable(opts: ImportOptions): string | null {
  if (!opts.unchangedRuns) return 'not asked (--recheck)';
  if (opts.dryRun) return 'a dry run';
  if (opts.resume) return '--resume';
  if (opts.checks?.length) return '--check';
  if (opts.sync?.deferred || opts.prospective || opts.knownIds) return 'a directory run';
  return null;
}

/**
 * The hashing thread: SHA-256 of `head` (the settings) and then the file's bytes, posted as hex
 * (about 0.06 s per 72 MB in memory here). A thread of its own so the main thread stays free for
 * a stop (Ctrl-C terminates it at once: between two reads of a megabyte).
 */
const HASHER = `
const { parentPort, workerData } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const { openSync, readSync, closeSync } = require('node:fs');
try {
  const hash = createHash('sha256').update(workerData.head);
  // one buffer read into again and again: a read stream's new buffer per chunk cost the thread a tenth of its time
  const buf = Buffer.allocUnsafe(1 << 20);
  const fd = openSync(workerData.path, 'r');
  try {
    for (let n; (n = readSync(fd, buf, 0, buf.length, null)) > 0; ) hash.update(buf.subarray(0, n));
  } finally {
    closeSync(fd);
  }
  parentPort.postMessage(hash.digest('hex'));
} catch (err) {
  parentPort.postMessage({ error: String(err && err.message) });
}
`;

const settingsHead = (opts: ImportOptions) => `${JSON.stringify(decisive(opts, opts.toolVersion ?? ''))}\n`;

/** How much of each end of the file the probe reads. */
const PROBE_BYTES = 64 * 1024;

/**
 * The run's probe: SHA-256 of the decisive settings, the file's size and its first and last
 * PROBE_BYTES (the whole file when it is no longer than both). Read in a millisecond at any size.
 */
export async function runProbe(opts: ImportOptions, path: string): Promise<string> {
  const fh = await open(path, 'r');
  try {
    const size = (await fh.stat()).size;
    const hash = createHash('sha256').update(settingsHead(opts)).update(`${size}\n`);
    const head = Buffer.alloc(Math.min(size, PROBE_BYTES));
    await fh.read(head, 0, head.length, 0);
    hash.update(head);
    const tailFrom = Math.max(head.length, size - PROBE_BYTES);
    const tail = Buffer.alloc(size - tailFrom);
    await fh.read(tail, 0, tail.length, tailFrom);
    return hash.update(tail).digest('hex');
  } finally {
    await fh.close();
  }
}

/**
 * The file's hash: SHA-256 of the decisive settings and the file's bytes, in a worker thread
 * (`stop` ends it; a stop of the import does too).
 */
export function runFingerprint(opts: ImportOptions, path: string): { hash: Promise<string>; stop: () => void } {
  let worker: Worker;
  try {
    worker = new Worker(HASHER, { eval: true, workerData: { head: settingsHead(opts), path } });
  } catch (err) {
    // no thread to be had: the run is simply not recorded (nor skipped)
    const hash = Promise.reject(err instanceof Error ? err : new Error(String(err)));
    hash.catch(() => {});
    return { hash, stop: () => {} };
  }
  const stop = () => void worker.terminate();
  const hash = new Promise<string>((resolve, reject) => {
    if (opts.signal?.aborted) stop();
    opts.signal?.addEventListener('abort', stop, { once: true });
    const done = () => opts.signal?.removeEventListener('abort', stop);
    worker.once('message', (m: unknown) => {
      done();
      void worker.terminate();
      if (typeof m === 'string') resolve(m);
      else reject(new Error(`cannot read ${path}: ${(m as { error?: string }).error ?? 'unknown error'}`));
    });
    worker.once('error', (err) => (done(), reject(err)));
    worker.once('exit', () => (done(), reject(new Error('the hashing thread stopped'))));
  });
  hash.catch(() => {}); // awaited (or given up) later
  return { hash, stop };
}

async function call(transport: Transport, name: string, args: Record<string, unknown>): Promise<unknown> {
  const res = await transport.send({ method: 'POST', path: `/rpc/${name}`, headers: { 'Content-Type': 'application/json', Accept: 'application/json' }, body: JSON.stringify(args) });
  if (res.status !== 200) return null;
  try {
    return JSON.parse(res.body);
  } catch {
    return null;
  }
}

/**
 * Asks whether the run with this fingerprint left the catalog as it is now. Null: the service
 * cannot say (not ours, or an older one, or not for this principal): then a full run.
 */
export async function checkRun(transport: Transport, fingerprint: string): Promise<RunCheck | null> {
  const r = (await call(transport, 'catalog_import_run_check', { fingerprint }).catch(() => null)) as Record<string, unknown> | null;
  if (!r || typeof r !== 'object') return null;
  if (r.fresh === true && typeof r.records === 'number') return { fresh: true, records: r.records, finished: String(r.finished), fingerprint: typeof r.fingerprint === 'string' ? r.fingerprint : null };
  if (r.fresh === false) return { fresh: false, generation: typeof r.generation === 'number' ? r.generation : null };
  return null;
}

/** Records a finished run that left the catalog as its file says; true when the service kept it. */
export async function recordRun(transport: Transport, run: CountedRun, records: number): Promise<boolean> {
  const fingerprint = await run.fingerprint.catch(() => null);
  if (fingerprint === null) return false;
  const r = await call(transport, 'catalog_import_run_record', { fingerprint, run: run.id, started: run.started, records }).catch(() => null);
  return r === true;
}

/** A request tagged as the run's own: `Prefer: run=<id>` added to what it prefers. */
export function tagged<R extends { headers?: Record<string, string> }>(req: R, run: CountedRun | null): R {
  if (!run) return req;
  const headers = { ...(req.headers ?? {}) };
  const key = Object.keys(headers).find((k) => k.toLowerCase() === 'prefer');
  if (key) headers[key] = `${headers[key]}, run=${run.id}`;
  else headers.Prefer = `run=${run.id}`;
  return { ...req, headers };
}

/** A transport that tags the run's requests once `run` is set (engine.ts `counting`). */
export interface RunTransport extends Transport {
  run: CountedRun | null;
}

/**
 * The start of a run, beside the scan pass: when it may ask (notCountable), asks by the probe
 * whether a run of this file and these settings left the catalog as it is now, then starts the
 * whole file's hash (a worker thread; not against a service that cannot say). Only when the probe
 * is known (`onRecorded` is told, and the caller's scan holds still) is the hash awaited and
 * compared with the record's: the same, and the caller sends nothing. Else the run is counted
 * from here (its requests tagged; its hash finishes beside it), and null. Never fails: a run that
 * cannot ask is a full run.
 */
export async function askUnchanged(opts: ImportOptions, path: string, transport: RunTransport, onRecorded?: () => void): Promise<{ records: number; finished: string } | null> {
  if (notCountable(opts) !== null) return null;
  const probe = await runProbe(opts, path).catch(() => null);
  let check = probe === null ? null : await checkRun(transport, probe);
  // a service that cannot say (a plain PostgREST): no hash wanted
  if (check === null) return null;
  if (check.fresh) onRecorded?.();
  const hashing = runFingerprint(opts, path);
  const fingerprint = hashing.hash.then((hash) => `${probe}.${hash}`);
  fingerprint.catch(() => {}); // a run stopped before its hash is done: the hash is not wanted
  if (check.fresh) {
    const whole = await fingerprint.catch(() => null);
    if (whole !== null && whole === check.fingerprint) return check;
    // another file with the same probe: the count to start from, asked by the whole fingerprint
    check = whole === null ? null : await checkRun(transport, whole);
    if (check?.fresh) return check;
  }
  if (check && !check.fresh) transport.run = { fingerprint, id: randomUUID(), started: check.generation, stop: hashing.stop };
  else hashing.stop();
  return null;
}

/**
 * The end of a run: recorded when it is `clean` (finished, nothing rejected) and the service
 * finds that nobody else wrote meanwhile. Undefined when the run was not counted.
 */
export async function recordClean(transport: RunTransport, clean: boolean, records: number): Promise<boolean | undefined> {
  const run = transport.run;
  if (!run) return undefined;
  if (clean && run.started !== null) return recordRun(transport, run, records);
  run.stop();
  return false;
}

/**
 * Whether a run of this file with these settings left the catalog as it is now: the probe asked
 * first, the file hashed only when the service knows the probe. False whenever it cannot say.
 */
export async function unchangedNow(opts: ImportOptions, path: string, transport: Transport): Promise<boolean> {
  if (notCountable(opts) !== null) return false;
  const probe = await runProbe(opts, path).catch(() => null);
  const check = probe === null ? null : await checkRun(transport, probe);
  if (!check?.fresh) return false;
  const whole = await runFingerprint(opts, path).hash.then((hash) => `${probe}.${hash}`, () => null);
  return whole !== null && whole === check.fingerprint;
}

/** The end of an import however it ended: a hash still running for a run that will not be recorded stops. */
export function endRun(transport: RunTransport): void {
  transport.run?.stop();
}
