import { COPY_CSV, parseAccept, parseMediaType } from '../grammar/media.js';
import { parseQuery } from '../grammar/parse.js';
import { parsePrefer } from '../grammar/prefer.js';
import { parseRange } from '../grammar/range.js';
import type { MediaType, Preferences, Query, RangeHeader } from '../grammar/types.js';
import { servedTableByName, type TableDef } from '../schema/catalog.js';
import { computedField, SOURCE_IDS } from '../schema/source-ids.js';
import { authenticate, authorize, privilegeFor, roleAllows, type AuthSettings, type Principal } from './auth.js';
import { ApiError, notFoundEmpty } from './errors.js';
import type { Incoming } from './exchange.js';
import { parsePayloadSliced, type Payload } from './payload.js';
import { checkPaging } from './paging.js';
import { isRunFunction, parseRunCall, type RunCall } from './runs.js';

/**
 * Request parsing (the first stage): path → resource, method check, query string, Prefer, Range,
 * Accept and the body, in PostgREST's order so the first failure wins (reference §1).
 */

export type TableMethod = 'GET' | 'HEAD' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

/** A request for a table, parsed. */
export interface TableRequest {
  kind: 'table';
  method: TableMethod;
  table: TableDef;
  /** Raw query string without `?`. */
  search: string;
  query: Query;
  prefs: Preferences;
  /** Range header (GET only; null otherwise). */
  range: RangeHeader | null;
  accept: MediaType[];
  payload: Payload | null;
  principal: Principal;
}

/** Requests answered without planning: the root, OPTIONS, a CORS preflight. */
export type SpecialRequest =
  | { kind: 'root'; method: 'GET' | 'HEAD'; accept: MediaType[]; baseUrl: string }
  | { kind: 'options'; allow: string }
  | { kind: 'preflight'; requestHeaders: string | null };

export type ApiRequest = TableRequest | SpecialRequest | RunCall;

export interface RequestOptions {
  schema: string;
  maxBodyBytes: number;
  /** A passphrase, or the settings `buildAuth` made (JWK/JWKS, aud, role claim, --db-roles). */
  jwtSecret?: string | AuthSettings;
  /** PostgREST's db-aggregates-enabled: `count()`, `col.sum()` … in `select` (else PGRST123). */
  aggregates?: boolean;
}

const TABLE_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
const ROOT_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
export const TABLE_ALLOW = 'OPTIONS,GET,HEAD,POST,PUT,PATCH,DELETE';
export const ROOT_ALLOW = 'OPTIONS,GET,HEAD';

/**
 * `/` → root, `/<name>` → a table name, `/rpc/<fn>` → a function, anything else → 404 `{}`.
 * Example: `resolvePath('/releases')` → `{ kind: 'table', name: 'releases' }`.
 */
export function resolvePath(pathname: string): { kind: 'root' } | { kind: 'table'; name: string } | { kind: 'rpc'; name: string } {
  if (pathname === '/' || pathname === '') return { kind: 'root' };
  const segments = pathname.split('/').slice(1);
  const decoded: string[] = [];
  for (const s of segments) {
    try {
      decoded.push(decodeURIComponent(s));
    } catch {
      throw notFoundEmpty();
    }
  }
  if (decoded.length === 2 && decoded[0] === 'rpc' && decoded[1] !== '') return { kind: 'rpc', name: decoded[1] };
  if (decoded.length !== 1 || decoded[0] === '') throw notFoundEmpty();
  return { kind: 'table', name: decoded[0] };
}

/**
 * The catalog exposes no functions: `/rpc/<fn>` answers as PostgREST 12 does for a function it
 * cannot find (PGRST202), or PGRST101 for a method RPC does not take.
 */
function rpcNotFound(method: string, schema: string, name: string, search: string): ApiError {
  if (method !== 'GET' && method !== 'HEAD' && method !== 'POST' && method !== 'OPTIONS') {
    return new ApiError(405, 'PGRST101', `Cannot use the ${method} method on RPC`);
  }
  const args = [...new Set(new URLSearchParams(search).keys())].filter((k) => !['select', 'order', 'limit', 'offset', 'columns', 'on_conflict'].includes(k)).sort();
  const signature = args.length ? `(${args.join(', ')})` : ' without parameters';
  return new ApiError(404, 'PGRST202', `Could not find the function ${schema}.${name}${signature} in the schema cache`, {
    details: `Searched for the function ${schema}.${name}${args.length ? ` with parameters ${args.join(', ')}` : ' without parameters'} or with a single unnamed json/jsonb parameter, but no matches were found in the schema cache.`,
  });
}

function unsupported(method: string): ApiError {
  return new ApiError(405, 'PGRST117', `Unsupported HTTP method: ${method}`);
}

/** The 404 PostgREST 12 gives for a table that does not exist (PG's 42P01 text). */
function unknownTable(schema: string, name: string): ApiError {
  return new ApiError(404, '42P01', `relation "${schema}.${name}" does not exist`);
}

