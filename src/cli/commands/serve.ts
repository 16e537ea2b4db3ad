import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import type { Context } from '../context.js';
import { UsageError } from '../errors.js';
import { loadCluster, loadHolder, loadServer, type StartOptions } from '../embedded.js';
import { SERVE_SETTINGS, settingOption, type ServeSettings } from './serve-settings.js';
import { examples } from './shared.js';
import { booleanWord } from '../../schema/codecs.js';
import { logSettings, ServeLog } from './serve-log.js';

export interface ServeOptions extends ServeSettings {
  idleExit?: string;
  config?: string;
  dumpConfig?: boolean;
}

/**
 * What the embedded store is for, said where a person choosing how to serve reads it (issue 15
 * item 9): PGlite runs one statement at a time in this process, so a large write holds every
 * other request until it is done.
 */
const EMBEDDED_NOTE = `
The embedded catalog (--data) is for one person or a few: PGlite runs one statement at a time in
this process, so a large write makes every other request wait until it is done (an 8 MiB body,
its default limit, takes about 2 s; catalog import sends at most 4 MiB at a time). A catalog several
people use at once wants --database-url.`;

const SETTINGS_NOTE = `
Every setting also comes from its CATALOG_* variable (named after its flag, shown above), from
PostgREST's PGRST_* variable (PGRST_DB_URI, PGRST_JWT_SECRET, …), or a --config file: YAML or JSON
(port: 8080), or PostgREST's own (db-uri = "postgres://…"). A flag wins, then CATALOG_*, then
PGRST_*, then the file. --dump-config prints what is in force. Secrets (the JWT secret, a database
password) belong in the environment or a file only you may read (chmod 600), not on the command
line, where any local user sees them.

Signals, as PostgREST: SIGUSR1 reloads the schema description; SIGUSR2 (and SIGHUP) reads the
configuration again (the --config file, a jwt-secret @FILE) and takes up what can change while
serving (JWT settings, limits, logging), dropping no connection; SIGINT/SIGTERM stop after the
requests in flight. With --workers the primary passes them on to every worker.`;

/** `catalog serve`. */
export function defineServe(ctx: Context): Command {
  const cmd = new Command('serve')
    .description('Run the catalog service (PostgREST 12.2.3 interface) until Ctrl-C');
  // The settings first (from their table), then the options about settings and the holder's own.
  for (const s of SERVE_SETTINGS) {
    const { flags, help } = settingOption(s);
    cmd.option(flags, help);
  }
  cmd
    .option('--config <file>', 'read settings from a file: YAML or JSON (port: 8080, database-url: …) or PostgREST\'s (db-uri = "…"); flags and variables win over it')
    .option('--dump-config', 'print the settings in force (flags, CATALOG_* and PGRST_* variables, --config file, defaults) as a config file, secrets redacted, and exit')
    .option('--idle-exit <seconds>', 'stop after this many seconds without a request (the background holder commands start uses it)')
    .action(async (opts: ServeOptions) => runServe(opts, ctx))
    .addHelpText('after', `${EMBEDDED_NOTE}\n${SETTINGS_NOTE}`);
  return examples(cmd, [
    'catalog serve',
    'catalog serve --port 8080 --data ./catalog-data',
    'catalog serve --host 0.0.0.0 --workers 2 --config /etc/catalog/postgrest.conf   # PostgREST\'s file: db-uri, jwt-secret (chmod 600)',
  ]);
}

/** An on|off flag's value (also true/false, yes/no, 1/0); anything else is exit 2 naming the flag. */
function onOff(flag: string, value: string): boolean {
  // the boolean column type's words (src/schema/codecs.ts), so a flag reads as a cell does
  const v = booleanWord(value);
  if (v !== null) return v;
  throw new UsageError(`${flag} must be on or off, not ${JSON.stringify(value)}`);
}

/** The longest pause between two tries to reach a database that is down at start. */
const MAX_START_RETRY_MS = 10_000;

/**
 * Starts the service, trying again with backoff (0.5 s doubling to 10 s, each try said on stderr)
 * while the database cannot be reached, as PostgREST does; null when a signal stops the wait. A
 * server that refuses TLS, or a certificate it refuses, is not waited out: that is the URL's fault.
 */
