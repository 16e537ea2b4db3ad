import { Command } from 'commander';
import type { Context } from '../context.js';
import { UsageError } from '../errors.js';
import { loadCluster, loadHolder, loadServer, type StartOptions } from '../embedded.js';
import { SERVE_SETTINGS, settingOption, type ServeSettings } from './serve-settings.js';
import { examples } from './shared.js';
import { booleanWord } from '../../schema/codecs.js';

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
    .option('--config <file>', 'read settings from a YAML or JSON file (port: 8080, database-url: …); flags and CATALOG_* variables win over it')
    .option('--dump-config', 'print the settings in force (flags, CATALOG_* variables, --config file, defaults) as a config file, secrets redacted, and exit')
    .option('--idle-exit <seconds>', 'stop after this many seconds without a request (the background holder commands start uses it)')
    .action(async (opts: ServeOptions) => runServe(opts, ctx))
    .addHelpText('after', `${EMBEDDED_NOTE}\n\nEvery setting also comes from its CATALOG_* variable (named after its flag, shown above) or a\n--config file (YAML or JSON): a flag wins, then the variable, then the file. --dump-config prints\nwhat is in force.\n`);
  return examples(cmd, [
    'catalog serve',
    'catalog serve --port 8080 --data ./catalog-data',
    'catalog serve --host 0.0.0.0 --workers 2 --database-url postgres://catalog@db/catalog --jwt-secret "$SECRET"',
  ]);
}

/** An on|off flag's value (also true/false, yes/no, 1/0); anything else is exit 2 naming the flag. */
function onOff(flag: string, value: string): boolean {
  // the boolean column type's words (src/schema/codecs.ts), so a flag reads as a cell does
  const v = booleanWord(value);
  if (v !== null) return v;
  throw new UsageError(`${flag} must be on or off, not ${JSON.stringify(value)}`);
}

const LOG_LEVELS = ['crit', 'error', 'warn', 'info'] as const;

/** What the request log says of one request (server/listen.ts's `onRequest`). */
interface RequestLine {
  method: string;
  path: string;
  status: number;
  ms: number;
  bytes: number;
}

/**
 * The service's log on stderr (`--log-level`, `--log-format`), as PostgREST's `log-level`: at
 * `error` and above, internal errors and lost database connections (before: only with -v); at
 * `info`, also one line per request (method, path, status, ms, bytes).
 */
function serveLog(opts: ServeOptions, ctx: Context): { log?: (line: string) => void; onRequest?: (r: RequestLine) => void } {
  const level = (opts.logLevel ?? 'error').toLowerCase();
  if (!(LOG_LEVELS as readonly string[]).includes(level)) throw new UsageError(`--log-level must be one of ${LOG_LEVELS.join(', ')}, not '${opts.logLevel}'`);
  const format = (opts.logFormat ?? 'text').toLowerCase();
  if (format !== 'text' && format !== 'json') throw new UsageError(`--log-format must be text or json, not '${opts.logFormat}'`);
  const rank = LOG_LEVELS.indexOf(level as (typeof LOG_LEVELS)[number]);
  const write = (fields: Record<string, unknown>, text: string) =>
    void ctx.io.stderr.write(`${format === 'json' ? JSON.stringify({ time: new Date(ctx.clock.now()).toISOString(), ...fields }) : text}\n`);
  return {
    ...(rank >= 1 || ctx.globals.verbose ? { log: (line: string) => write({ level: 'error', message: line }, line) } : {}),
    ...(rank >= 3 ? { onRequest: (r) => write({ level: 'info', ...r }, `${r.method} ${r.path} ${r.status} ${r.ms} ms ${r.bytes} bytes`) } : {}),
  };
}

/** The longest pause between two tries to reach a database that is down at start. */
const MAX_START_RETRY_MS = 10_000;

/**
 * Starts the service, trying again with backoff (0.5 s doubling to 10 s, each try said on stderr)
 * while the database cannot be reached, as PostgREST does; null when a signal stops the wait.
 */
