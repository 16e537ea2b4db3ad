/** One HTTP exchange as the import and export engines see it. */
export interface HttpRequest {
  method: string;
  /** `/tracks` */
  path: string;
  /** Query string without `?`, already encoded. */
  query?: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
}

export interface HttpResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Sends requests and returns every response, error statuses included (the engines decide what a
 * 409 or 413 means); throws only when no response arrived (connection failure).
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

/** A transport that calls an in-process app's `handle(Request)` (tests, the embedded catalog). */
export function appTransport(app: { handle(req: Request): Promise<Response> }, base = 'http://catalog.local'): Transport {
  return {
    async send(req) {
      const url = `${base}${req.path}${req.query ? `?${req.query}` : ''}`;
      const res = await app.handle(new Request(url, { method: req.method, headers: req.headers, body: req.body as BodyInit | undefined }));
      return { status: res.status, headers: lowerHeaders(res.headers), body: await res.text() };
    },
    async stream(req) {
      const url = `${base}${req.path}${req.query ? `?${req.query}` : ''}`;
      const res = await app.handle(new Request(url, { method: req.method, headers: req.headers, body: req.body as BodyInit | undefined }));
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

/** The parts of the CLI's CatalogClient (src/client/client.ts) this adapter uses. */
export interface ClientLike {
  request(r: { method: string; path: string; query?: string; headers?: Record<string, string>; body?: string | Uint8Array; idempotent?: boolean }): Promise<{
    status: number;
    headers: Record<string, string>;
    body: string;
  }>;
  stream?(r: { method: string; path: string; query?: string; headers?: Record<string, string> }): Promise<HttpStream>;
}

/**
 * A transport over the CLI's CatalogClient. The client throws ServiceError for non-2xx; that
 * becomes a plain response again. Upsert batches and reads are marked idempotent so the client
 * may retry them on connection errors and 502/503/504.
 */
export function clientTransport(client: ClientLike, opts: { idempotentWrites?: boolean } = {}): Transport {
  return {
    async send(req) {
      try {
        const idempotent = req.method === 'GET' || req.method === 'HEAD' || Boolean(opts.idempotentWrites);
        return await client.request({ ...req, idempotent });
      } catch (err) {
        const e = err as { status?: unknown; body?: unknown; headers?: unknown; code?: unknown; message?: unknown; details?: unknown; hint?: unknown };
        if (typeof e.status === 'number' && e.status >= 300) {
          const body =
            typeof e.body === 'string' && e.body !== ''
              ? e.body
              : JSON.stringify({ code: e.code ?? null, message: e.message ?? null, details: e.details ?? null, hint: e.hint ?? null });
          return { status: e.status, headers: (e.headers as Record<string, string>) ?? {}, body };
        }
        throw err;
      }
    },
    ...(client.stream ? { stream: (req: HttpRequest) => client.stream!(req) } : {}),
  };
}

/** A PostgREST error body, tolerant of non-JSON bodies (proxies, 413 from a front server). */
export interface ServiceFault {
  status: number;
  code: string;
  message: string;
  details: string | null;
  hint: string | null;
}

/** Reads the `{code,message,details,hint}` body of an error response. */
export function faultOf(res: HttpResponse): ServiceFault {
  let code = `HTTP${res.status}`;
  let message = res.body.trim().slice(0, 300) || `HTTP ${res.status}`;
  let details: string | null = null;
  let hint: string | null = null;
  try {
    const b = JSON.parse(res.body) as Record<string, unknown>;
    if (b && typeof b === 'object') {
      if (typeof b.code === 'string') code = b.code;
      if (typeof b.message === 'string') message = b.message;
      if (typeof b.details === 'string') details = b.details;
      if (typeof b.hint === 'string') hint = b.hint;
    }
  } catch {
    /* not JSON: keep the text */
  }
  return { status: res.status, code, message, details, hint };
}
