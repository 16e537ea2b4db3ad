import { ServiceError } from './errors.js';

/**
 * The one transport of the project: every exchange with the service, from the CLI's commands and
 * the import and export engines, is an HttpRequest sent through a Transport. CatalogClient
 * (client.ts) is the node:http one; `appTransport` calls an in-process app (tests, in-process CLI
 * runs). The one fault type is ServiceError (errors.ts): `faultOf` reads it from an answer.
 */
export interface HttpRequest {
  method: string;
  /** `/tracks` */
  path: string;
  /** Query string without `?`, already encoded. */
  query?: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  /** Whether it may be sent again after an unclear failure (default: GET and HEAD only). */
  idempotent?: boolean;
  /**
   * Stops the exchange when aborted (the connection is closed: our service then cancels the
   * statement); the request fails with an AbortError and is not sent again.
   */
  signal?: AbortSignal;
}

export interface HttpResponse {
  status: number;
  /** Lower-cased names; repeated headers joined with `, `. */
  headers: Record<string, string>;
  /** The body as UTF-8 text. */
  body: string;
  /** The body as received, where the transport has it (an export writes CSV pages through). */
  bytes?: Uint8Array;
  /** `METHOD URL` of the request answered, where the transport knows the URL (messages). */
  request?: string;
}

/**
 * Sends requests and returns every response, error statuses included (callers decide what a 409
 * or 413 means); throws only when no response arrived (ConnectionError).
 */
export interface Transport {
  send(req: HttpRequest): Promise<HttpResponse>;
  /** The same exchange with the body read as it arrives (export's COPY reads), where the transport can. */
  stream?(req: HttpRequest): Promise<HttpStream>;
}

/** A response whose body is read as it arrives. */
export interface HttpStream {
  status: number;
  headers: Record<string, string>;
  /** The body's pieces; a transfer cut off before its end throws. */
  body: AsyncIterable<Uint8Array>;
  /** The whole body as text (error answers). */
  text(): Promise<string>;
  /** Stops reading the body (its connection is dropped). */
  cancel(): void;
}

function lowerHeaders(h: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  h.forEach((v, k) => {
    out[k.toLowerCase()] = v;
  });
  return out;
}

/** A transport that calls an in-process app's `handle(Request)` (tests, the CLI run in process). */
export function appTransport(app: { handle(req: Request): Promise<Response> }, base = 'http://catalog.local'): Transport {
  const call = (req: HttpRequest) => {
    const url = `${base}${req.path}${req.query ? `?${req.query}` : ''}`;
    // As the HTTP client does: a body without a Content-Type of its own is JSON.
    const headers = new Headers(req.headers);
    if (req.body !== undefined && !headers.has('content-type')) headers.set('content-type', 'application/json');
    return app.handle(new Request(url, { method: req.method, headers, body: req.body as BodyInit | undefined }));
  };
  return {
    async send(req) {
      const res = await call(req);
      return { status: res.status, headers: lowerHeaders(res.headers), body: await res.text() };
    },
    async stream(req) {
      const res = await call(req);
      const body = res.body;
      return {
        status: res.status,
        headers: lowerHeaders(res.headers),
        body: body ? (body as unknown as AsyncIterable<Uint8Array>) : (async function* () {})(),
        text: () => res.text(),
        cancel: () => void body?.cancel().catch(() => {}),
      };
    },
  };
}

/** A service fault's SQLSTATE-like code: the body's `code`, else `HTTP<status>` (a proxy's page, a bare 413). */
export const faultCode = (f: ServiceError): string => f.code ?? `HTTP${f.status}`;

/**
 * The fault an error answer carries (PostgREST's `{code,message,details,hint}`, tolerant of
 * non-JSON bodies from proxies or a front server).
 */
export function faultOf(res: HttpResponse, request?: string): ServiceError {
  return ServiceError.fromResponse(res.status, res.body, request ?? res.request, res.headers['content-type']);
}

/**
 * What commands use of a service: the Transport, `request` (an answer of 300 or more thrown as
 * ServiceError), and the URL and headers of a request (what `--dry-run` prints as curl).
 */
export interface ServiceClient extends Transport {
  request(req: HttpRequest): Promise<HttpResponse>;
  url(req: Pick<HttpRequest, 'path' | 'query'>): string;
  headersFor(req: HttpRequest): Record<string, string>;
  close(): Promise<void>;
}

/**
 * A ServiceClient over any Transport: the CLI run in process on an `appTransport`, without a
 * socket (tests, as the server's tests run). No retries: nothing in between can fail.
 */
export function transportClient(t: Transport, base = 'http://catalog.local'): ServiceClient {
  const url = (req: Pick<HttpRequest, 'path' | 'query'>) => `${base}${req.path}${req.query ? `?${req.query}` : ''}`;
  return {
    send: (req) => t.send(req),
    ...(t.stream ? { stream: (req: HttpRequest) => t.stream!(req) } : {}),
    async request(req) {
      const res = await t.send(req);
      if (res.status >= 300) throw faultOf(res, `${req.method} ${url(req)}`);
      return res;
    },
    url,
    headersFor: (req) => ({ accept: 'application/json', ...(req.body !== undefined ? { 'content-type': 'application/json' } : {}), ...req.headers }),
    close: async () => {},
  };
}