async function untilReachable<T>(start: () => Promise<T>, stopping: Promise<string>, ctx: Context): Promise<T | null> {
  let stopped = false;
  void stopping.then(() => (stopped = true));
  for (let attempt = 0; ; attempt++) {
    try {
      return await start();
    } catch (err) {
      // down or starting (08…, 57P03); a wrong database name or password is not waited out
      const e = err as { connection?: string; code?: string };
      if (e.connection !== 'unreachable' || !/^(08|57P03)/.test(e.code ?? '') || stopped) throw err;
      const ms = Math.min(500 * 2 ** attempt, MAX_START_RETRY_MS);
      await ctx.note(`the database cannot be reached (${(err as Error).message}): trying again in ${ms / 1000} s`);
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
  const maxBodyBytes = count('--max-body', opts.maxBody);
  const databaseUrl = opts.databaseUrl ?? ctx.env.CATALOG_DATABASE_URL;
  const maxRows = count('--max-rows', opts.maxRows);
  if (maxRows === 0) throw new UsageError('--max-rows must be at least 1');
  const statementTimeoutMs = count('--statement-timeout', opts.statementTimeout);
  if (statementTimeoutMs && !databaseUrl) throw new UsageError('--statement-timeout needs --database-url: the embedded catalog cannot cancel a running statement');
  const dataDir = databaseUrl ? undefined : opts.data ?? ctx.paths.dataDir;
  const aggregates = onOff('--aggregates', opts.aggregates ?? 'on');
  const workers = count('--workers', opts.workers ?? '1') as number;
  if (workers < 1) throw new UsageError('--workers must be at least 1');
  if (workers > 1 && !databaseUrl) throw new UsageError('--workers needs --database-url: the embedded catalog is held by one process');
  const adminPort = count('--admin-port', opts.adminPort);
  if (adminPort !== undefined && adminPort > 65535) throw new UsageError(`--admin-port must be at most 65535, not ${adminPort}`);
  if (adminPort !== undefined && adminPort !== 0 && adminPort === port) throw new UsageError('--admin-port must differ from --port');
  const start = {
    port,
    adminPort,
    host: opts.host ?? '127.0.0.1',
    dataDir,
    databaseUrl,
    schema: databaseUrl ? opts.dbSchema ?? (ctx.env.CATALOG_DB_SCHEMA || undefined) : undefined,
    jwtSecret: opts.jwtSecret ?? (ctx.env.CATALOG_JWT_SECRET || undefined),
    maxBodyBytes,
    maxRows,
    statementTimeoutMs,
    aggregates,
    corsOrigins,
    ...serveLog(opts, ctx),
  };
  const secretProblem = server.jwtSecretProblem(start.jwtSecret);
  if (secretProblem) throw new UsageError(secretProblem);
  return { start, workers, databaseUrl, dataDir };
}

/** Starts the service, prints its URL on stderr, and closes it cleanly on SIGINT/SIGTERM. */
export async function runServe(flags: ServeOptions, ctx: Context): Promise<void> {
  // Loaded when the command runs: defining it (for `catalog --help`) must stay cheap.
  const [{ count }, { settleServe, dumpServeConfig }, server] = await Promise.all([import('../flags/query.js'), import('./serve-config.js'), loadServer()]);
  const opts: ServeOptions = { ...flags, ...(await settleServe(flags, ctx.env, flags.config)) };
  if (flags.dumpConfig) {
    await ctx.io.stdout.write(dumpServeConfig(opts));
    return;
  }
  const plan = servePlan(opts, ctx, count, server);
  if (plan.workers > 1) await serveWorkers(plan, ctx);
  else await serveHere(plan, count('--idle-exit', opts.idleExit), ctx);
}

/** `--workers N`: a cluster of processes serving one PostgreSQL until a signal. */
async function serveWorkers({ start, workers }: ServePlan, ctx: Context): Promise<void> {
  const cluster = await loadCluster();
  // A forked worker re-runs this command line: it serves, and the primary owns the signals.
  if (cluster.isClusterWorker()) {
    await cluster.runClusterWorker(start);
    return;
  }
  const handle = await cluster.startCluster(start, workers, (line) => void ctx.note(line));
  // Listening for the signal before saying where it serves: a SIGTERM right after must stop it cleanly.
  const stopping = ctx.waitForSignal();
  await ctx.io.stderr.write(`Serving the catalog at ${handle.url} with ${workers} workers (PostgreSQL). Press Ctrl-C to stop.\n`);
  const signal = await stopping;
  await ctx.note(`${signal}: stopping`);
  await handle.close();
}

/** One process serving until a signal, `--idle-exit` seconds without a request, or its embedded store dying. */
async function serveHere({ start: startOptions, databaseUrl, dataDir }: ServePlan, idleSeconds: number | undefined, ctx: Context): Promise<void> {
  const port = startOptions.port;
  if (idleSeconds === 0) throw new UsageError('--idle-exit must be at least 1 second');
  let idleNow: (s: 'idle') => void = () => {};
  const idled = new Promise<'idle'>((r) => (idleNow = r));
  const control = await ctx.serverControl();
  // A background holder a command left warm gives the directory up to a serve someone starts.
  if (dataDir && !idleSeconds && control.stopBackgroundHolder) {
    const holder = control.readServeLock(dataDir);
    if (holder && (await control.stopBackgroundHolder(dataDir))) await ctx.note(`stopped the background holder (process ${holder.pid}) to serve ${dataDir} here`);
  }
  // The background holder (--idle-exit, what commands start) serves only its owner's commands (src/holder/).
  const background = idleSeconds ? (await loadHolder()).backgroundServeOptions(idleSeconds, ctx.version, () => idleNow('idle')) : {};
  const stopping = ctx.waitForSignal();
  const start = () =>
    control.startServer({ ...startOptions, ...background }).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'EADDRINUSE') throw new Error(`port ${port} on ${startOptions.host} is already in use: choose another with --port`);
      if (/^refusing|already served|is held by/.test(err.message)) throw new UsageError(err.message, 'one process holds an embedded catalog: stop that one, or give this one another --data');
      throw err;
    });
  const server = await untilReachable(start, stopping, ctx);
  if (!server) return;
  await ctx.io.stderr.write(`Serving the catalog at ${server.url} (${databaseUrl ? 'PostgreSQL' : `data in ${dataDir}`}). Press Ctrl-C to stop.\n`);
  const adminUrl = (server as { adminUrl?: string }).adminUrl;
  if (adminUrl) await ctx.io.stderr.write(`Admin (/live, /ready, /metrics) at ${adminUrl}\n`);
  // a store that died (PGlite aborted after a disk or I/O fault) stops the serve: the lock goes, and the next command opens the catalog afresh
  const died = server.store?.died?.then((err: Error) => `died: ${err.message}`) ?? new Promise<never>(() => {});
  const signal = await Promise.race([stopping, idled, died]);
  await ctx.note(signal === 'idle' ? `no request for ${idleSeconds} s: stopping` : signal.startsWith('died: ') ? `the embedded catalog's engine failed (${signal.slice(6)}): stopping` : `${signal}: stopping`);
  await server.close();
  if (signal.startsWith('died: ')) throw new Error(`the embedded catalog's engine failed (${signal.slice(6)}); it was stopped, and opens afresh on the next command`);
}