async function untilReachable<T>(start: () => Promise<T>, stopping: Promise<string>, log: ServeLog): Promise<T | null> {
  let stopped = false;
  void stopping.then(() => (stopped = true));
  for (let attempt = 0; ; attempt++) {
    try {
      return await start();
    } catch (err) {
      // down or starting (08…, 57P03); a wrong database name or password is not waited out
      const e = err as { connection?: string; code?: string; message?: string };
      if (e.connection !== 'unreachable' || !/^(08|57P03)/.test(e.code ?? '') || /SSL|certificate/i.test(e.message ?? '') || stopped) throw err;
      const ms = Math.min(500 * 2 ** attempt, MAX_START_RETRY_MS);
      log.note(`the database cannot be reached (${(err as Error).message}): trying again in ${ms / 1000} s`, { retryInSeconds: ms / 1000 });
      await Promise.race([new Promise((r) => setTimeout(r, ms)), stopping]);
      if (stopped) return null;
    }
  }
}

type ServerModule = Awaited<ReturnType<typeof loadServer>>;
type Count = (flag: string, text: string | undefined) => number | undefined;

/** What the settled settings come to: the server's start options, and what serving needs besides. */
interface ServePlan {
  start: StartOptions & { port: number };
  workers: number;
  databaseUrl: string | undefined;
  dataDir: string | undefined;
}

