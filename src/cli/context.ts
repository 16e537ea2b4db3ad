import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { isatty } from 'node:tty';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import type { ClientOptions, ClientRequest, ClientResponse } from '../client/client.js';
import type { ServiceClient, Transport } from '../client/transport.js';
import { type IO, nodeOutput } from '../io/streams.js';
import type { Pager } from '../io/pager.js';
import { type Prompter, terminalPrompter } from '../io/prompt.js';
import { startSpinner } from '../io/spinner.js';
import { style, type Style } from '../io/style.js';
import { REMOVED_FIELDS } from '../schema/catalog.js';
import type { HereEngine, HolderAddress, HolderControl, StartedHolder } from '../holder/holder.js';
import type { Door, DoorOptions, DoorRequest } from '../holder/door.js';
import type { ServeInProcess } from '../holder/in-process-client.js';
import { HandBack } from '../holder/hand-back.js';
import { loadHolder, loadPGlite, loadServer } from './embedded.js';
import { type EffectiveConfig, readConfigFile, resolveConfig } from './config.js';
import { UsageError } from './errors.js';
import { type Paths, resolvePaths } from './paths.js';
import type { SchemaModel, TableDef } from '../schema/model.js';

/**
 * The home directory, or /nonexistent (Debian's home for users without one) for a user with
 * neither HOME nor a passwd entry (a container's arbitrary uid), where os.homedir() throws: the
 * commands that need no home (XDG_* set, --url) still run, the others fail on a path that says why.
 */
function homeOrNowhere(): string {
  try {
    return homedir();
  } catch {
    return '/nonexistent';
  }
}

/** The global flags, as commander parses them on the root program. */
export interface GlobalOptions {
  url?: string;
  token?: string;
  header?: string[];
  profile?: string;
  output?: string;
  dryRun?: boolean;
  verbose?: boolean;
  quiet?: boolean;
  /** false with --no-color. */
  color?: boolean;
  refreshSchema?: boolean;
  /** Seconds to wait for an answer (`--timeout`; env CATALOG_TIMEOUT). */
  timeout?: string;
}

/** A running service the command talks to. */
export interface Endpoint {
  url: string;
  /** The service as a Transport (send, stream) with `request` that throws ServiceError. */
  client: ServiceClient;
}

/** The slice of src/server/listen.ts the context needs (loaded lazily; injectable in tests): see src/holder/holder.ts. */
export type ServerControl = HolderControl;
export type { StartedHolder };

export interface ContextDeps {
  io: IO;
  env: Record<string, string | undefined>;
  home: string;
  clock?: { now(): number };
  prompter?: Prompter;
  /** Resolves with the signal's name when the process is asked to stop (serve). */
  waitForSignal?: () => Promise<string>;
  /** Calls `fn` on each of these signals until the returned function is called (serve's SIGUSR1, SIGUSR2, SIGHUP). */
  onSignal?: (signals: readonly string[], fn: (signal: string) => void) => () => void;
  /** Hands the process's warnings (Node's, a library's) to `fn` instead of Node's own printing, until the returned function is called (serve's log). */
  onWarning?: (fn: (warning: Error) => void) => () => void;
  server?: ServerControl;
  version?: string;
  /**
   * Whether short commands may switch this process's WebAssembly compiler to baseline-only before
   * opening the embedded catalog (see src/store/pglite-engine.ts). A V8 flag is process-wide, so
   * only the real command-line process says yes; contexts inside other programs (tests) leave V8
   * alone.
   */
  ownsProcess?: boolean;
  /**
   * The service as a Transport instead of a URL or the embedded catalog: commands then run in
   * process without a socket (`appTransport(createApp({ store }))`, as the server's tests do).
   */
  transport?: Transport;
  /**
   * Starts `catalog serve --data DIR --port 0 --idle-exit SECONDS` as a detached background
   * process (its output in DIR/catalog-holder.log). Only the real command-line process has it.
   */
  startHolder?: (dataDir: string, idleSeconds: number) => Promise<StartedHolder | null>;
  /** Starts `$PAGER` over the terminal (a real run); without it output goes straight to stdout. */
  pager?: () => Promise<Pager | null>;
  /**
   * The bundle's entry this process runs (scripts/bundle.mjs; a real run of the bundle only) and
   * how to run a command line a thin client hands over (main.ts's runHandedOver): with both, a
   * background holder this process becomes opens its command door (src/holder/door.ts).
   */
  bundle?: DoorOptions['bundle'];
  handOver?: (args: string[], ctx: Context) => Promise<number>;
  /**
   * This context is a command a thin client handed to the background holder (src/holder/door.ts):
   * it never opens or starts the catalog itself, and whatever it cannot do as the client's own
   * process would (see main.ts's runHandedOver) throws HandBack.
   */
  handedOver?: boolean;
  /**
   * A handed-over command's way to the holder's server in this process (RunningServer.serveInProcess)
   * and the URL it listens on: the command's requests to that URL are served here, without HTTP
   * (src/holder/in-process-client.ts).
   */
  inProcess?: { url: string; serve: ServeInProcess };
}

