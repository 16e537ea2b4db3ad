/**
 * The client of a command the background holder runs for a thin client (src/holder/door.ts): its
 * requests go to the holder's own server in this process (RunningServer.serveInProcess) instead of
 * over HTTP from the holder to itself (measured: ~2.5 ms of CPU a command). Nothing else changes:
 * each request carries what CatalogClient would send (its headers, the holder's credential read from
 * the lock, and what node:http adds: Host, Content-Length, Connection), meets the server's checks
 * (the private holder's door, its limits) and is counted for its idle exit as one that came over
 * HTTP; retries, the timeout, the `-v` line of each exchange and every error are CatalogClient's,
 * word for word (test/e2e/holder-door.test.ts compares the two).
 */
import { CatalogClient, type ClientOptions, DEFAULT_TIMEOUT_MS, retriedExchange, servedAnswer, successOf } from '../client/client.js';
import { ConnectionError, TimeoutError } from '../client/errors.js';
import type { HttpRequest, HttpResponse, HttpStream, ServiceClient } from '../client/transport.js';
import type { InProcessAnswer, InProcessRequest } from '../server/listen.js';
import { HandBack } from './hand-back.js';

/** The server's entry in this process (RunningServer.serveInProcess). */
export type ServeInProcess = (req: InProcessRequest) => Promise<InProcessAnswer>;

/** The code of a request that got no answer within the timeout (client.ts's IDLE_TIMEOUT). */
const IDLE_TIMEOUT = 'ECATALOG_IDLE_TIMEOUT';

/** node:http's error for a request whose signal was aborted. */
const aborted = () => Object.assign(new Error('The operation was aborted'), { name: 'AbortError', code: 'ABORT_ERR' });

/**
 * A ServiceClient over the server in this process, built from the same ClientOptions as the
 * CatalogClient it stands in for (the proxy is always none: the holder is on loopback). The URLs of
 * requests and their headers are that CatalogClient's own (`url`, `headersFor`).
 */
export class InProcessClient implements ServiceClient {
  private readonly http: CatalogClient;
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(
    private readonly opts: ClientOptions,
    private readonly serve: ServeInProcess,
  ) {
    // only for its URLs and headers: it opens no connection
    this.http = new CatalogClient(opts);
  }