/** `jwt-secret = "@FILE"` as PostgREST reads it: the secret is that file's text (read again on SIGUSR2, so a key can be rotated). */
function secretOf(value: string | undefined): string | undefined {
  if (!value?.startsWith('@')) return value;
  try {
    return readFileSync(value.slice(1), 'utf8').replace(/\s+$/, '');
  } catch (err) {
    throw new UsageError(`the JWT secret file ${value.slice(1)} cannot be read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

/** The PostgreSQL settings: pool size and wait (exit 2 for values that cannot serve), and who requests run as. */
function databasePlan(opts: ServeOptions, count: Count, databaseUrl: string | undefined, workers: number) {
  const dbPool = count('--db-pool', opts.dbPool);
  const acquire = count('--db-pool-acquisition-timeout', opts.dbPoolAcquisitionTimeout);
  const dbRoles = onOff('--db-roles', opts.dbRoles ?? 'off');
  if (!databaseUrl && (dbPool !== undefined || acquire !== undefined || dbRoles)) {
    throw new UsageError(`${dbRoles ? '--db-roles' : dbPool !== undefined ? '--db-pool' : '--db-pool-acquisition-timeout'} needs --database-url: the embedded catalog has no pool and no roles`);
  }
  if (dbPool === 0 || acquire === 0) throw new UsageError(`${dbPool === 0 ? '--db-pool' : '--db-pool-acquisition-timeout'} must be at least 1`);
  if (dbPool !== undefined && dbPool < workers) throw new UsageError(`--db-pool ${dbPool} is less than --workers ${workers}: the pool is shared out among the workers, and each needs a connection`);
  if (opts.dbAnonRole && !dbRoles) throw new UsageError('--db-anon-role needs --db-roles on: without it requests run as catalog\'s own roles (anon, reader, editor, admin)', 'add --db-roles on (db-roles = "on" in the config file) to run each request as its PostgreSQL role');
  if (dbRoles && !opts.jwtSecret && !opts.dbAnonRole) throw new UsageError('--db-roles without --jwt-secret runs every request as --db-anon-role: give one, or a JWT secret');
  return { dbPool, dbPoolAcquisitionTimeoutMs: acquire === undefined ? undefined : acquire * 1000, dbRoles, dbAnonRole: opts.dbAnonRole };
}

/** Reads and checks the settled settings (exit 2 for a value or a combination that cannot serve). */
function servePlan(opts: ServeOptions, ctx: Context, count: Count, server: ServerModule): ServePlan {
  let corsOrigins: string[] | undefined;
  try {
    corsOrigins = opts.corsOrigins === undefined ? undefined : server.parseCorsOrigins(opts.corsOrigins);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  if (opts.data && opts.databaseUrl) throw new UsageError('give --data or --database-url, not both');
  const port = count('--port', opts.port ?? '3000') as number;
  if (port > 65535) throw new UsageError(`--port must be at most 65535, not ${port}`);
  const databaseUrl = opts.databaseUrl ?? ctx.env.CATALOG_DATABASE_URL;
  const maxRows = count('--max-rows', opts.maxRows);
  if (maxRows === 0) throw new UsageError('--max-rows must be at least 1');
  const statementTimeoutMs = count('--statement-timeout', opts.statementTimeout);
  if (statementTimeoutMs && !databaseUrl) throw new UsageError('--statement-timeout needs --database-url: the embedded catalog cannot cancel a running statement');
  const workers = count('--workers', opts.workers ?? '1') as number;
  if (workers < 1) throw new UsageError('--workers must be at least 1');
  if (workers > 1 && !databaseUrl) throw new UsageError('--workers needs --database-url: the embedded catalog is held by one process');
  const adminPort = count('--admin-port', opts.adminPort);
  if (adminPort !== undefined && adminPort > 65535) throw new UsageError(`--admin-port must be at most 65535, not ${adminPort}`);
  if (adminPort !== undefined && adminPort !== 0 && adminPort === port) throw new UsageError('--admin-port must differ from --port');
  const dataDir = databaseUrl ? undefined : opts.data ?? ctx.paths.dataDir;
  const start = {
    port,
    adminPort,
    host: opts.host ?? '127.0.0.1',
    dataDir,
    databaseUrl,
    schema: databaseUrl ? opts.dbSchema ?? (ctx.env.CATALOG_DB_SCHEMA || undefined) : undefined,
    jwtSecret: secretOf(opts.jwtSecret ?? (ctx.env.CATALOG_JWT_SECRET || undefined)),
    jwtAud: opts.jwtAud || undefined,
    jwtRoleClaimKey: opts.jwtRoleClaimKey,
    ...databasePlan(opts, count, databaseUrl, workers),
    maxBodyBytes: count('--max-body', opts.maxBody),
    maxRows,
    statementTimeoutMs,
    aggregates: onOff('--aggregates', opts.aggregates ?? 'on'),
    corsOrigins,
  };
  const secretProblem = server.jwtSecretProblem(start.jwtSecret);
  if (secretProblem) throw new UsageError(secretProblem);
  return { start, workers, databaseUrl, dataDir };
}

/** The settings in force and what they come to; `settle()` reads them again (SIGUSR2). */
interface Settled {
  opts: ServeOptions;
  plan: ServePlan;
  /** `--log-level` and `--log-format`, applied once the settings are taken up. */
  logging: ReturnType<typeof logSettings>;
}

/** The settings' names whose values differ (names only: values may be secrets). */
function changedSettings(a: ServeSettings, b: ServeSettings, reloadable: boolean): string[] {
  return SERVE_SETTINGS.filter((s) => Boolean(s.reload) === reloadable && a[s.key] !== b[s.key]).map((s) => s.flag);
}

/** Starts the service, prints its URL on stderr, and closes it cleanly on SIGINT/SIGTERM. */
export async function runServe(flags: ServeOptions, ctx: Context): Promise<void> {
  // Loaded when the command runs: defining it (for `catalog --help`) must stay cheap.
  const [{ count }, { settleServe, dumpServeConfig, secretExposure }, server] = await Promise.all([import('../flags/query.js'), import('./serve-config.js'), loadServer()]);
  const settled = async () => ({ ...flags, ...(await settleServe(flags, ctx.env, flags.config)) }) as ServeOptions;
  if (flags.dumpConfig) {
    await ctx.io.stdout.write(dumpServeConfig(await settled()));
    return;
  }
  const log = new ServeLog((line) => void ctx.io.stderr.write(`${line}\n`), () => ctx.clock.now(), Boolean(ctx.globals.verbose), Boolean(ctx.globals.quiet));
  // every line the service writes goes through `log`, whatever --log-format says now or after a reload
  const lines = { log: (line: string) => log.error(line), onRequest: (r: Parameters<ServeLog['request']>[0]) => log.request(r) };
  const settle = async (): Promise<Settled> => {
    const opts = await settled();
    const logging = logSettings(opts.logLevel, opts.logFormat);
    const plan = servePlan(opts, ctx, count, server);
    // the keys imported and the claim path read now: a broken one is exit 2 before anything listens
    await server.authOf(plan.start).catch((err: Error) => Promise.reject(new UsageError(err.message)));
    plan.start = { ...plan.start, ...lines };
    return { opts, plan, logging };
  };
  const first = await settle();
  log.configure(first.logging.level, first.logging.json);
  ctx.onWarning((w) => log.warn(`${w.name}: ${w.message}`)); // a library's warning is a log line too (JSON under --log-format json)
  const exposed = secretExposure(flags, flags.config, first.opts);
  if (exposed) log.warn(exposed);
  if (first.plan.workers > 1) await serveWorkers(first, settle, log, ctx);
  else await serveHere(first, settle, count('--idle-exit', first.opts.idleExit), log, ctx);
}

/** A running service's side of the reload signals (in one process, or in each worker). */
interface Reloading {
  reconfigure?(next: StartOptions): Promise<void>;
  reloadSchema?(): Promise<number>;
}

/**
 * SIGUSR1 reloads the schema description, SIGUSR2 and SIGHUP the configuration, one at a time;
 * a failure is logged and leaves the service as it was. Returns the function that stops listening.
 */
function reloadOnSignals(running: Reloading, current: Settled, settle: () => Promise<Settled>, log: ServeLog, ctx: Context, worker?: number): () => void {
  const who = worker === undefined ? '' : `worker ${worker}: `;
  const tag = worker === undefined ? {} : { worker };
  let queue = Promise.resolve();
  const reload = async (signal: string) => {
    if (signal === 'SIGUSR1') {
      try {
        const version = await running.reloadSchema?.();
        log.note(`${who}SIGUSR1: schema description reloaded (catalog schema version ${version})`, { signal, ...tag });
      } catch (err) {
        log.error(`${who}SIGUSR1: the schema description could not be reloaded (${(err as Error).message}); serving as before`);
      }
      return;
    }
    try {
      const next = await settle();
      await running.reconfigure?.(next.plan.start);
      log.configure(next.logging.level, next.logging.json);
      const changed = changedSettings(current.opts, next.opts, true);
      const restart = changedSettings(current.opts, next.opts, false);
      current = next;
      log.note(`${who}${signal}: configuration reloaded (${changed.length ? `changed: ${changed.join(', ')}` : 'nothing changed'})`, { signal, changed, ...tag });
      if (restart.length) log.warn(`${who}${signal}: ${restart.join(', ')} changed, which takes a restart: the running service keeps the value it started with`);
    } catch (err) {
      log.error(`${who}${signal}: the configuration was not reloaded (${(err as Error).message}); the one in force stays`);
    }
  };
  return ctx.onSignal(['SIGUSR1', 'SIGUSR2', 'SIGHUP'], (signal) => void (queue = queue.then(() => reload(signal))));
}

/** `--workers N`: a cluster of processes serving one PostgreSQL until a signal. */
async function serveWorkers(first: Settled, settle: () => Promise<Settled>, log: ServeLog, ctx: Context): Promise<void> {
  const { start, workers } = first.plan;
  const cluster = await loadCluster();
  // A forked worker re-runs this command line: it serves, reloads on the signals the primary passes on, and stops on SIGTERM.
  if (cluster.isClusterWorker()) {
    const running = await cluster.runClusterWorker(start);
    reloadOnSignals(running, first, settle, log, ctx, cluster.workerPid());
    return;
  }
  const handle = await cluster.startCluster(start, workers, (line) => log.note(line)).catch((err: Error) => Promise.reject(/^sslmode=/.test(err.message) ? new UsageError(err.message) : err));
  // Listening for the signal before saying where it serves: a SIGTERM right after must stop it cleanly.
  const stopping = ctx.waitForSignal();
  const relay = ctx.onSignal(['SIGUSR1', 'SIGUSR2', 'SIGHUP'], (signal) => void relayTo(handle, signal, settle, log));
  log.always(`Serving the catalog at ${handle.url} with ${workers} workers (PostgreSQL). Press Ctrl-C to stop.`, { url: handle.url, workers });
  if (handle.adminUrl) log.always(`Admin (/live, /ready, /metrics) at ${handle.adminUrl}`, { adminUrl: handle.adminUrl });
  const signal = await stopping;
  relay();
  log.note(`${signal}: stopping`, { signal });
  await handle.close();
}

/** The primary passes a signal on; a configuration that does not read is said once here, and not passed on. */
async function relayTo(handle: { relay(signal: NodeJS.Signals): number }, signal: string, settle: () => Promise<Settled>, log: ServeLog): Promise<void> {
  if (signal !== 'SIGUSR1') {
    try {
      const next = await settle();
      log.configure(next.logging.level, next.logging.json); // the primary's own lines
    } catch (err) {
      log.error(`${signal}: the configuration was not reloaded (${(err as Error).message}); the one in force stays`);
      return;
    }
  }
  const n = handle.relay(signal as NodeJS.Signals);
  log.note(`${signal}: passed on to ${n} workers`, { signal, workers: n });
}

/** One process serving until a signal, `--idle-exit` seconds without a request, or its embedded store dying. */
async function serveHere(first: Settled, settle: () => Promise<Settled>, idleSeconds: number | undefined, log: ServeLog, ctx: Context): Promise<void> {
  const { start: startOptions, databaseUrl, dataDir } = first.plan;
  const port = startOptions.port;
  if (idleSeconds === 0) throw new UsageError('--idle-exit must be at least 1 second');
  let idleNow: (s: 'idle') => void = () => {};
  const idled = new Promise<'idle'>((r) => (idleNow = r));
  const control = await ctx.serverControl();
  // A background holder a command left warm gives the directory up to a serve someone starts.
  if (dataDir && !idleSeconds && control.stopBackgroundHolder) {
    const holder = control.readServeLock(dataDir);
    if (holder && (await control.stopBackgroundHolder(dataDir))) log.note(`stopped the background holder (process ${holder.pid}) to serve ${dataDir} here`);
  }
  // The background holder (--idle-exit, what commands start) serves only its owner's commands (src/holder/).
  const background = idleSeconds ? (await loadHolder()).backgroundServeOptions(idleSeconds, ctx.version, () => idleNow('idle')) : {};
  const stopping = ctx.waitForSignal();
  // storeThread: an embedded catalog's PGlite on its own thread, beside the service's (store/pglite-remote.ts)
  const start = () =>
    control.startServer({ ...startOptions, ...background, storeThread: true }).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'EADDRINUSE') throw new Error(`port ${port} on ${startOptions.host} is already in use: choose another with --port`);
      if (/^refusing|already served|is held by|^sslmode=/.test(err.message)) throw new UsageError(err.message, /^sslmode=/.test(err.message) ? undefined : 'one process holds an embedded catalog: stop that one, or give this one another --data');
      throw err;
    });
  const server = await untilReachable(start, stopping, log);
  if (!server) return log.note(`${await stopping}: stopping`);
  const stopReloading = reloadOnSignals(server as Reloading, first, settle, log, ctx);
  log.always(`Serving the catalog at ${server.url} (${databaseUrl ? 'PostgreSQL' : `data in ${dataDir}`}). Press Ctrl-C to stop.`, { url: server.url });
  const adminUrl = (server as { adminUrl?: string }).adminUrl;
  if (adminUrl) log.always(`Admin (/live, /ready, /metrics) at ${adminUrl}`, { adminUrl });
  // a store that died (PGlite aborted after a disk or I/O fault) stops the serve: the lock goes, and the next command opens the catalog afresh
  const died = server.store?.died?.then((err: Error) => `died: ${err.message}`) ?? new Promise<never>(() => {});
  const signal = await Promise.race([stopping, idled, died]);
  stopReloading();
  log.note(signal === 'idle' ? `no request for ${idleSeconds} s: stopping` : signal.startsWith('died: ') ? `the embedded catalog's engine failed (${signal.slice(6)}): stopping` : `${signal}: stopping`);
  await server.close();
  if (signal.startsWith('died: ')) throw new Error(`the embedded catalog's engine failed (${signal.slice(6)}); it was stopped, and opens afresh on the next command`);
}
