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

  /**
   * Builds the error from a response body: PostgREST's `{code,message,details,hint}`, a gateway's
   * `{message,hint}`, or anything else. Given the content type, a body that is not JSON is named
   * for what it is (the URL did not answer like a PostgREST service) instead of being shown raw.
   */
  static fromResponse(status: number, body: string, request?: string, contentType?: string): ServiceError {
    if (status === 414 || status === 431) return ServiceError.tooLong(status, body, request);
    let parsed: Record<string, unknown> | null = null;
    try {
      const v = JSON.parse(body) as unknown;
      if (v && typeof v === 'object' && !Array.isArray(v)) parsed = v as Record<string, unknown>;
    } catch {
      // not JSON: a proxy's HTML page or plain text
    }
    if (parsed === null && contentType !== undefined && !/json/i.test(contentType)) return ServiceError.notAService(status, contentType, body, request);
    const str = (v: unknown) => (v === null || v === undefined ? null : typeof v === 'string' ? v : JSON.stringify(v));
    const message =
      str(parsed?.message) ?? (status === 404 ? 'not found' : body.trim() ? body.trim().slice(0, 300) : `HTTP ${status}`);
    return new ServiceError(status, str(parsed?.code), message, str(parsed?.details), str(parsed?.hint), body, request);
  }
}

export namespace ServiceError {
  /**
   * 414 (URI too long) or 431 (request line and headers too large) from the service or a proxy in
   * front of it, whatever its body (a proxy's page, none at all): the request's URL was too long.
   */
  export function tooLong(status: number, body: string, request?: string): ServiceError {
    const url = request?.split(' ')[1];
    const size = url ? ` (its URL is ${url.length.toLocaleString('en-US')} characters)` : '';
    return new ServiceError(
      status,
      status === 414 ? 'PGRST414' : 'PGRST431',
      `the request is longer than the service accepts${size}: HTTP ${status} ${status === 414 ? 'URI Too Long' : 'Request Header Fields Too Large'}`,
      null,
      'narrow the filter; a long list of ids goes in a file: catalog <collection> remove --file ids.csv (lists are sent in parts that fit)',
      body,
      request,
    );
  }

  /** An answer no PostgREST service gives (an HTML page, plain text): the URL is probably not the service. */
  export function notAService(status: number, contentType: string, body: string, request?: string): ServiceError {
    const url = request?.split(' ')[1] ?? 'the URL';
    const what = `HTTP ${status}, ${contentType ? `content type ${contentType.split(';')[0]}` : 'no content type'}`;
    return new ServiceError(status, null, `${url} did not answer like a PostgREST service (${what}): check --url / CATALOG_URL`, null, null, body, request);
  }
}

/** No answer within the request timeout (`--timeout`, CATALOG_TIMEOUT): not retried, the wait was already long. */
export class TimeoutError extends Error {
  override readonly name = 'TimeoutError';
  constructor(
    readonly url: string,
    readonly seconds: number,
  ) {
    super(`no answer from ${url} within ${seconds} s`);
  }
}

/**
 * An https:// URL whose server answered in plain HTTP (TLS saw an HTTP response where a handshake
 * belongs): the URL is wrong, not the network, so it is not retried.
 */
export class PlainHttpError extends Error {
  override readonly name = 'PlainHttpError';
  constructor(readonly url: string) {
    const plain = url.replace(/^https:/i, 'http:');
    super(`the server at ${new URL(url).host} answered in plain HTTP, not HTTPS: use ${plain}`);
  }
}

/** The service could not be reached at all (directly, or through the proxy `via`). */
export class ConnectionError extends Error {
  override readonly name = 'ConnectionError';
  constructor(
    readonly url: string,
    readonly reason: string,
    /** The proxy the request went through (credentials redacted), if any. */
    readonly via?: string,
    /** A proxy's refusal (407, a refused tunnel): trying again would get the same answer. */
    readonly final = false,
    /** The request that may have been applied before the connection was lost (it is not sent again). */
    readonly unsure?: string,
  ) {
    const where = `${url}${via ? ` through the proxy ${via}` : ''}`;
    super(unsure ? `the connection to ${where} was lost before the answer (${reason}): ${unsure} may or may not have been applied` : `cannot reach ${where}: ${reason}`);
  }
}

/** An HTTP_PROXY / HTTPS_PROXY / ALL_PROXY value the client cannot use (not a URL, a SOCKS proxy). */
export class ProxySettingError extends Error {
  override readonly name = 'ProxySettingError';
}
