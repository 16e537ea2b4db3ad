import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Store } from '../store/store.js';
import type { App } from './app.js';
import { writeStream } from './stream-body.js';
import { acquireDirLock, currentHolder, directoryTag, type DirLock, HOLDER_HEADER, readHolder, stopBackgroundHolder, tightenModes } from '../holder/lock.js';
import { ApiError, DEFAULT_MAX_BODY, defaultMaxBody, payloadTooLarge } from './errors.js';
import type { Incoming } from './exchange.js';
import { newHolderKey, privateApp, privateRefusal } from '../holder/guard.js';
import { corsApp } from './cors.js';
import { buildAuth, type AuthSettings } from './auth.js';
import { secretShapeProblem } from './jwt-keys.js';
import type { Metrics, MetricsSnapshot } from './admin.js';
import { isLoopbackName } from '../shared/loopback.js';

export { parseCorsOrigins } from './cors.js';

export { currentHolder, DEFAULT_MAX_BODY, stopBackgroundHolder };

/** What `catalog serve` and the embedded default need to start a service. */
export interface StartOptions {
  port?: number;
  host?: string;
  /** PGlite data directory (the default store). */
  dataDir?: string;
  /**
   * Run the embedded store's PGlite on a thread of its own (store/pglite-remote.ts): what a service
   * that lives for many requests wants (`catalog serve --data`, the background holder), and a bulk
   * command that opens the catalog itself; a command that opens it for a moment does not.
   */
  storeThread?: boolean;
  /** PostgreSQL URL; wins over dataDir. */
  databaseUrl?: string;
  /** Schema for the PostgreSQL store (default public). */
  schema?: string;
  /** A passphrase, a JWK or JWK Set (JSON): PostgREST's jwt-secret. */
  jwtSecret?: string;
  /** PostgREST's jwt-aud: a token with `aud` must name it. */
  jwtAud?: string;
  /** PostgREST's jwt-role-claim-key (default `.role`). */
  jwtRoleClaimKey?: string;
  /** Run each request as its JWT's PostgreSQL role (`--db-roles`; PostgreSQL only). */
  dbRoles?: boolean;
  /** The PostgreSQL role of a request without a token, with `dbRoles` (PostgREST's db-anon-role). */
  dbAnonRole?: string;
  /** Most connections this process's PostgreSQL pool opens (default 10). */
  dbPool?: number;
  /** Longest a request waits for a pooled connection, in milliseconds (default 10 s): then 504 PGRST003. */
  dbPoolAcquisitionTimeoutMs?: number;
  maxBodyBytes?: number;
  /** Longest request target (path + query) accepted; longer ones get 414. Default 8 KiB. */
  maxUrlBytes?: number;
  /** Largest request line + headers node:http reads; more gets 431. Default 16 KiB. */
  maxHeaderBytes?: number;
  /** Longest wait for a request's line and headers, and longest silence within its body (slow-loris). Default 10 s. */
  receiveTimeoutMs?: number;
  /** Port of the admin server (`/live`, `/ready`, `/metrics`) on the same host; none when undefined. */
  adminPort?: number;
  /** Told of every answered request (the request log, `--log-level info`). */
  onRequest?: (r: RequestFigures) => void;
  maxRows?: number;
  /** PostgreSQL's statement_timeout (0: none); default DEFAULT_STATEMENT_TIMEOUT_MS (30 s). */
  statementTimeoutMs?: number;
  /** Aggregates in `select` (PostgREST's db-aggregates-enabled); default on. */
  aggregates?: boolean;
  /** Origins that get CORS headers (`--cors-origins`); undefined: every origin (`*`), as PostgREST. */
  corsOrigins?: string[];
  /** Use this store instead of opening one (tests). The server does not close it. */
  store?: Store;
  log?: (line: string) => void;
  /** Called once when no request has been in flight or arrived for `idleMs` (the background holder's exit). */
  onIdle?: { idleMs: number; run: () => void; version?: string };
  /**
   * Serve privately, as an embedded catalog's holder that only its owner's commands use: a random
   * credential recorded in the lock is asked of every request, a non-loopback `Host` is refused,
   * no CORS, JSON and COPY bodies only (src/holder/guard.ts). A `catalog serve` someone runs is public.
   */
  private?: boolean;
}