/** How long a background holder keeps the embedded catalog open without a request, unless CATALOG_KEEP_WARM says. */
export const KEEP_WARM_SECONDS = 300;

export const DEFAULT_SERVE_URL = 'http://127.0.0.1:3000';

/**
 * Everything a command needs: IO with terminal flags, environment, paths, clock, prompts, the
 * effective configuration, and — created on first use — the endpoint (HTTP client, embedded
 * catalog) and the schema. Tests build one with buffers; nothing here reads globals.
 */
export class Context {
  readonly io: IO;
  readonly env: Record<string, string | undefined>;
  readonly clock: { now(): number };
  readonly paths: Paths;
  readonly prompter: Prompter;
  readonly waitForSignal: () => Promise<string>;
  readonly onSignal: (signals: readonly string[], fn: (signal: string) => void) => () => void;
  readonly onWarning: (fn: (warning: Error) => void) => () => void;
  readonly version: string;
  /** Set by main from the root program's options before a command runs. */
  globals: GlobalOptions = {};
  /**
   * Set by main for commands that move many rows (import, export, seed, list --all): the embedded catalog
   * then runs with V8's optimizing WebAssembly compiler, which pays off over seconds of work.
   */
  bulk = false;
  private readonly deps: ContextDeps;
  private configP: Promise<EffectiveConfig> | null = null;
  private endpointP: Promise<Endpoint> | null = null;
  /** Whether the embedded catalog is reached at a temporary address (this process or a background holder serves it). */
  private temporaryAddress: () => boolean = () => false;
  private schemaP: Promise<SchemaModel> | null = null;
  /** A background holder warmUpEmbedded started before the command line was parsed (connect waits for it). */
  private earlyHolder: Promise<StartedHolder | null> | null = null;
  private readonly closers: Array<() => Promise<void>> = [];
  /** What closes after everything else: the embedded catalog this process holds. */
  private readonly lastClosers: Array<() => Promise<void>> = [];

  constructor(deps: ContextDeps) {
    this.deps = deps;
    this.io = deps.io;
    this.env = deps.env;
    this.clock = deps.clock ?? { now: () => Date.now() };
    this.paths = resolvePaths(deps.env, deps.home);
    this.prompter = deps.prompter ?? { confirm: () => Promise.reject(new Error('no terminal to ask on')) };
    this.waitForSignal = deps.waitForSignal ?? (() => new Promise(() => {}));
    this.onSignal = deps.onSignal ?? (() => () => {});
    this.onWarning = deps.onWarning ?? (() => () => {});
    this.version = deps.version ?? '0.0.0';
  }

  /** A pager over the terminal for long output (null: none configured, not a real terminal, or it did not start). */
  async pager(): Promise<Pager | null> {
    if (!this.io.stdout.isTTY || !this.deps.pager) return null;
    return this.deps.pager();
  }

  /** Applies the global flags (colour first, so errors in the rest are drawn right). */
  setGlobals(g: GlobalOptions): void {
    this.globals = g;
    if (g.color === false) {
      this.io.stdout.color = false;
      this.io.stderr.color = false;
    }
  }

  get dryRun(): boolean {
    return Boolean(this.globals.dryRun);
  }

  /** Styling for stderr (messages) or stdout (data). */
  style(stream: 'stdout' | 'stderr' = 'stderr'): Style {
    return style(this.io[stream].color);
  }

