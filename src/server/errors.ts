import { StoreError } from '../store/store.js';
import type { Reply } from './reply.js';

/** The JSON body every error answer carries (PostgREST's shape, reference §9.1). */
export interface ErrorBody {
  code: string;
  message: string;
  details: string | unknown[] | null;
  hint: string | null;
}

/**
 * An error that is the request's answer: an HTTP status plus PostgREST's code, message, details
 * and hint. Every stage throws this (or lets a StoreError through, mapped by `fromStoreError`).
 */
export class ApiError extends Error {
  readonly details: string | unknown[] | null;
  readonly hint: string | null;
  /** Extra response headers (Content-Range on a 416, Retry-After on a 503). */
  readonly headers?: Record<string, string>;
  /** A body other than the error shape (the bare `{}` of an unknown path). */
  readonly rawBody?: string;

  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    opts: { details?: string | unknown[] | null; hint?: string | null; headers?: Record<string, string>; rawBody?: string } = {},
  ) {
    super(message);
    this.name = 'ApiError';
    this.details = opts.details ?? null;
    this.hint = opts.hint ?? null;
    this.headers = opts.headers;
    this.rawBody = opts.rawBody;
  }

  /** The JSON body of this error. */
  body(): ErrorBody {
    return { code: this.code, details: this.details, hint: this.hint, message: this.message };
  }
}

/** 404 with body `{}`: PostgREST's answer for a path that names no resource. */
export function notFoundEmpty(): ApiError {
  return new ApiError(404, '', 'not found', { rawBody: '{}' });
}

/** 406 PGRST116: the singular object media type was asked for and `n` rows (not 1) came back. */
export function singularError(n: number): ApiError {
  return new ApiError(406, 'PGRST116', 'JSON object requested, multiple (or no) rows returned', { details: `The result contains ${n} rows` });
}

/** The largest request body the service takes by default (`--max-body`): 64 MiB, 413 above it. */
export const DEFAULT_MAX_BODY = 64 * 1024 * 1024;

/**
 * The embedded store's default (issue 15 item 9): PGlite runs one statement at a time, and a
 * 60 MB write held every other request for about 24 s. 8 MiB bounds that to a few seconds;
 * `catalog import` sends batches of at most 4 MiB, so it is not affected. `--max-body` overrides it.
 */
export const PGLITE_DEFAULT_MAX_BODY = 8 * 1024 * 1024;

/** The default body limit for a store kind. */
export function defaultMaxBody(kind: string): number {
  return kind === 'pglite' ? PGLITE_DEFAULT_MAX_BODY : DEFAULT_MAX_BODY;
}

/** 413 in the shape the socket adapter uses too. */
export function payloadTooLarge(max: number): ApiError {
  return new ApiError(413, 'PGRST413', 'Payload Too Large', {
    details: `The request body is larger than the maximum of ${max} bytes.`,
    hint: 'Send fewer rows per request (catalog import splits batches automatically).',
  });
}

/**
 * HTTP status for a PostgreSQL SQLSTATE, as PostgREST 12.2.3 maps them (reference §9.3).
 * `anonymous` decides 401 vs 403 for 42501.
 */
export function statusForSqlState(code: string, message = '', anonymous = true): number {
  if (/^PT\d{3}$/.test(code)) return Number(code.slice(2));
  const cls = code.slice(0, 2);
  switch (code) {
    case '21000':
      return message.endsWith('requires a WHERE clause') ? 400 : 500;
    case '23503':
    case '23505':
      return 409;
    case '25006':
      return 405;
    case '42883':
      return message.startsWith('function xmlagg(') ? 406 : 404;
    case '42P01':
      return 404;
    case '42P17':
      return 500;
    case '42501':
      return anonymous ? 401 : 403;
    case '53400':
      return 500;
    case '57P01':
      return 503;
    case 'P0001':
      return 400;
  }
  switch (cls) {
    case '08':
      return 503;
    case '09':
      return 500;
    case '0L':
    case '0P':
    case '28':
      return 403;
    case '25':
    case '2D':
    case '38':
    case '39':
    case '3B':
    case '40':
    case '54':
    case '55':
    case '57':
    case '58':
    case 'F0':
    case 'HV':
    case 'XX':
      return 500;
    case '53':
      return 503;
    case 'P0':
      return 500;
  }
  return 400;
}

/**
 * PostgREST's answers when the connection itself failed (reference §9.2), the driver's or
 * PostgreSQL's text as details: unreachable 503 PGRST000, lost under the statement (terminated,
 * restarted) 503 PGRST001, no pooled connection free in time 504 PGRST003. Null for other errors.
 */
function connectionAnswer(err: StoreError, headers: Record<string, string>): ApiError | null {
  const retry = { ...headers, 'Retry-After': '1' };
  if (err.connection === 'pool-timeout') return new ApiError(504, 'PGRST003', 'Timed out acquiring connection from connection pool.', { details: err.message, hint: err.hint, headers: retry });
  if (err.connection === 'lost') return new ApiError(503, 'PGRST001', 'Database client error. Retrying the connection.', { details: err.message, headers: retry });
  if (err.connection === 'unreachable' || /^08/.test(err.code)) return new ApiError(503, 'PGRST000', 'Database connection error. Retrying the connection.', { details: err.message, headers: retry });
  return null;
}

/** Turns a database error into the request's answer (status per §9.3, body from PostgreSQL's texts). */
export function fromStoreError(err: StoreError): ApiError {
  const status = statusForSqlState(err.code, err.message);
  const headers: Record<string, string> = {};
  if (status === 503) headers['Retry-After'] = '1';
  if (err.code === '42501') headers['WWW-Authenticate'] = 'Bearer';
  const lost = connectionAnswer(err, headers);
  if (lost) return lost;
  let hint = err.hint;
  if (err.code === '57014' && hint === null) {
    hint = 'The query ran longer than the statement timeout allows; narrow the filter or read fewer rows per request.';
  }
  return new ApiError(status, err.code, err.message, { details: err.detail, hint, headers });
}

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * The answer for any thrown value. Errors of unknown kind become a generic 500 and are logged,
 * never echoed (no stack traces in bodies).
 */
export function errorReply(err: unknown, log: (line: string) => void = () => {}): Reply {
  let api: ApiError;
  if (err instanceof ApiError) api = err;
  else if (err instanceof StoreError) api = fromStoreError(err);
  else if (isGrammarError(err)) {
    api = new ApiError(err.status, err.code, err.message, { details: err.details ?? null, hint: err.hint ?? null });
  } else {
    log(`internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    api = new ApiError(500, 'PGRSTX00', 'Internal server error');
  }
  if (api.status >= 500 && !(err instanceof StoreError)) {
    log(`${api.status} ${api.code}: ${api.message}`);
  }
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(api.headers ?? {})) headers[k.toLowerCase()] = v;
  headers['content-type'] = JSON_TYPE;
  return { status: api.status, headers, body: api.rawBody ?? JSON.stringify(api.body()) };
}

interface GrammarErrorLike {
  name: string;
  code: string;
  status: number;
  message: string;
  details?: string | null;
  hint?: string | null;
}

/** The grammar's GrammarError, recognised by shape so this module does not depend on the parser. */
function isGrammarError(err: unknown): err is GrammarErrorLike {
  if (!(err instanceof Error)) return false;
  const e = err as Partial<GrammarErrorLike>;
  return typeof e.code === 'string' && /^PGRST\d{3}$/.test(e.code) && typeof e.status === 'number';
}