/** What the request log is told of one answered request. */
export interface RequestFigures {
  method: string;
  /** The request target as sent: path and query string. */
  path: string;
  status: number;
  ms: number;
  bytes: number;
  /** The role it ran as, or null when it was refused before that was known (a bad token, a limit). */
  role: string | null;
}

/** The settings a running service takes up again on SIGUSR2 (`reconfigure`); the others need a restart. */
export type Reloadable = Pick<StartOptions, 'jwtSecret' | 'jwtAud' | 'jwtRoleClaimKey' | 'dbRoles' | 'dbAnonRole' | 'maxBodyBytes' | 'maxRows' | 'aggregates' | 'corsOrigins'>;

export interface RunningServer {
  url: string;
  /** The admin server's URL, when `adminPort` was given. */
  adminUrl?: string;
  store: Store;
  server: Server;
  /** A private server's credential (the `catalog-holder-key` header), or null. */
  key: string | null;
  /** Stops accepting, drains in-flight requests, closes the store, removes the lock. */
  close(): Promise<void>;
  /**
   * Takes up new settings for the requests that arrive from now on (SIGUSR2): authentication,
   * limits, aggregates, CORS. Requests in flight finish as they began; no connection is dropped.
   * Rejects, leaving the settings as they were, when the new ones cannot serve.
   */
  reconfigure(next: Reloadable): Promise<void>;
  /**
   * Loads the schema description again (SIGUSR1): checks the database's catalog schema is at this
   * version's migration, applying any that is missing, as at start. Resolves with that version.
   */
  reloadSchema(): Promise<number>;
  /** This process's figures for `/metrics` (a cluster primary adds up its workers'). */
  metrics(): MetricsSnapshot;
  /**
   * Serves one request in this process, without a socket, as if it had come over HTTP to `url`
   * (see serveInProcess): the background holder runs the commands its command door takes
   * (src/holder/door.ts) against it.
   */
  serveInProcess(req: InProcessRequest): Promise<InProcessAnswer>;
}

/** A request served in this process (RunningServer.serveInProcess): what node:http would have read of it. */
export interface InProcessRequest {
  method: string;
  /** The request target: the path and query string of the request line. */
  target: string;
  /** Lower-case names, as a client sends them: Host and Content-Length included. */
  headers: Record<string, string>;
  body?: string | Uint8Array;
  /** Aborted when the client gives up (its timeout): the statement is cancelled, as when a socket closes. */
  signal?: AbortSignal;
}

/** The answer to an InProcessRequest, read whole: status, lower-case headers, the body's bytes (none for HEAD). */
export interface InProcessAnswer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

export const DEFAULT_MAX_URL = 8 * 1024;
export const DEFAULT_MAX_HEADER = 16 * 1024;
/**
 * How long a client may take to send its request line and headers, and how long its body may go
 * silent (slow-loris: one connection held open by a trickle of bytes). A whole request may take
 * up to node's 300 s (a 64 MiB body over a slow link), as long as it keeps arriving.
 */
export const DEFAULT_RECEIVE_TIMEOUT_MS = 10_000;

/** The live process holding a data directory and listening (a quick check: no request is made). */
export function readServeLock(dataDir: string): { pid: number; url: string; key?: string } | null {
  const holder = readHolder(dataDir);
  return holder?.url ? { pid: holder.pid, url: holder.url, ...(holder.key ? { key: holder.key } : {}) } : null;
}

/** Why a JWT secret cannot be used, or null when it can (or none is given): a short passphrase, JSON that is no JWK. */
export const jwtSecretProblem = secretShapeProblem;

/** The authentication settings of start options (the secret's keys imported, the role claim path read); errors say what is wrong. */
export function authOf(opts: Reloadable): Promise<AuthSettings> {
  return buildAuth({ jwtSecret: opts.jwtSecret, jwtAud: opts.jwtAud, jwtRoleClaimKey: opts.jwtRoleClaimKey, dbRoles: opts.dbRoles, dbAnonRole: opts.dbAnonRole });
}