  /** A message for people (progress, counts): stderr, silenced by -q. */
  async note(message: string): Promise<void> {
    if (!this.globals.quiet) await this.io.stderr.write(`${message}\n`);
  }

  /** A warning: stderr, shown even with -q. */
  async warn(message: string): Promise<void> {
    await this.io.stderr.write(`${this.style().yellow('warning:')} ${message}\n`);
  }

  /** The effective configuration (flags > environment > profile > default), read once. */
  config(): Promise<EffectiveConfig> {
    this.configP ??= (async () => {
      const file = await readConfigFile(this.paths.configFile);
      return resolveConfig({ flags: this.globals, env: this.env, file, configFile: this.paths.configFile });
    })();
    return this.configP;
  }

  /**
   * Called before the command line is even parsed when it will most likely open the embedded
   * catalog (a guess from its words), so that the catalog's start overlaps loading and parsing the
   * command. With a background holder (CATALOG_KEEP_WARM, the default): starts it now when the
   * catalog exists and nobody holds it, and the command then waits for it (src/holder/holder.ts,
   * startEarly); this process compiles no WebAssembly, which would only take a core from the
   * holder's start. Without one: starts compiling PGlite's WebAssembly on V8's background threads.
   * Only when nothing else can name a service (no CATALOG_URL, no profile, no config file) and no
   * `catalog serve` holds the data directory. A wrong guess costs background CPU, or a holder that
   * stops when idle, never a different result.
   */
  warmUpEmbedded(bulk: boolean): void {
    if (!this.deps.ownsProcess || this.env.CATALOG_URL || this.env.CATALOG_PROFILE || existsSync(this.paths.configFile)) return;
    let keepWarm: number;
    try {
      keepWarm = this.keepWarmSeconds();
    } catch {
      return; // the command says what is wrong with it, once it opens the catalog
    }
    if (keepWarm > 0 && this.deps.startHolder) {
      this.earlyHolder = loadHolder()
        .then((holder) => holder.startEarly(this.paths.dataDir, { keepWarmSeconds: keepWarm, spawn: (dir, seconds) => this.spawnHolder(dir, seconds) }))
        .catch(() => null);
      return;
    }
    void (async () => {
      const control = await this.holderControl();
      if (control.readServeLock(this.paths.dataDir)) return;
      const pglite = await loadPGlite();
      if (!bulk) pglite.baselineWasmOnly();
      await pglite.prepareEngine();
    })().catch(() => {});
  }

  /** The service to talk to: --url / CATALOG_URL / profile, else the embedded catalog. */
  endpoint(): Promise<Endpoint> {
    this.endpointP ??= this.openEndpoint();
    return this.endpointP;
  }

  /** Whether this is a command a thin client handed to the background holder (ContextDeps.handedOver). */
  get handedOver(): boolean {
    return Boolean(this.deps.handedOver);
  }

  /**
   * The service's start and lock functions (src/server/listen.ts, loaded only when needed). In a
   * real run of the bundle, a background holder (`serve --idle-exit`) it starts opens its command
   * door too, which closes before the server does.
   */
  async serverControl(): Promise<ServerControl> {
    const control = this.deps.server ?? (await loadServer());
    const { bundle, handOver } = this.deps;
    if (!bundle || !handOver) return control;
    return {
      ...control,
      startServer: async (opts) => {
        const server = await control.startServer(opts);
        if (!opts.onIdle || !opts.private || !opts.dataDir) return server;
        const inProcess = server.serveInProcess ? { url: server.url, serve: server.serveInProcess } : undefined;
        const door = await this.openDoor(opts.dataDir, bundle, handOver, inProcess).catch(() => null);
        const close = server.close.bind(server);
        return Object.assign(server, { close: async () => (await door?.close(), close()) });
      },
    };
  }

