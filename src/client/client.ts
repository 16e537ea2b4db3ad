import type { Dispatcher } from 'undici';
import { ConnectionError, ServiceError } from './errors.js';
import { backoffMs, RETRY_STATUSES, retryAfterMs } from './retry.js';

export interface ClientOptions {
  baseUrl: string;
  /** Sent as `Authorization: Bearer <token>`. */
  token?: string;
  /** Extra headers on every request (`apikey` for Supabase-style gateways). */
  headers?: Record<string, string>;
  /** Retries for idempotent requests (default 3). */
  retries?: number;
  /** Called with one line per exchange: method, URL, status, milliseconds (`-v`). */
  onExchange?: (line: string) => void;
  /** Seams for tests: waiting, randomness and time. */
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
  now?: () => number;
  userAgent?: string;
}

export interface ClientRequest {
  method: string;
  /** `/artists`; joined to the base URL's path. */
  path: string;
  /** Query string without `?`, already encoded. */
  query?: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  /** Overrides the method's default (GET/HEAD idempotent, everything else not). */
  idempotent?: boolean;
}

export interface ClientResponse {
  status: number;
  /** Lower-cased names; repeated headers joined with `, `. */
  headers: Record<string, string>;
  body: string;
}

const CONNECTION_CODES = /^(ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|EPIPE|UND_ERR_.*)$/;

/**
 * HTTP client for a PostgREST-style service: one keep-alive connection pool per client (undici,
 * loaded on the first request), bearer token and extra headers, and retries with backoff,
 * jitter and Retry-After for idempotent requests only. Non-2xx answers throw ServiceError;
 * unreachable services throw ConnectionError.
 */
export class CatalogClient {
  private dispatcher: Dispatcher | null = null;
  private readonly base: URL;

  constructor(private readonly opts: ClientOptions) {
    this.base = new URL(opts.baseUrl.endsWith('/') ? opts.baseUrl : `${opts.baseUrl}/`);
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
    if (this.opts.token) h.authorization = `Bearer ${this.opts.token}`;
    if (r.body !== undefined) h['content-type'] = 'application/json';
    for (const [k, v] of Object.entries(r.headers ?? {})) h[k.toLowerCase()] = v;
    return h;
  }

  /** Sends a request, retrying idempotent ones on connection errors and 502/503/504. */
  async request(r: ClientRequest): Promise<ClientResponse> {
    const idempotent = r.idempotent ?? (r.method === 'GET' || r.method === 'HEAD');
    const retries = idempotent ? this.opts.retries ?? 3 : 0;
    const now = this.opts.now ?? Date.now;
    const sleep = this.opts.sleep ?? ((ms: number) => new Promise<void>((res) => setTimeout(res, ms)));
    for (let attempt = 0; ; attempt++) {
      let res: ClientResponse;
      try {
        res = await this.once(r);
      } catch (err) {
        if (err instanceof ConnectionError && attempt < retries) {
          await sleep(backoffMs(attempt, null, this.opts.random));
          continue;
        }
        throw err;
      }
      if (RETRY_STATUSES.has(res.status) && attempt < retries) {
        await sleep(backoffMs(attempt, retryAfterMs(res.headers['retry-after'], now()), this.opts.random));
        continue;
      }
      if (res.status >= 300) throw ServiceError.fromResponse(res.status, res.body, `${r.method} ${this.url(r)}`);
      return res;
    }
  }

  private async once(r: ClientRequest): Promise<ClientResponse> {
    const { request, Agent } = await import('undici');
    this.dispatcher ??= new Agent({ keepAliveTimeout: 10_000, connections: 8 });
    const url = this.url(r);
    const started = (this.opts.now ?? Date.now)();
    let status = 0;
    try {
      const res = await request(url, {
        method: r.method as Dispatcher.HttpMethod,
        headers: this.headersFor(r),
        body: r.body,
        dispatcher: this.dispatcher,
      });
      status = res.statusCode;
      const body = await res.body.text();
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(res.headers)) {
        if (v !== undefined) headers[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
      }
      return { status, headers, body };
    } catch (err) {
      const e = err as NodeJS.ErrnoException & { cause?: NodeJS.ErrnoException };
      const code = e.code ?? e.cause?.code ?? '';
      if (CONNECTION_CODES.test(code)) throw new ConnectionError(this.base.href.replace(/\/$/, ''), `${code}${e.message ? ` (${e.message})` : ''}`);
      throw err;
    } finally {
      const ms = Math.round((this.opts.now ?? Date.now)() - started);
      this.opts.onExchange?.(`${r.method} ${url} → ${status || 'failed'} (${ms} ms)`);
    }
  }

  /** Closes pooled connections. */
  async close(): Promise<void> {
    const d = this.dispatcher;
    this.dispatcher = null;
    if (d) await d.close();
  }
}