/**
 * True for a listen address only this machine can reach: a loopback name as given (no case
 * folding, no port), or `[::1]` as well as `::1`.
 */
export function isLoopback(host: string): boolean {
  return isLoopbackName(host) || host === '[::1]';
}

/** An opened store, with the directory lock and umask that hold it while it is served. */
interface Held {
  store: Store;
  /** False when the caller gave the store (tests): the server does not close it. */
  ownsStore: boolean;
  lock: DirLock | null;
  restoreUmask: () => void;
}

/** Takes the data directory's lock (an embedded store), then opens the store; undoes both when opening fails. */
async function openHeld(opts: StartOptions): Promise<Held> {
  const ownsStore = !opts.store;
  // One process holds an embedded data directory: the lock is taken before any of its files is opened.
  const lock: DirLock | null = opts.dataDir && !opts.databaseUrl && ownsStore ? await acquireDirLock(opts.dataDir, opts.onIdle ? { version: opts.onIdle.version } : undefined) : null;
  // The catalog's files are the owner's alone (0600, directories 0700), whatever the umask: PGlite
  // makes files later too (WAL, statistics at close), so for as long as this process holds it; the
  // few it gives a mode of its own are tightened after opening and closing (tightenModes).
  const umask = lock ? process.umask(0o077) : null;
  const restoreUmask = () => void (umask !== null && process.umask(umask));
  let store: Store;
  try {
    store = opts.store ?? (await openStore(opts));
  } catch (err) {
    lock?.release();
    restoreUmask();
    throw err;
  }
  if (lock) tightenModes(opts.dataDir!);
  return { store, ownsStore, lock, restoreUmask };
}

/** What the request log learns while a request is served: who it ran as. */
interface Seen {
  role: string | null;
}

/** Requests in flight and when the last one came or went: what the idle exit and a draining close watch. */
interface Traffic {
  inFlight: number;
  lastActive: number;
  /** Set by a close waiting for the requests in flight to end. */
  drained: (() => void) | null;
}

/** What the socket adapter's request handler needs besides the request. */
interface Handling {
  app: App;
  opts: StartOptions;
  traffic: Traffic;
  metrics: { record(method: string, status: number, ms: number): void };
  key: string | null;
  holderTag: string | null;
  maxBodyBytes: number;
  receiveMs: number;
}

/** node:http's request handler: counts and logs each request, refuses what the adapter's limits refuse, and serves the rest. */
function requestHandler(h: Handling): (req: IncomingMessage, res: ServerResponse) => void {
  const { opts, traffic, key } = h;
  const maxUrlBytes = opts.maxUrlBytes ?? DEFAULT_MAX_URL;
  return (req, res) => {
    traffic.inFlight++;
    traffic.lastActive = Date.now();
    const arrived = traffic.lastActive;
    const sentBefore = req.socket.bytesWritten;
    const seen: Seen = { role: null };
    res.on('close', () => {
      traffic.inFlight--;
      traffic.lastActive = Date.now();
      h.metrics.record(req.method ?? 'GET', res.statusCode, traffic.lastActive - arrived);
      const figures = { method: req.method ?? 'GET', path: req.url ?? '/', status: res.statusCode, ms: traffic.lastActive - arrived, bytes: req.socket.bytesWritten - sentBefore, role: seen.role };
      opts.onRequest?.(figures);
      if (traffic.inFlight === 0 && traffic.drained) traffic.drained();
    });
    const refusal = key ? privateRefusal(req, key) : null;
    if (refusal) {
      refuse(res, refusal.status, refusal.code, refusal.message, refusal.details);
      req.resume();
      return;
    }
    if (Buffer.byteLength(req.url ?? '') > maxUrlBytes) {
      refuse(res, 414, 'PGRST414', 'URI Too Long', `The request target is longer than the maximum of ${maxUrlBytes} bytes.`);
      req.resume();
      return;
    }
    void serveOne(h.app, req, res, baseOf(req), h.maxBodyBytes, opts.log, h.holderTag, h.receiveMs, seen);
  };
}