  /**
   * The command door of the background holder serving `dataDir` (src/holder/door.ts): runs what
   * thin clients hand over, each in a context of its own, whose requests this process's server
   * serves in process (`inProcess`).
   */
  private async openDoor(dataDir: string, bundle: DoorOptions['bundle'], handOver: NonNullable<ContextDeps['handOver']>, inProcess: ContextDeps['inProcess']): Promise<Door | null> {
    const { openDoor } = await import('../holder/door.js');
    if (inProcess) await import('../holder/in-process-client.js');
    const run = (req: DoorRequest, io: IO) => {
      const home = req.env.HOME;
      if (!home?.startsWith('/')) throw new HandBack('no home');
      const ctx = new Context({ io, env: req.env, home, version: this.version, handedOver: true, inProcess, prompter: { confirm: () => Promise.reject(new HandBack('a question')) } });
      return handOver(req.args, ctx);
    };
    return openDoor({ dataDir, bundle, env: this.env, run: async (req, io) => run(req, io) });
  }

  /**
   * What finding the embedded catalog's holder needs: the lock's readers (src/holder/lock.ts),
   * and the server (src/server/listen.ts, its modules, node:http's server, node:crypto) loaded
   * only when this process opens the catalog itself, not on every command that finds a holder.
   */
  private async holderControl(): Promise<ServerControl> {
    if (this.deps.server) return this.deps.server;
    return (await loadHolder()).lockControl(async (opts) => (await loadServer()).startServer(opts));
  }

  private async openEndpoint(): Promise<Endpoint> {
    if (this.deps.transport) {
      const { transportClient } = await import('../client/transport.js');
      const client = transportClient(this.deps.transport);
      return { url: client.url({ path: '' }), client };
    }
    const config = await this.config();
    const timeoutMs = this.timeoutMs();
    const { CatalogClient } = await import('../client/client.js');
    const { proxyFor } = await import('../client/proxy.js');
    const inProcess = this.deps.inProcess ? { ...this.deps.inProcess, ...(await import('../holder/in-process-client.js')) } : null;
    const makeClient = (url: string, route?: { headers: Record<string, string>; relocate: () => Promise<HolderAddress> }) => {
      const options: ClientOptions = {
        relocate: route?.relocate,
        routeHeaders: route?.headers,
        // the embedded catalog's holder is on loopback, which never goes through a proxy
        proxy: proxyFor(new URL(url), this.env),
        baseUrl: url,
        token: config.token?.value,
        headers: Object.fromEntries(config.headers.map((h) => [h.name, h.value])),
        userAgent: `catalog/${this.version}`,
        timeoutMs,
        onExchange: this.globals.verbose ? (line) => void this.io.stderr.write(`${this.style().dim(line)}\n`) : undefined,
      };
      // the embedded catalog's holder is this process (a handed-over command): served here, without HTTP
      const client = route && inProcess?.url === url ? new inProcess.InProcessClient(options, inProcess.serve) : new CatalogClient(options);
      this.closers.push(() => client.close());
      return client;
    };
    if (config.url) return { url: config.url.value, client: makeClient(config.url.value) };

    const dataDir = this.paths.dataDir;
    const control = await this.holderControl();
    if (this.dryRun) {
      const lock = control.readServeLock(dataDir);
      // a private holder's requests could not be sent with curl: they are shown for `catalog serve`
      const open = lock && !lock.key ? lock : null;
      if (!open) {
        const now = lock ? `only a private holder (process ${lock.pid}, for this user's commands) serves the embedded catalog in ${dataDir}` : `nothing serves the embedded catalog in ${dataDir} now`;
        await this.note(`${now}: these requests are for \`catalog serve\` at ${DEFAULT_SERVE_URL} (start it to send them), or give --url`);
      }
      const url = open?.url ?? DEFAULT_SERVE_URL;
      return { url, client: makeClient(url) };
    }
    const holder = await loadHolder();
    const connection = await holder.connect(dataDir, {
      control,
      version: this.version,
      keepWarmSeconds: this.keepWarmSeconds(),
      spawn: this.deps.startHolder ? (dir, seconds) => this.spawnHolder(dir, seconds) : undefined,
      started: this.earlyHolder ?? undefined,
      note: (message) => this.note(message),
      openHere: (start) => this.openHere(dataDir, start),
      client: (address, relocate) => makeClient(address.url, { headers: address.headers, relocate }),
    });
    // Closed after the client pools: nothing left for them to drain.
    this.lastClosers.push(() => connection.close());
    this.temporaryAddress = () => connection.temporary;
    return { url: connection.url, client: connection.client };
  }

