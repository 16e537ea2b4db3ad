import type { Agent as HttpAgent, ClientRequest as NodeRequest, IncomingMessage, RequestOptions } from 'node:http';
import { ConnectionError, PlainHttpError, ServiceError, TimeoutError } from './errors.js';
import type { Open } from './proxy-route.js';
import { redact } from './proxy.js';
import { backoffMs, RETRY_STATUSES, retryAfterMs, retrying } from './retry.js';
import type { HttpRequest, HttpResponse, HttpStream, ServiceClient } from './transport.js';

export interface ClientOptions {
  baseUrl: string;
  /** Sent as `Authorization: Bearer <token>`. */
  token?: string;
  /** Extra headers on every request (`apikey` for Supabase-style gateways). */
  headers?: Record<string, string>;
  /** Retries for idempotent requests (default 3). */
  retries?: number;
  /** Longest silence while waiting for an answer or the next piece of its body (default 60 s; `--timeout`). */
  timeoutMs?: number;
  /** Called with one line per exchange: method, URL, status, milliseconds (`-v`). */
  onExchange?: (line: string) => void;
  /** Seams for tests: waiting, randomness and time. */
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
  now?: () => number;
  userAgent?: string;
  /**
   * Where the service is now, asked when the connection is refused or reset before an answer: the
   * embedded catalog's holder can be a command that exits between another command's requests, and
   * another process then holds it (or this one does). Only for the embedded catalog. A refused
   * connection carried nothing, so any request follows the catalog; a reset one may have carried a
   * request the holder ran before it died (killed at the wrong millisecond), so only a request that
   * may be sent again (`idempotent`) follows it then.
   */
  relocate?: () => Promise<{ url: string; headers: Record<string, string> }>;
  /** Headers the service's current address asks for (a private holder's credential); `relocate` replaces them. */
  routeHeaders?: Record<string, string>;
  /** The proxy to reach the service through (proxy.ts's proxyFor: HTTPS_PROXY, NO_PROXY, …); none: direct. */
  proxy?: URL | null;
}

/** How long one request follows a service that moves (see ClientOptions.relocate). */
const RELOCATE_FOR_MS = 30_000;

/** A request to the service: the transport's (src/client/transport.ts). */
export type ClientRequest = HttpRequest;
/** An answer (the body decoded on first use). */
export type ClientResponse = HttpResponse;

const CONNECTION_CODES = /^(ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|EPIPE|UND_ERR_.*)$/;

/** Connections per service, as many as an import's concurrency needs. */
const MAX_SOCKETS = 8;
/** Longest wait for a TCP (and TLS) connection. */
const CONNECT_TIMEOUT_MS = 10_000;
/** Longest silence while waiting for the response headers or the next piece of the body, unless told otherwise. */
export const DEFAULT_TIMEOUT_MS = 60_000;
/** The code of an idle timeout (a TimeoutError, not retried), apart from a connect timeout (retried). */
const IDLE_TIMEOUT = 'ECATALOG_IDLE_TIMEOUT';

/** What the client needs of node:http and node:https. */
interface NodeHttp {
  request: (typeof import('node:http'))['request'];
  Agent: new (opts: { keepAlive: boolean; maxSockets: number }) => HttpAgent;
}

/** A socket-level failure with a code the retry logic understands. */
function timeoutError(code: string, message: string): NodeJS.ErrnoException {
  return Object.assign(new Error(message), { code });
}

/**
 * HTTP client for a PostgREST-style service: one keep-alive connection pool per client (node:http,
 * or node:https for https URLs, loaded on the first request), bearer token and extra headers, and
 * retries with backoff, jitter and Retry-After for idempotent requests only. Non-2xx answers throw
 * ServiceError; unreachable services, refused or reset connections and a connect timeout (10 s)
 * throw ConnectionError; silence past the request timeout (60 s, `--timeout`) throws TimeoutError.
 *
 * node:http rather than undici: a command makes one or a few requests, and undici costs ~170 ms
 * to import and delays the exit of every command by as much again; node:http is already in node.
 */