/** Calls `idle.run` once when no request has been in flight or arrived for `idle.idleMs`; the timer, or null without `onIdle`. */
function idleWatch(idle: StartOptions['onIdle'], traffic: Traffic): NodeJS.Timeout | null {
  if (!idle) return null;
  const timer = setInterval(() => {
    if (traffic.inFlight > 0 || Date.now() - traffic.lastActive < idle.idleMs) return;
    clearInterval(timer);
    idle.run();
  }, Math.min(1000, idle.idleMs));
  return timer;
}

/** The app of a set of settings: the service's, wrapped for a private holder or for `--cors-origins`. */
async function buildApp(store: Store, key: string | null, opts: Reloadable, log: StartOptions['log']): Promise<App> {
  const { createApp } = await import('./app.js');
  const jwtSecret = await authOf(opts);
  const limits = { maxBodyBytes: opts.maxBodyBytes ?? defaultMaxBody(store.kind), maxRows: opts.maxRows, aggregates: opts.aggregates ?? true };
  const shared = createApp({ store, jwtSecret, ...limits, ...(log ? { log } : {}) });
  return key ? privateApp(shared) : opts.corsOrigins ? corsApp(shared, opts.corsOrigins) : shared;
}

/** Listens on `port` and `host`; undoes `undo` when that fails (a port in use). */
async function listenOn(server: Server, port: number, host: string, undo: () => Promise<void>): Promise<string> {
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
  } catch (err) {
    await undo();
    throw err;
  }
  const addr = server.address() as AddressInfo;
  return `http://${addr.family === 'IPv6' ? `[${addr.address}]` : addr.address}:${addr.port}`;
}

/** Opens the store, builds the app and listens: the only code that touches sockets. */
export async function startServer(opts: StartOptions = {}): Promise<RunningServer> {
  const host = opts.host ?? '127.0.0.1';
  checkAuthentication(host, opts.jwtSecret);
  const { store, ownsStore, lock, restoreUmask } = await openHeld(opts);
  const undo = async () => {
    if (ownsStore) await store.close();
    lock?.release();
    restoreUmask();
  };
  const holderTag = lock ? directoryTag(opts.dataDir!) : null;
  const key = opts.private ? newHolderKey() : null;
  const app = await buildApp(store, key, opts, opts.log).catch(async (err: unknown) => (await undo(), Promise.reject(err)));
  const { Metrics, startAdmin, storeReady } = await import('./admin.js');
  const metrics = new Metrics();
  metrics.schemaLoaded(true); // the store was migrated when it opened
  const traffic: Traffic = { inFlight: 0, lastActive: Date.now(), drained: null };
  const receiveMs = opts.receiveTimeoutMs ?? DEFAULT_RECEIVE_TIMEOUT_MS;
  // node checks headersTimeout only every connectionsCheckingInterval (30 s by default)
  const timeouts = { headersTimeout: receiveMs, connectionsCheckingInterval: Math.min(1_000, receiveMs) };
  const handling: Handling = { app, opts, traffic, metrics, key, holderTag, maxBodyBytes: opts.maxBodyBytes ?? defaultMaxBody(store.kind), receiveMs };
  const server = createServer({ keepAliveTimeout: 5_000, maxHeaderSize: opts.maxHeaderBytes ?? DEFAULT_MAX_HEADER, ...timeouts }, requestHandler(handling));
  server.on('clientError', answerClientError(opts.maxHeaderBytes ?? DEFAULT_MAX_HEADER));
  const url = await listenOn(server, opts.port ?? 3000, host, undo);
  let closing: Promise<void> | null = null;
  const source = { metrics: async () => metrics.snapshot(store), ready: () => storeReady(store), draining: () => closing !== null };
  const admin = opts.adminPort === undefined ? null : await startAdmin(opts.adminPort, host, source).catch(async (err: unknown) => {
    await new Promise((r) => server.close(r));
    await undo();
    throw err;
  });
  lock?.setUrl(url, key ?? undefined);
  const idleTimer = idleWatch(opts.onIdle, traffic);

  const close = () => {
    if (idleTimer) clearInterval(idleTimer);
    closing ??= (async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
        if (traffic.inFlight === 0) resolve();
        else traffic.drained = resolve;
      });
      server.closeAllConnections();
      if (admin) await new Promise((r) => (admin.server.close(r), admin.server.closeAllConnections()));
      if (ownsStore) await store.close();
      // PGlite writes files as it closes (statistics): tightened after it, before the lock goes
      if (lock) tightenModes(opts.dataDir!);
      lock?.release();
      restoreUmask();
    })();
    return closing;
  };
  const reconfigure = async (next: Reloadable) => {
    checkAuthentication(host, next.jwtSecret);
    handling.app = await buildApp(store, key, next, opts.log);
    handling.maxBodyBytes = next.maxBodyBytes ?? defaultMaxBody(store.kind);
  };
  const reloadSchema = () => reloadSchemaOf(store, metrics);
  const inProcess = (req: InProcessRequest) => (closing ? Promise.reject(refused(url)) : serveInProcess(handling, req));
  return { url, ...(admin ? { adminUrl: admin.url } : {}), store, server, key, close, reconfigure, reloadSchema, metrics: () => metrics.snapshot(store), serveInProcess: inProcess };
}