  /** CATALOG_KEEP_WARM: seconds a background holder stays without a request (0: none is started). */
  private keepWarmSeconds(): number {
    const raw = this.env.CATALOG_KEEP_WARM;
    const seconds = raw === undefined || raw.trim() === '' ? KEEP_WARM_SECONDS : Number(raw);
    if (!Number.isFinite(seconds) || seconds < 0) {
      throw new UsageError(`CATALOG_KEEP_WARM needs a number of seconds (0: no background holder), not '${raw}'`);
    }
    return Math.ceil(seconds);
  }

  /** Starts a background holder (the real command-line process only), saying so on a terminal. */
  private async spawnHolder(dataDir: string, seconds: number): Promise<StartedHolder | null> {
    const started = (await this.deps.startHolder?.(dataDir, seconds)) ?? null;
    if (started && this.io.stderr.isTTY) {
      await this.note(this.style().dim(`A background process keeps the catalog open for later commands; it stops after ${seconds} s without one (CATALOG_KEEP_WARM=0: never start it)`));
    }
    return started;
  }

  /** Opens the embedded catalog in this process (`start` takes the lock and serves it), with a spinner and the engine set for the command. */
  private async openHere(dataDir: string, start: (engine: HereEngine) => Promise<HolderAddress | null>): Promise<HolderAddress | null> {
    // the background holder running a client's command is the holder: it never opens the catalog twice
    if (this.deps.handedOver) throw new HandBack('no holder');
    if (!existsSync(join(dataDir, 'PG_VERSION'))) await this.note(`Creating a new catalog in ${dataDir}`);
    const spinner = startSpinner(this.io.stderr, `Opening the catalog in ${dataDir}`);
    const short = Boolean(this.deps.ownsProcess) && !this.bulk;
    // Compiling PostgreSQL's WebAssembly now overlaps loading the server's modules.
    const pglite = await loadPGlite();
    if (short) pglite.baselineWasmOnly();
    pglite.useSmallBufferPool(short);
    void pglite.prepareEngine();
    try {
      // a bulk command's client and service then share no thread with PGlite
      return await start({ storeThread: !short });
    } finally {
      spinner.stop();
    }
  }

  /**
   * Whether this command serves  /**
   * Whether this command serves the embedded catalog itself, on a temporary port for its own
   * lifetime (then addresses it reports, such as the root description's host, are not ones to keep).
   */
  servesEmbeddedItself(): boolean {
    return this.temporaryAddress();
  }

  /** The request timeout from `--timeout` or CATALOG_TIMEOUT (seconds), or undefined for the client's default. */
  private timeoutMs(): number | undefined {
    const flag = this.globals.timeout;
    const raw = flag ?? this.env.CATALOG_TIMEOUT;
    if (raw === undefined || raw.trim() === '') return undefined;
    const seconds = Number(raw);
    if (!Number.isFinite(seconds) || seconds <= 0) {
      throw new UsageError(`${flag !== undefined ? '--timeout' : 'CATALOG_TIMEOUT'} needs a number of seconds greater than 0, not '${raw}'`);
    }
    return seconds * 1000;
  }

  /** The schema the command validates against: built in (embedded), cached per URL, or fetched. */
  schema(): Promise<SchemaModel> {
    this.schemaP ??= (async () => {
      const config = await this.config();
      // Loaded here, not at start-up: `--help` and commands without a schema never pay for them.
      const [{ loadSchema }, { versionWarning }] = await Promise.all([import('./schema/load.js'), import('./version-check.js')]);
      const model = await loadSchema({
        url: config.url?.value ?? null,
        cacheDir: this.paths.cacheDir,
        refresh: Boolean(this.globals.refreshSchema),
        offline: this.dryRun,
        fetch: async () => {
          const { client } = await this.endpoint();
          const res = await client.request({ method: 'GET', path: '/', headers: { accept: 'application/openapi+json, application/json;q=0.9' } });
          return JSON.parse(res.body) as Record<string, unknown>;
        },
      });
      // Once per service URL and version (remembered in the cache), not on every command.
      const warning = config.url ? versionWarning({ url: config.url.value, version: model.version, cacheDir: this.paths.cacheDir }) : null;
      if (warning) await this.warn(warning);
      return model;
    })();
    return this.schemaP;
  }