export class CatalogClient implements ServiceClient {
  private agent: HttpAgent | null = null;
  private route: Promise<{ open: Open; agent: HttpAgent }> | null = null;
  private readonly inFlight = new Set<Promise<unknown>>();
  private base: URL;
  private routeHeaders: Record<string, string>;

  private get timeoutMs(): number {
    return this.opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  constructor(private readonly opts: ClientOptions) {
    this.base = new URL(opts.baseUrl.endsWith('/') ? opts.baseUrl : `${opts.baseUrl}/`);
    this.routeHeaders = opts.routeHeaders ?? {};
  }

  /** The full URL of a request (also what `--dry-run` prints). */
  url(r: Pick<ClientRequest, 'path' | 'query'>): string {
    const u = new URL(r.path.replace(/^\//, ''), this.base);
    return r.query ? `${u.href}?${r.query}` : u.href;
  }

  /** Every header a request is sent with (auth and defaults included). */
  headersFor(r: ClientRequest): Record<string, string> {
    const h: Record<string, string> = { accept: 'application/json', 'user-agent': this.opts.userAgent ?? 'catalog' };
    for (const [k, v] of Object.entries(this.opts.headers ?? {})) h[k.toLowerCase()] = v;
    for (const [k, v] of Object.entries(this.routeHeaders)) h[k.toLowerCase()] = v;
    if (this.opts.token) h.authorization = `Bearer ${this.opts.token}`;
    if (r.body !== undefined) h['content-type'] = 'application/json';
    for (const [k, v] of Object.entries(r.headers ?? {})) h[k.toLowerCase()] = v;
    return h;
  }

  /**
   * The one retry loop of both exchanges: an idempotent request is tried again after a connection
   * error or a 502/503/504 (backoff with jitter, or the service's Retry-After).
   */
  private retried<T extends { status: number; headers: Record<string, string> }>(r: ClientRequest, attempt: () => Promise<T>, drop: (res: T) => void): Promise<T> {
    return retriedExchange(r, this.opts, (idempotent) => this.relocating(attempt, idempotent), drop);
  }

  /**
   * Runs an attempt, following the service to its new address when the connection is refused (or
   * reset, for a request that may be sent again: see ClientOptions.relocate).
   */
  private async relocating<T>(attempt: () => Promise<T>, idempotent: boolean): Promise<T> {
    const until = Date.now() + RELOCATE_FOR_MS;
    const follows = idempotent ? /^(ECONNREFUSED|ECONNRESET|EPIPE)/ : /^ECONNREFUSED/;
    for (;;) {
      try {
        return await attempt();
      } catch (err) {
        const relocate = this.opts.relocate;
        if (!relocate || Date.now() > until || !(err instanceof ConnectionError) || !follows.test(err.reason)) throw err;
        // The holder may still be closing (its lock names it until its files are closed): give it a moment.
        await new Promise((r) => setTimeout(r, 30 + Math.random() * 40));
        const { url, headers } = await relocate();
        this.base = new URL(url.endsWith('/') ? url : `${url}/`);
        this.routeHeaders = headers;
      }
    }
  }

  /**
   * Sends a request (retrying idempotent ones) and returns the answer, whatever its status: the
   * Transport. A successful answer that is an HTML page to a request for JSON or CSV is no
   * PostgREST service's: it is thrown as such (ServiceError naming the URL, status and content type).
   */
  async send(r: ClientRequest): Promise<ClientResponse> {
    return servedAnswer(await this.retried(r, () => this.once(r), () => {}), r, this);
  }

  /** Sends a request as `send` does; an answer of 300 or more is thrown as ServiceError. */
  async request(r: ClientRequest): Promise<ClientResponse> {
    return successOf(await this.send(r));
  }

  /**
   * Sends a request and hands back the response as soon as its headers arrive, the body to be read
   * as it comes (an export's COPY read: never whole in memory). Any status is returned, not thrown;
   * connection failures and 502/503/504 before the body are retried for idempotent requests, as
   * `send` does. A body cut off before its end throws from its iterator.
   */
  stream(r: ClientRequest): Promise<HttpStream> {
    return this.retried(r, () => this.openOnce(r), (res) => res.cancel());
  }

  private openOnce(r: ClientRequest): Promise<HttpStream> {
    return this.exchange(r, ' to the headers', (open, url) => openStream(open, url, { method: r.method, headers: this.headersFor(r), signal: r.signal }, r.body, this.timeoutMs), (res) => res.cancel());
  }

  /**
   * One exchange, however its answer is read (`run`): its status noted, a proxy's 407 refused
   * (`drop` lets the answer go), a socket failure made a ConnectionError, and the exchange's line
   * told (`onExchange`; `timed` says what the milliseconds measure).
   */
  private async exchange<T extends { status: number }>(r: ClientRequest, timed: string, run: (open: Open, url: string) => Promise<T>, drop: (res: T) => void): Promise<T> {
    const url = this.url(r);
    const started = (this.opts.now ?? Date.now)();
    let status = 0;
    try {
      const res = await run(await this.pool(), url);
      status = res.status;
      this.refusedByProxy(status, () => drop(res));
      return res;
    } catch (err) {
      throw this.connectionError(err);
    } finally {
      const ms = Math.round((this.opts.now ?? Date.now)() - started);
      this.opts.onExchange?.(`${r.method} ${url} → ${status || 'failed'} (${ms} ms${timed}${this.via ? `, through ${this.via}` : ''})`);
    }
  }

  /** The proxy requests go through, as it may be shown (no password), or undefined. */
  private get via(): string | undefined {
    return this.opts.proxy ? redact(this.opts.proxy) : undefined;
  }

  /** A proxy that wants credentials answers an http:// request itself with 407: no service said that. */
  private refusedByProxy(status: number, drop: () => void): void {
    if (status !== 407 || !this.opts.proxy) return;
    drop();
    throw Object.assign(new Error('the proxy asks for credentials or refused the ones given (407): give them in the proxy URL, http://user:password@host:port'), { code: 'ECATALOG_PROXY' });
  }

  /** A socket-level failure (or a proxy's refusal) as ConnectionError; anything else as it is. */
  private connectionError(err: unknown): unknown {
    const e = err as NodeJS.ErrnoException & { cause?: NodeJS.ErrnoException };
    const code = e.code ?? e.cause?.code ?? '';
    const url = this.base.href.replace(/\/$/, '');
    if (code === IDLE_TIMEOUT) return new TimeoutError(url, this.timeoutMs / 1000);
    if (code === 'ECATALOG_PROXY') return new ConnectionError(url, e.message, this.via, true);
    // OpenSSL's words for an HTTP answer to a TLS hello
    if (code === 'EPROTO' && this.base.protocol === 'https:' && /wrong version number|packet length too long|http request/i.test(e.message ?? '')) {
      return new PlainHttpError(url);
    }
    if (CONNECTION_CODES.test(code)) return new ConnectionError(url, `${code}${e.message ? ` (${e.message})` : ''}`, this.via);
    return err;
  }

  /**
   * How requests leave: node:http or node:https (loaded on the first request) with one keep-alive
   * pool, or through the proxy (proxy-route.ts, loaded only then).
   */
  private async pool(): Promise<Open> {
    const base = this.base;
    const proxy = this.opts.proxy;
    this.route ??= proxy
      ? import('./proxy-route.js').then((m) => m.proxyRoute(base, proxy, MAX_SOCKETS, CONNECT_TIMEOUT_MS))
      : (base.protocol === 'https:' ? import('node:https') : import('node:http')).then(({ request, Agent }: NodeHttp) => {
          const agent = new Agent({ keepAlive: true, maxSockets: MAX_SOCKETS });
          return { agent, open: ((url, options, callback) => request(url, { ...options, agent }, callback)) as Open };
        });
    const route = await this.route;
    this.agent = route.agent;
    return route.open;
  }

  private once(r: ClientRequest): Promise<ClientResponse> {
    return this.exchange(
      r,
      '',
      async (open, url) => {
        const headers = this.headersFor(r);
        if (r.body !== undefined) headers['content-length'] = String(typeof r.body === 'string' ? Buffer.byteLength(r.body) : r.body.byteLength);
        const exchange = send(open, url, { method: r.method, headers, signal: r.signal }, r.body, this.timeoutMs);
        this.inFlight.add(exchange);
        try {
          return await exchange;
        } finally {
          this.inFlight.delete(exchange);
        }
      },
      () => {},
    );
  }

  /** Closes pooled connections, after the requests still under way have finished. */
  async close(): Promise<void> {
    await Promise.allSettled([...this.inFlight]);
    const agent = this.agent;
    this.agent = null;
    this.route = null;
    agent?.destroy();
  }
}

/**
 * A response body's pieces as they arrive, each as node:http received it. The stream's own async
 * iterator reads with `read()`, which joins every piece buffered meanwhile into a new buffer (a
 * copy of most of the body when the reader is slower than the socket); here a few pieces wait in
 * a queue instead, and the socket is paused while they do. A body cut off throws.
 */
async function* piecesOf(res: IncomingMessage): AsyncGenerator<Uint8Array> {
  const queue: Buffer[] = [];
  let ended = false;
  let failed: Error | null = null;
  let wake: (() => void) | null = null;
  const notify = () => {
    const w = wake;
    wake = null;
    w?.();
  };
  res.on('data', (chunk: Buffer) => {
    queue.push(chunk);
    if (queue.length >= 16) res.pause();
    notify();
  });
  res.on('end', () => {
    ended = true;
    notify();
  });
  res.on('error', (err) => {
    failed = err;
    notify();
  });
  res.on('close', () => {
    if (!res.complete) failed ??= timeoutError('ECONNRESET', 'the connection closed before the whole response arrived');
    notify();
  });
  try {
    for (;;) {
      const chunk = queue.shift();
      if (chunk) {
        if (queue.length < 4 && res.isPaused()) res.resume();
        yield chunk;
        continue;
      }
      if (failed) throw failed;
      if (ended) return;
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
    }
  } finally {
    res.removeAllListeners('data');
  }
}

/**
 * A request's time limits: `idleMs` of silence, and CONNECT_TIMEOUT_MS to connect a new
 * socket (a pooled one is already connected); either calls `fail`. Returns what clears the
 * connect timer.
 */
function timeouts(req: NodeRequest, fail: (err: Error) => void, idleMs: number): () => void {
  let connectTimer: NodeJS.Timeout | undefined;
  req.setTimeout(idleMs, () => fail(timeoutError(IDLE_TIMEOUT, `no answer for ${idleMs / 1000} s`)));
  req.on('socket', (socket) => {
    if (!socket.connecting) return;
    connectTimer = setTimeout(() => fail(timeoutError('ETIMEDOUT', `could not connect within ${CONNECT_TIMEOUT_MS / 1000} s`)), CONNECT_TIMEOUT_MS);
    socket.once(typeof (socket as { encrypted?: boolean }).encrypted === 'boolean' ? 'secureConnect' : 'connect', () => clearTimeout(connectTimer));
  });
  return () => clearTimeout(connectTimer);
}

/** One exchange whose body is read as it arrives (see CatalogClient.stream). */
function openStream(request: Open, url: string, options: RequestOptions, body: string | Uint8Array | undefined, idleMs: number): Promise<HttpStream> {
  return new Promise<HttpStream>((resolve, reject) => {
    let clearConnect = () => {};
    const req: NodeRequest = request(url, options, (res: IncomingMessage) => {
      clearConnect();
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(res.headersDistinct)) if (v) headers[k] = v.join(', ');
      resolve({
        status: res.statusCode ?? 0,
        headers,
        body: piecesOf(res),
        async text() {
          const chunks: Buffer[] = [];
          for await (const chunk of res) chunks.push(chunk as Buffer);
          return new TextDecoder().decode(Buffer.concat(chunks));
        },
        cancel: () => req.destroy(),
      });
    });
    const fail = (err: Error) => {
      clearConnect();
      req.destroy(err);
      reject(err);
    };
    req.on('error', fail);
    clearConnect = timeouts(req, fail, idleMs);
    if (body !== undefined) req.setHeader('content-length', String(typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength));
    req.end(body);
  });
}

/**
 * One exchange: sends the request, reads the whole body (as UTF-8 text when `body` is read, a
 * byte-order mark dropped as fetch's text() does) and joins repeated response headers with `, `.
 */
function send(
  request: Open,
  url: string,
  options: RequestOptions,
  body: string | Uint8Array | undefined,
  idleMs: number,
): Promise<ClientResponse> {
  return new Promise<ClientResponse>((resolve, reject) => {
    let req: NodeRequest;
    let clearConnect = () => {};
    const fail = (err: Error) => {
      clearConnect();
      req.destroy();
      reject(err);
    };
    req = request(url, options, (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', fail);
      res.on('close', () => {
        if (!res.complete) fail(timeoutError('ECONNRESET', 'the connection closed before the whole response arrived'));
      });
      res.on('end', () => {
        clearConnect();
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(res.headersDistinct)) if (v) headers[k] = v.join(', ');
        const bytes = Buffer.concat(chunks);
        let text: string | undefined;
        resolve({
          status: res.statusCode ?? 0,
          headers,
          bytes,
          // decoding costs as much as receiving (UTF-8 to UTF-16): only when the text is read
          get body() {
            return (text ??= new TextDecoder().decode(bytes));
          },
        });
      });
    });
    req.on('error', fail);
    clearConnect = timeouts(req, fail, idleMs);
    req.end(body);
  });
}

/**
 * The one retry loop of a client's exchanges (CatalogClient's, and the holder's in-process client,
 * src/holder/in-process-client.ts): an idempotent request is tried again after a connection error
 * or a 502/503/504 (backoff with jitter, or the service's Retry-After); a write whose connection
 * broke after it was sent says that it may have been applied. `attempt(idempotent)` is one try;
 * `drop` lets go of an answer that is retried.
 */
export function retriedExchange<T extends { status: number; headers: Record<string, string> }>(
  r: ClientRequest,
  opts: ClientOptions,
  attempt: (idempotent: boolean) => Promise<T>,
  drop: (res: T) => void,
): Promise<T> {
  const idempotent = r.idempotent ?? (r.method === 'GET' || r.method === 'HEAD');
  const now = opts.now ?? Date.now;
  const once = !idempotent
    ? () =>
        attempt(false).catch((err: unknown) => {
          if (err instanceof ConnectionError && /^(ECONNRESET|EPIPE)/.test(err.reason)) throw new ConnectionError(err.url, err.reason, err.via, false, `${r.method} ${r.path}`);
          throw err;
        })
    : () => attempt(true);
  return retrying(once, {
    retries: idempotent ? (opts.retries ?? 3) : 0,
    sleep: opts.sleep,
    again: (o, n) => {
      if ('error' in o) return o.error instanceof ConnectionError && !o.error.final ? backoffMs(n, null, opts.random) : null;
      if (!RETRY_STATUSES.has(o.value.status)) return null;
      drop(o.value);
      return backoffMs(n, retryAfterMs(o.value.headers['retry-after'], now()), opts.random);
    },
  });
}

/**
 * `send`'s answer: named by its request line; a successful answer that is an HTML page to a request
 * for JSON or CSV is no PostgREST service's, thrown as such (ServiceError naming the URL, status and
 * content type). `client` gives the request's URL and headers.
 */
export function servedAnswer(res: ClientResponse, r: ClientRequest, client: Pick<ServiceClient, 'url' | 'headersFor'>): ClientResponse {
  res.request = `${r.method} ${client.url(r)}`;
  const type = res.headers['content-type'] ?? '';
  const asked = client.headersFor(r).accept ?? '';
  if (res.status < 300 && /^text\/html/i.test(type) && /json|csv/i.test(asked)) throw ServiceError.notAService(res.status, type, res.body, res.request);
  return res;
}

/** `request`'s answer: one of 300 or more is thrown as ServiceError. */
export function successOf(res: ClientResponse): ClientResponse {
  if (res.status >= 300) throw ServiceError.fromResponse(res.status, res.body, res.request, res.headers['content-type'] ?? '');
  return res;
}