  private get timeoutMs(): number {
    return this.opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  private now(): number {
    return (this.opts.now ?? Date.now)();
  }

  url(r: Pick<HttpRequest, 'path' | 'query'>): string {
    return this.http.url(r);
  }

  headersFor(r: HttpRequest): Record<string, string> {
    return this.http.headersFor(r);
  }

  /** CatalogClient.send's: the retries, then an HTML page where JSON or CSV was asked for is no PostgREST service's. */
  async send(r: HttpRequest): Promise<HttpResponse> {
    return servedAnswer(await this.retried(r, () => this.once(r), () => {}), r, this);
  }

  async request(r: HttpRequest): Promise<HttpResponse> {
    return successOf(await this.send(r));
  }

  /** The answer as a stream of one piece: the server in this process has read it whole. */
  stream(r: HttpRequest): Promise<HttpStream> {
    return this.retried(r, () => this.openOnce(r), () => {});
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.inFlight]);
  }

  /** CatalogClient's retry loop (client.ts retriedExchange), without following a moved service: the holder is this process. */
  private retried<T extends { status: number; headers: Record<string, string> }>(r: HttpRequest, attempt: () => Promise<T>, drop: (res: T) => void): Promise<T> {
    return retriedExchange(r, this.opts, attempt, drop);
  }

  /**
   * One exchange with the server in this process: the request as node:http would send it to the
   * holder's URL, the answer within the timeout (else the request is aborted: its statement is
   * cancelled, as when a connection closes).
   */
  private exchange(r: HttpRequest, url: string): Promise<InProcessAnswer> {
    if (r.signal?.aborted) return Promise.reject(aborted());
    const target = new URL(url);
    const headers = this.headersFor(r);
    if (r.body !== undefined) headers['content-length'] = String(typeof r.body === 'string' ? Buffer.byteLength(r.body) : r.body.byteLength);
    headers.host = target.host;
    headers.connection = 'keep-alive';
    const stop = new AbortController();
    const answer = this.serve({ method: r.method, target: `${target.pathname}${target.search}`, headers, body: r.body, signal: stop.signal });
    this.inFlight.add(answer);
    const done = () => this.inFlight.delete(answer);
    answer.then(done, done);
    return new Promise<InProcessAnswer>((resolve, reject) => {
      const fail = (err: Error) => {
        clearTimeout(timer);
        r.signal?.removeEventListener('abort', onAbort);
        stop.abort();
        reject(err);
      };
      const onAbort = () => fail(aborted());
      const timer = setTimeout(() => fail(Object.assign(new Error(`no answer for ${this.timeoutMs / 1000} s`), { code: IDLE_TIMEOUT })), this.timeoutMs);
      r.signal?.addEventListener('abort', onAbort, { once: true });
      answer.then(
        (a) => (clearTimeout(timer), r.signal?.removeEventListener('abort', onAbort), resolve(a)),
        (err: Error) => fail(err),
      );
    });
  }

  /** CatalogClient's `once`: one exchange, its `-v` line whatever came of it. */
  private once(r: HttpRequest): Promise<HttpResponse> {
    return this.timed(r, '', (answer) => {
      const bytes = answer.body;
      let text: string | undefined;
      return {
        status: answer.status,
        headers: answer.headers,
        bytes,
        // as CatalogClient's: decoded (a byte-order mark dropped) only when read
        get body() {
          return (text ??= new TextDecoder().decode(bytes));
        },
      };
    });
  }

  /** CatalogClient's `openOnce`: the answer as a stream, its `-v` line timed to the headers. */
  private openOnce(r: HttpRequest): Promise<HttpStream> {
    return this.timed(r, ' to the headers', (answer) => {
      const bytes = answer.body;
      return {
        status: answer.status,
        headers: answer.headers,
        body: (async function* () {
          if (bytes.length) yield bytes;
        })(),
        text: async () => new TextDecoder().decode(bytes),
        cancel: () => {},
      };
    });
  }

  /** One exchange as `shape` gives its answer, a failure as CatalogClient's, and the `-v` line (`… → status (N ms<suffix>)`) whatever came of it. */
  private async timed<T>(r: HttpRequest, suffix: string, shape: (answer: InProcessAnswer) => T): Promise<T> {
    const url = this.url(r);
    const started = this.now();
    let status = 0;
    try {
      const answer = await this.exchange(r, url);
      status = answer.status;
      return shape(answer);
    } catch (err) {
      throw this.connectionError(err);
    } finally {
      this.opts.onExchange?.(`${r.method} ${url} → ${status || 'failed'} (${Math.round(this.now() - started)} ms${suffix})`);
    }
  }

  /**
   * A failure as CatalogClient reports it: no answer in time (TimeoutError), a lost or refused
   * connection (ConnectionError). A server that no longer listens (the holder closing) hands the
   * command back, as the HTTP client's relocation would have found no holder to follow.
   */
  private connectionError(err: unknown): unknown {
    const e = err as NodeJS.ErrnoException;
    const url = new URL(this.url({ path: '/' })).href.replace(/\/$/, '');
    if (e.code === IDLE_TIMEOUT) return new TimeoutError(url, this.timeoutMs / 1000);
    if (e.code === 'ECONNREFUSED' && this.opts.relocate) return new HandBack('the holder is closing');
    if (e.code === 'ECONNRESET' || e.code === 'ECONNREFUSED') return new ConnectionError(url, `${e.code}${e.message ? ` (${e.message})` : ''}`);
    return err;
  }
}