/** SIGUSR1: the store's migrations checked (and any missing applied), counted as a schema load. */
async function reloadSchemaOf(store: Store, metrics: Metrics): Promise<number> {
  const { migrate } = await import('../store/migrate.js');
  try {
    const { version } = await migrate(store);
    metrics.schemaLoaded(true);
    return version;
  } catch (err) {
    metrics.schemaLoaded(false);
    throw err;
  }
}

/** Refuses to start without authentication off loopback, or with a JWT secret PostgREST would refuse. */
function checkAuthentication(host: string, jwtSecret: string | undefined): void {
  if (!jwtSecret && !isLoopback(host)) {
    throw new Error(`refusing to listen on ${host} without authentication: give --jwt-secret (or CATALOG_JWT_SECRET), or listen on 127.0.0.1`);
  }
  const short = jwtSecretProblem(jwtSecret);
  if (short) throw new Error(short);
}

/** Requests node:http cannot parse (oversized headers, NUL bytes, bad framing) get a JSON answer instead of a bare status line. */
function answerClientError(maxHeaderBytes: number) {
  return (err: NodeJS.ErrnoException, socket: import('node:stream').Duplex): void => {
    if (!socket.writable || err.code === 'ECONNRESET') return void socket.destroy();
    const [status, code, message, details] =
      err.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'PGRST431', 'Request Header Fields Too Large', `The request line and headers are larger than the maximum of ${maxHeaderBytes} bytes.`]
        : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? [408, 'PGRST408', 'Request Timeout', 'The request line and headers did not arrive in time.']
          : [400, 'PGRST400', 'Bad Request', `The request is not valid HTTP/1.1 (${err.code ?? 'parse error'}).`];
    // a HEAD answer never has a body (the client's parser takes one as the next answer and fails):
    // the body only goes when the request is known not to be a HEAD
    const raw = (err as NodeJS.ErrnoException & { rawPacket?: Buffer }).rawPacket;
    const head = raw !== undefined && raw.length >= 5 && raw.toString('latin1', 0, 5) === 'HEAD ';
    const withBody = !head && ((raw !== undefined && raw.length >= 5) || err.code === 'ERR_HTTP_REQUEST_TIMEOUT');
    const body = withBody ? JSON.stringify({ code, details, hint: null, message }) : '';
    socket.end(`HTTP/1.1 ${status} ${message}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  };
}

async function openStore(opts: StartOptions): Promise<Store> {
  if (opts.databaseUrl) {
    const { DEFAULT_STATEMENT_TIMEOUT_MS, openPostgres } = await import('../store/postgres.js');
    return openPostgres({
      url: opts.databaseUrl,
      schema: opts.schema,
      statementTimeoutMs: opts.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS,
      log: opts.log,
      max: opts.dbPool,
      acquireTimeoutMs: opts.dbPoolAcquisitionTimeoutMs,
    });
  }
  if (opts.dataDir && opts.storeThread) return (await import('../store/pglite-remote.js')).openPGliteThread(opts.dataDir);
  const { openPGlite } = await import('../store/pglite.js');
  return openPGlite({ dataDir: opts.dataDir });
}

function baseOf(req: IncomingMessage): string {
  return `http://${req.headers.host ?? 'localhost'}`;
}

/** Answers before the app sees the request (limits of the socket adapter), closing the connection. */
function refuse(res: ServerResponse, status: number, code: string, message: string, details: string): void {
  const body = JSON.stringify({ code, details, hint: null, message });
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body), Connection: 'close' });
  res.end(body);
}