  /** One collection of the schema; a usage error naming the collections when it is missing. */
  async table(name: string): Promise<TableDef> {
    const schema = await this.schema();
    const t = schema.tables.get(name);
    if (!t) {
      throw new UsageError(`the service has no collection '${name}'`, `collections: ${[...schema.tables.keys()].sort().join(', ')}`);
    }
    return t;
  }

  /** Every collection the schema describes that takes writes (not `removals`): what import DIR, --sync, --ref and check take as the table model. */
  async tables(): Promise<TableDef[]> {
    return [...(await this.schema()).tables.values()].filter((t) => !t.readOnly);
  }

  /** Fields the interface removed from a collection (for friendlier errors). */
  removedFields(table: string): string[] {
    return REMOVED_FIELDS[table] ?? [];
  }

  /**
   * Sends a request, or with --dry-run prints it as a curl command on stdout and returns null.
   */
  async send(req: ClientRequest): Promise<ClientResponse | null> {
    const { client } = await this.endpoint();
    if (this.dryRun) {
      const { toCurl } = await import('../client/curl.js');
      await this.io.stdout.write(`${toCurl(client.url(req), req, client.headersFor(req))}\n`);
      return null;
    }
    // Slow answers get a spinner on a terminal (after a second); it is gone before any output.
    const spinner = this.globals.quiet ? null : startSpinner(this.io.stderr, `Waiting for ${req.method} ${req.path}`);
    try {
      return await client.request(req);
    } finally {
      spinner?.stop();
    }
  }

  /** Stops what the command started, in the order it was opened: HTTP pools, then the embedded catalog they talk to. */
  async close(): Promise<void> {
    for (const list of [this.closers, this.lastClosers]) {
      while (list.length) {
        const fn = list.shift() as () => Promise<void>;
        await fn().catch(() => {});
      }
    }
  }
}

/**
 * The context of a real run: process streams, environment, home, signals. The bundle's entry
 * (scripts/bundle.mjs) gives itself and main.ts's runHandedOver: see ContextDeps.bundle.
 */
export function systemContext(bundle: Pick<ContextDeps, 'bundle' | 'handOver'> = {}): Context {
  const env = process.env;
  const stdout = nodeOutput(process.stdout, env);
  // process.stdin is made on first use (a stream over the terminal, pipe or file: ~2 ms), and most
  // commands never read it: asked for when a command does.
  const stdin = () => process.stdin as Readable;
  return new Context({
    io: {
      stdin: {
        isTTY: isatty(0),
        get stream() {
          return stdin();
        },
      },
      stdout,
      stderr: nodeOutput(process.stderr, env),
    },
    env,
    home: homeOrNowhere(),
    prompter: { confirm: (message, defaultValue) => terminalPrompter(stdin(), process.stderr as Writable).confirm(message, defaultValue) },
    waitForSignal: () =>
      new Promise((resolve) => {
        const on = (sig: string) => () => resolve(sig);
        process.once('SIGINT', on('SIGINT'));
        process.once('SIGTERM', on('SIGTERM'));
      }),
    onSignal: (signals, fn) => {
      const handlers = signals.map((sig) => [sig, () => fn(sig)] as const);
      for (const [sig, h] of handlers) process.on(sig, h);
      return () => handlers.forEach(([sig, h]) => process.off(sig, h));
    },
    onWarning: (fn) => {
      // Node prints a warning through a listener of its own: taking that listener off is how it is rerouted
      const before = process.listeners('warning');
      process.removeAllListeners('warning');
      process.on('warning', fn);
      return () => {
        process.off('warning', fn);
        for (const l of before) process.on('warning', l);
      };
    },
    version: readVersion(),
    ownsProcess: true,
    startHolder: async (dataDir, idleSeconds) => {
      const bin = process.argv[1];
      return bin ? (await loadHolder()).spawnHolder(bin, dataDir, idleSeconds, env) : null;
    },
    pager: async () => {
      const { pagerCommand, startPager } = await import('../io/pager.js');
      const command = pagerCommand(env);
      return command ? startPager(command, env, stdout) : null;
    },
    ...bundle,
  });
}

function readVersion(): string {
  try {
    return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  } catch {
    return '0.0.0';
  }
}
