/** A non-2xx answer from the service, with PostgREST's error fields. */
export class ServiceError extends Error {
  override readonly name = 'ServiceError';
  constructor(
    readonly status: number,
    readonly code: string | null,
    message: string,
    readonly details: string | null,
    readonly hint: string | null,
    readonly body: string,
    /** Method and URL of the request that failed. */
    readonly request?: string,
  ) {
    super(message);
  }

  /** Builds the error from a response body: PostgREST's `{code,message,details,hint}`, a gateway's `{message,hint}`, or anything else. */
  static fromResponse(status: number, body: string, request?: string): ServiceError {
    let parsed: Record<string, unknown> | null = null;
    try {
      const v = JSON.parse(body) as unknown;
      if (v && typeof v === 'object' && !Array.isArray(v)) parsed = v as Record<string, unknown>;
    } catch {
      // not JSON: a proxy's HTML page or plain text
    }
    const str = (v: unknown) => (v === null || v === undefined ? null : typeof v === 'string' ? v : JSON.stringify(v));
    const message =
      str(parsed?.message) ?? (status === 404 ? 'not found' : body.trim() ? body.trim().slice(0, 300) : `HTTP ${status}`);
    return new ServiceError(status, str(parsed?.code), message, str(parsed?.details), str(parsed?.hint), body, request);
  }
}

/** The service could not be reached at all. */
export class ConnectionError extends Error {
  override readonly name = 'ConnectionError';
  constructor(
    readonly url: string,
    readonly reason: string,
  ) {
    super(`cannot reach ${url}: ${reason}`);
  }
}