/** 408 for a body that stopped arriving (the connection is closed after it). */
const bodyTimeout = (ms: number) =>
  new ApiError(408, 'PGRST408', 'Request Timeout', { details: `No part of the request body arrived for ${ms / 1000} s.`, hint: 'Send the body without pauses.' });

/**
 * A node:http request as the app's Incoming: headers looked up in `rawHeaders`, the body read from
 * the stream (at most `receiveMs` of silence), `signal` aborted when the client leaves before its answer.
 */
function incoming(req: IncomingMessage, res: ServerResponse, url: URL, receiveMs: number): Incoming & { overflowed: boolean; signal: AbortSignal } {
  let headers: Map<string, string> | null = null;
  const left = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) left.abort();
  });
  const self = {
    method: req.method ?? 'GET',
    url,
    signal: left.signal,
    overflowed: false,
    header(name: string): string | null {
      if (!headers) {
        headers = new Map();
        const raw = req.rawHeaders;
        for (let i = 0; i < raw.length; i += 2) {
          const key = raw[i].toLowerCase();
          const prev = headers.get(key);
          headers.set(key, prev === undefined ? raw[i + 1] : `${prev}, ${raw[i + 1]}`);
        }
      }
      return headers.get(name) ?? null;
    },
    bytes(max: number): Promise<Buffer> {
      const declared = Number(req.headers['content-length']);
      if (Number.isFinite(declared) && declared > max) return Promise.reject(payloadTooLarge(max));
      return new Promise<Buffer>((resolve, reject) => {
        const chunks: Buffer[] = [];
        let size = 0;
        let settled = false;
        let silence: NodeJS.Timeout | undefined;
        const settle = (err: Error | null) => {
          if (settled) return;
          settled = true;
          clearTimeout(silence);
          req.off('data', onData);
          if (err) reject(err);
          else resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
        };
        const quiet = () => {
          clearTimeout(silence);
          silence = setTimeout(() => {
            self.overflowed = true; // answered, then the connection is closed
            settle(bodyTimeout(receiveMs));
          }, receiveMs);
        };
        quiet();
        const onData = (chunk: Buffer) => {
          quiet();
          size += chunk.length;
          if (size > max) {
            // Stop keeping the body (the rest is read and dropped) and close the connection after the 413.
            self.overflowed = true;
            chunks.length = 0;
            req.resume();
            settle(payloadTooLarge(max));
          } else chunks.push(chunk);
        };
        req.on('data', onData);
        req.once('end', () => settle(null));
        req.once('error', (err) => settle(err));
        req.once('close', () => settle(req.complete ? null : new Error('the client closed the connection before the request body ended')));
      });
    },
  };
  return self;
}