/** `Accept-Profile` (reads) / `Content-Profile` (writes) must name the one schema we expose: else 406 PGRST106. */
function checkProfile(req: Incoming, method: string, schema: string): void {
  const read = method === 'GET' || method === 'HEAD' || method === 'OPTIONS';
  const profile = req.header(read ? 'accept-profile' : 'content-profile');
  if (profile !== null && profile !== schema) {
    throw new ApiError(406, 'PGRST106', `The schema must be one of the following: ${schema}`);
  }
}

const JSON_COLUMNS = new WeakMap<TableDef, ReadonlySet<string>>();

/** The names of a table's jsonb columns (made once per table). */
function jsonColumnsOf(table: TableDef): ReadonlySet<string> {
  let names = JSON_COLUMNS.get(table);
  if (!names) JSON_COLUMNS.set(table, (names = new Set(table.columns.filter((c) => c.type === 'jsonb').map((c) => c.name))));
  return names;
}

/** Parses a request into what the later stages need. Throws ApiError (or GrammarError). */
export async function parseRequest(req: Incoming, opts: RequestOptions): Promise<ApiRequest> {
  const method = req.method;
  const url = req.url;
  if (method === 'OPTIONS' && req.header('origin') !== null && req.header('access-control-request-method') !== null) {
    return { kind: 'preflight', requestHeaders: req.header('access-control-request-headers') };
  }
  const principal = await authenticate(req.header('authorization'), opts.jwtSecret);
  req.principal = principal;
  const target = resolvePath(url.pathname);
  if (target.kind === 'rpc') {
    if (!isRunFunction(target.name) || method !== 'POST') throw rpcNotFound(method, opts.schema, target.name, url.search.slice(1));
    // our unchanged-run functions (runs.ts): for a principal that may write the catalog
    if (principal.dbRole === undefined && !roleAllows(principal.role, 'write')) authorize(principal, method, 'tracks', opts.schema);
    return parseRunCall(target.name, new TextDecoder('utf-8').decode(await req.bytes(64 * 1024)));
  }
  if (target.kind === 'root') {
    if (!ROOT_METHODS.has(method)) throw unsupported(method);
    if (method === 'OPTIONS') return { kind: 'options', allow: ROOT_ALLOW };
    return { kind: 'root', method: method as 'GET' | 'HEAD', accept: parseAccept(req.header('accept')), baseUrl: url.origin };
  }
  if (!TABLE_METHODS.has(method)) throw unsupported(method);
  checkProfile(req, method, opts.schema);
  const table = servedTableByName(target.name);
  if (method === 'OPTIONS') {
    if (!table) throw notFoundEmpty();
    return { kind: 'options', allow: table.readOnly ? ROOT_ALLOW : TABLE_ALLOW };
  }
  const search = url.search.startsWith('?') ? url.search.slice(1) : url.search;
  const query = parseQuery(search, { aggregates: opts.aggregates });
  const prefs = parsePrefer(req.header('prefer'));
  const range = method === 'GET' ? parseRange(req.header('range')) : null;
  checkPaging(method as TableMethod, query, range);
  const hasBody = method === 'POST' || method === 'PATCH' || method === 'PUT';
  // Authorise before reading the body: a write its principal may not make is refused (below) with
  // its body unread, never buffered; the socket adapter discards the rest as it streams in.
  const mayWrite = (principal.dbRole !== undefined || roleAllows(principal.role, privilegeFor(method))) && !table?.readOnly;
  const body = hasBody ? (mayWrite ? await req.bytes(opts.maxBodyBytes) : new Uint8Array(0)) : null;
  // the payload parsers decode the body themselves (refusing bytes that are not UTF-8); this text is
  // only for the check below, on a table that does not exist
  const isCopy = parseMediaType(req.header('content-type') ?? '').type === COPY_CSV;
  const textOf = (): string => (body === null || isCopy ? '' : new TextDecoder('utf-8').decode(body));

  if (!table) {
    // PostgREST 12: an embed on an unknown table is PGRST200; POST/PATCH with keys is a bare 404 {}.
    const embed = query.select?.find((s) => s.type === 'embed');
    if (embed && embed.type === 'embed') {
      throw new ApiError(400, 'PGRST200', `Could not find a relationship between '${target.name}' and '${embed.relation}' in the schema cache`, {
        details: `Searched for a foreign key relationship between '${target.name}' and '${embed.relation}' in the schema '${opts.schema}', but no matches were found.`,
      });
    }
    if (method === 'PUT') throw new ApiError(405, 'PGRST105', "Filters must include all and only primary key columns with 'eq' operators");
    if ((method === 'POST' || method === 'PATCH') && /[^\s{}[\]]/.test(textOf())) throw notFoundEmpty();
    throw unknownTable(opts.schema, target.name);
  }
  authorize(principal, method, table.name, opts.schema, table.readOnly);

  const payload = hasBody
    ? await parsePayloadSliced(body ?? new Uint8Array(0), req.header('content-type'), {
        columns: query.columns,
        missingDefault: prefs.missing === 'default',
        method,
        jsonColumns: jsonColumnsOf(table),
        sourceIds: computedField(table.name, SOURCE_IDS) !== undefined,
      })
    : null;
  return {
    kind: 'table',
    method: method as TableMethod,
    table,
    search,
    query,
    prefs,
    range,
    accept: parseAccept(req.header('accept')),
    payload,
    principal,
  };
}