/** Serves one node:http exchange with the app's `reply`: no fetch Request, Response or body stream in between. */
async function serveOne(
  app: App,
  req: IncomingMessage,
  res: ServerResponse,
  base: string,
  maxBodyBytes: number,
  log?: (line: string) => void,
  holderTag: string | null = null,
  receiveMs = DEFAULT_RECEIVE_TIMEOUT_MS,
  seen: Seen = { role: null },
): Promise<void> {
  try {
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > maxBodyBytes) {
      res.writeHead(413, { 'Content-Type': 'application/json; charset=utf-8', Connection: 'close' });
      res.end(JSON.stringify(payloadTooLarge(maxBodyBytes).body()));
      req.resume();
      return;
    }
    const method = req.method ?? 'GET';
    // Methods fetch refuses outright (the in-process adapter cannot even build them); PostgREST answers them with 405.
    if (/^(TRACE|CONNECT|TRACK)$/i.test(method)) {
      res.writeHead(405, { 'Content-Type': 'application/json; charset=utf-8' });
      res.end(JSON.stringify({ code: 'PGRST117', details: null, hint: null, message: `Unsupported HTTP method: ${method}` }));
      return;
    }
    const url = URL.canParse(req.url ?? '/', base) ? new URL(req.url ?? '/', base) : null;
    if (!url) {
      // a Host or request target node:http let through but no URL can be made of (`Host: a b`)
      refuse(res, 400, 'PGRST400', 'Bad Request', 'The request target and Host header do not form a valid URL.');
      req.resume();
      return;
    }
    const request = incoming(req, res, url, receiveMs);
    const answer = await app.reply(request);
    seen.role = request.principal?.role ?? null;
    if (request.signal.aborted) return;
    if (request.overflowed) answer.headers.connection = 'close';
    // An embedded holder says which directory it holds, so a lock's recorded URL can be checked.
    if (holderTag) answer.headers[HOLDER_HEADER] = holderTag;
    res.writeHead(answer.status, answer.headers);
    if (answer.stream && method !== 'HEAD') {
      const failed = await writeStream(res, answer.stream);
      if (failed) log?.(`streamed response cut off: ${failed.message}`);
    } else if (method === 'HEAD' || answer.body === null) res.end();
    else res.end(answer.body);
  } catch (err) {
    log?.(`internal error: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
    if (!res.headersSent) {
      res.writeHead(500, { 'Content-Type': 'application/json; charset=utf-8' });
      res.end(JSON.stringify({ code: 'PGRSTX00', details: null, hint: null, message: 'Internal server error' }));
    } else res.destroy();
  }
}

/** What connecting to a server that no longer listens gives (a closed holder): the request was not sent. */
function refused(url: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`connect ECONNREFUSED ${new URL(url).host}`), { code: 'ECONNREFUSED' });
}

/** A JSON error answer, as serveOne writes one (with `extra` headers). */
function jsonAnswer(status: number, body: unknown, extra: Record<string, string> = {}): InProcessAnswer {
  return { status, headers: { 'content-type': 'application/json; charset=utf-8', ...extra }, body: Buffer.from(JSON.stringify(body)) };
}

/** An answer before the app sees the request, as `refuse` (and answerClientError) write one: with its length, closing the connection. */
function refuseHere(status: number, code: string, message: string, details: string): InProcessAnswer {
  const answer = jsonAnswer(status, { code, details, hint: null, message });
  Object.assign(answer.headers, { 'content-length': String(answer.body.length), connection: 'close' });
  return answer;
}

/** The bytes of a request's line and headers, as node:http's parser counts them against maxHeaderBytes. */
function headBytes(req: InProcessRequest): number {
  let n = Buffer.byteLength(`${req.method} ${req.target} HTTP/1.1\r\n`);
  for (const [name, value] of Object.entries(req.headers)) n += Buffer.byteLength(`${name}: ${value}\r\n`);
  return n;
}

/** An InProcessRequest as the app's Incoming (see `incoming`, its node:http twin). */
function incomingHere(req: InProcessRequest, url: URL, signal: AbortSignal): Incoming & { overflowed: boolean } {
  const body = req.body === undefined ? Buffer.alloc(0) : typeof req.body === 'string' ? Buffer.from(req.body) : Buffer.from(req.body.buffer, req.body.byteOffset, req.body.byteLength);
  const self = {
    method: req.method,
    url,
    signal,
    overflowed: false,
    header: (name: string): string | null => req.headers[name] ?? null,
    bytes(max: number): Promise<Buffer> {
      const declared = Number(req.headers['content-length']);
      if (Number.isFinite(declared) && declared > max) return Promise.reject(payloadTooLarge(max));
      if (body.length <= max) return Promise.resolve(body);
      self.overflowed = true;
      return Promise.reject(payloadTooLarge(max));
    },
  };
  return self;
}

/** A streamed body read whole; one cut off is logged as writeStream's is and fails as a connection reset. */
async function readWhole(stream: AsyncIterable<Uint8Array>, log: StartOptions['log']): Promise<Buffer> {
  const pieces: Uint8Array[] = [];
  try {
    for await (const piece of stream) pieces.push(piece);
  } catch (err) {
    log?.(`streamed response cut off: ${err instanceof Error ? err.message : String(err)}`);
    throw Object.assign(new Error('the connection closed before the whole response arrived'), { code: 'ECONNRESET' });
  }
  return Buffer.concat(pieces);
}

/** The answer to one in-process request: the adapter's refusals and limits in requestHandler's and serveOne's order, then the app's. */
async function answerInProcess(h: Handling, req: InProcessRequest, seen: Seen): Promise<InProcessAnswer> {
  const { opts, key } = h;
  const maxHeaderBytes = opts.maxHeaderBytes ?? DEFAULT_MAX_HEADER;
  if (headBytes(req) > maxHeaderBytes) {
    return refuseHere(431, 'PGRST431', 'Request Header Fields Too Large', `The request line and headers are larger than the maximum of ${maxHeaderBytes} bytes.`);
  }
  const refusal = key ? privateRefusal({ method: req.method, headers: req.headers }, key) : null;
  if (refusal) return refuseHere(refusal.status, refusal.code, refusal.message, refusal.details);
  const maxUrlBytes = opts.maxUrlBytes ?? DEFAULT_MAX_URL;
  if (Buffer.byteLength(req.target) > maxUrlBytes) {
    return refuseHere(414, 'PGRST414', 'URI Too Long', `The request target is longer than the maximum of ${maxUrlBytes} bytes.`);
  }
  try {
    if (Number(req.headers['content-length'] ?? 0) > h.maxBodyBytes) return jsonAnswer(413, payloadTooLarge(h.maxBodyBytes).body(), { connection: 'close' });
    if (/^(TRACE|CONNECT|TRACK)$/i.test(req.method)) return jsonAnswer(405, { code: 'PGRST117', details: null, hint: null, message: `Unsupported HTTP method: ${req.method}` });
    const base = `http://${req.headers.host ?? 'localhost'}`;
    if (!URL.canParse(req.target, base)) return refuseHere(400, 'PGRST400', 'Bad Request', 'The request target and Host header do not form a valid URL.');
    const left = new AbortController();
    req.signal?.addEventListener('abort', () => left.abort(), { once: true });
    const request = incomingHere(req, new URL(req.target, base), left.signal);
    const answer = await h.app.reply(request);
    seen.role = request.principal?.role ?? null;
    const headers = { ...answer.headers };
    if (request.overflowed) headers.connection = 'close';
    if (h.holderTag) headers[HOLDER_HEADER] = h.holderTag;
    const head = req.method === 'HEAD';
    const body = answer.stream ? (head ? Buffer.alloc(0) : await readWhole(answer.stream, opts.log)) : head || answer.body === null ? Buffer.alloc(0) : Buffer.from(answer.body);
    return { status: answer.status, headers, body };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ECONNRESET') throw err;
    opts.log?.(`internal error: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
    return jsonAnswer(500, { code: 'PGRSTX00', details: null, hint: null, message: 'Internal server error' });
  }
}

/**
 * Serves one request in this process, without a socket, as requestHandler and serveOne serve one
 * that came over HTTP: counted for the idle exit and a draining close, measured and logged, refused
 * by a private holder's door (privateRefusal: Host, credential, body type) and by the adapter's
 * limits with the same answers, then answered by the app with the holder's directory tag; a
 * streamed body is read whole. The request log's `bytes` is the body's (no HTTP head was written).
 */
async function serveInProcess(h: Handling, req: InProcessRequest): Promise<InProcessAnswer> {
  const { opts, traffic } = h;
  traffic.inFlight++;
  traffic.lastActive = Date.now();
  const arrived = traffic.lastActive;
  const seen: Seen = { role: null };
  let answer: InProcessAnswer | null = null;
  try {
    answer = await answerInProcess(h, req, seen);
    return answer;
  } finally {
    traffic.inFlight--;
    traffic.lastActive = Date.now();
    const status = answer?.status ?? 200;
    h.metrics.record(req.method, status, traffic.lastActive - arrived);
    opts.onRequest?.({ method: req.method, path: req.target, status, ms: traffic.lastActive - arrived, bytes: answer?.body.length ?? 0, role: seen.role });
    if (traffic.inFlight === 0 && traffic.drained) traffic.drained();
  }
}
