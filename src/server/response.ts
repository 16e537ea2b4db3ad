import { renderPreferenceApplied } from '../grammar/prefer.js';
import { formatContentRange } from '../grammar/range.js';
import type { MediaType, Preferences } from '../grammar/types.js';
import { changelogAtom } from './changelog.js';
import { ApiError, singularError } from './errors.js';
import type { Incoming, Reply } from './exchange.js';
import type { ExecResult, ReadResult, WriteResult } from './execute.js';
import { openApiDocument } from './openapi.js';
import type { Planned, WritePlan } from './plan.js';
import type { SpecialRequest } from './request.js';
import { renderPlannedMatch } from './match-preference.js';
import { outputKeys } from './sql.js';

/**
 * Response shaping (the last stage): statuses, Content-Range (§6.2/§6.6), the 200/206/416 rule,
 * Preference-Applied, Location, Content-Location, singular objects, CSV, HEAD, OPTIONS, the root.
 */

/** `/releases?a=eq.1&b=eq.1`: the request's query parameters sorted by name (reference §1). */
export function contentLocation(table: string, search: string): string {
  if (!search) return `/${table}`;
  const pairs: Array<[string, string]> = [];
  for (const part of search.split('&')) {
    if (!part) continue;
    const eq = part.indexOf('=');
    const rawKey = eq < 0 ? part : part.slice(0, eq);
    const rawVal = eq < 0 ? '' : part.slice(eq + 1);
    pairs.push([decode(rawKey), decode(rawVal)]);
  }
  pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
  const enc = (s: string) => encodeURIComponent(s).replace(/%2C/gi, ',').replace(/%3A/gi, ':');
  return `/${table}?${pairs.map(([k, v]) => `${enc(k)}=${enc(v)}`).join('&')}`;
}

function decode(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return s;
  }
}

/** The preferences a response echoes, per method (reference §7.6). */
function applied(planned: Planned, timezoneApplied: boolean): string | null {
  const p: Preferences = planned.prefs;
  const method = planned.request.method;
  const out: Partial<Preferences> = {};
  const write = method !== 'GET' && method !== 'HEAD';
  if (method === 'POST' && planned.plan.kind === 'insert' && planned.plan.onConflict && p.resolution) out.resolution = p.resolution;
  if (method === 'POST' && planned.plan.kind === 'insert' && p.unchanged) out.unchanged = p.unchanged;
  if ((method === 'POST' || method === 'PATCH') && p.missing) out.missing = p.missing;
  if (write && p.return) out.return = p.return;
  if (p.count) out.count = p.count;
  if (p.handling) out.handling = p.handling;
  if (p.timezone !== undefined && timezoneApplied) out.timezone = p.timezone;
  if ((method === 'PATCH' || method === 'DELETE') && p.handling === 'strict' && p.maxAffected !== undefined) out.maxAffected = p.maxAffected;
  const match = planned.plan.kind === 'insert' ? planned.plan.match : null;
  if (!match) return renderPreferenceApplied(out);
  // our match= goes after resolution and unchanged, the preferences it works with
  const { resolution, unchanged, ...rest } = out;
  return [renderPreferenceApplied({ resolution, unchanged }), `match=${renderPlannedMatch(match)}`, renderPreferenceApplied(rest)].filter((t) => t !== null).join(', ');
}

function csvBody(planned: Planned, n: number, rows: string): string {
  const header = n > 0 ? outputKeys(planned.plan.root).join(',') : '';
  return `${header}\n${rows}`;
}

function bodyText(planned: Planned, n: number, body: string | null): string {
  if (planned.representation.format === 'csv') return csvBody(planned, n, body ?? '');
  return body ?? (planned.representation.singular ? 'null' : '[]');
}

/** Shapes a GET/HEAD answer: 200, 206 or 416 by the §6.3 rule. */
function readResponse(planned: Planned, r: ReadResult): Reply {
  const plan = planned.plan;
  const offset = plan.root.offset ?? 0;
  const counted = plan.kind === 'read' && plan.count !== null;
  const total = counted ? r.total : null;
  if (total !== null && offset > total) {
    throw new ApiError(416, 'PGRST103', 'Requested range not satisfiable', {
      details: `An offset of ${offset} was requested, but there are only ${total} rows.`,
      headers: { 'Content-Range': formatContentRange(0, 0, total) },
    });
  }
  if (planned.representation.singular && r.n !== 1) throw singularError(r.n);
  const headers: Record<string, string> = {
    'content-location': contentLocation(planned.request.table.name, planned.request.search),
    'content-range': formatContentRange(offset, r.n, total),
    'content-type': planned.representation.contentType,
  };
  const pa = applied(planned, r.timezoneApplied);
  if (pa) headers['preference-applied'] = pa;
  const status = total !== null && r.n < total ? 206 : 200;
  return { status, headers, body: planned.request.method === 'HEAD' ? null : bodyText(planned, r.n, r.body) };
}

function location(plan: WritePlan, keys: unknown[][] | null): string | null {
  if (!keys || keys.length !== 1) return null;
  const pk = plan.table.primaryKey;
  const parts = pk.map((col, i) => {
    const v = keys[0][i];
    return v === null || v === undefined ? `${col}=is.null` : `${col}=eq.${encodeURIComponent(String(v))}`;
  });
  return `/${plan.table.name}?${parts.join('&')}`;
}

/**
 * Our `Catalog-Counts` header of an insert asked with `unchanged=skip`, `match=` or a COPY body:
 * `inserted=N, updated=N, unchanged=N` (unchanged: rows of the body neither inserted nor updated —
 * identical rows of a merge, existing keys of ignore-duplicates; left out when the count of rows the
 * body carried is unknown), and with `match=` `collapsed=N`: rows that ended on the same record as
 * a later row of the body (which was written instead). The four add up to the body's rows.
 */
function writeCounts(plan: WritePlan, r: WriteResult): string {
  const updated = plan.onConflict?.action === 'merge' ? r.n - r.insertedRows : 0;
  const inserted = r.n - updated;
  const collapsed = r.collapsed ?? 0;
  const parts = [`inserted=${inserted}`, `updated=${updated}`];
  if (r.received !== null) parts.push(`unchanged=${Math.max(0, r.received - r.n - collapsed)}`);
  if (r.collapsed !== undefined) parts.push(`collapsed=${collapsed}`);
  return parts.join(', ');
}

/** Shapes a POST/PATCH/PUT/DELETE answer (reference §7). */
function writeResponse(planned: Planned, r: WriteResult): Reply {
  const plan = planned.plan as WritePlan;
  const method = planned.request.method;
  const counted = planned.prefs.count !== undefined && planned.prefs.count !== 'none';
  const headers: Record<string, string> = {};
  if (method === 'PATCH') headers['content-range'] = formatContentRange(0, r.n, counted ? r.n : null);
  else if (method !== 'PUT') headers['content-range'] = formatContentRange(0, 0, counted ? r.n : null); // no range: rows written, not read
  const pa = applied(planned, r.timezoneApplied);
  if (pa) headers['preference-applied'] = pa;
  if (plan.kind === 'insert' && (planned.prefs.unchanged || plan.match || plan.payload?.copy !== undefined)) headers['catalog-counts'] = writeCounts(plan, r);

  let status: number;
  if (method === 'POST') status = plan.onConflict?.action === 'merge' && !r.inserted ? 200 : 201;
  else if (method === 'PUT') status = planned.returnMode === 'representation' ? (r.inserted ? 201 : 200) : 204;
  else status = planned.returnMode === 'representation' ? 200 : 204;

  if (planned.returnMode === 'headers-only' && method === 'POST') {
    const loc = location(plan, r.keys);
    if (loc) headers.location = loc;
  }
  if (planned.returnMode !== 'representation') return { status, headers, body: null };
  headers['content-type'] = planned.representation.contentType;
  return { status, headers, body: bodyText(planned, r.n, r.body) };
}

/** The answer for a planned and executed table request. */
export function shapeResponse(planned: Planned, result: ExecResult): Reply {
  return result.kind === 'read' ? readResponse(planned, result) : writeResponse(planned, result);
}

const ROOT_TYPES: Record<string, 'openapi' | 'yaml' | 'atom'> = {
  '*/*': 'openapi',
  'application/json': 'openapi',
  'application/openapi+json': 'openapi',
  'application/yaml': 'yaml',
  'application/atom+xml': 'atom',
};

function rootKind(accept: MediaType[]): 'openapi' | 'yaml' | 'atom' {
  if (accept.length === 0) return 'openapi';
  for (const m of accept) {
    if (m.q > 0 && ROOT_TYPES[m.type]) return ROOT_TYPES[m.type];
  }
  throw new ApiError(406, 'PGRST107', `None of these media types are available: ${accept.map((m) => m.type).join(', ')}`);
}

/** `GET /`: the OpenAPI document (JSON, or YAML as our extension) or the changelog feed. */
async function rootResponse(req: Extract<SpecialRequest, { kind: 'root' }>): Promise<Reply> {
  const kind = rootKind(req.accept);
  let body: string;
  let type: string;
  const host = new URL(req.baseUrl).host;
  if (kind === 'atom') {
    body = changelogAtom(req.baseUrl);
    type = 'application/atom+xml; charset=utf-8';
  } else if (kind === 'yaml') {
    const { stringify } = await import('yaml');
    body = stringify(openApiDocument({ host }));
    type = 'application/yaml; charset=utf-8';
  } else {
    body = JSON.stringify(openApiDocument({ host }));
    type = 'application/openapi+json; charset=utf-8';
  }
  return { status: 200, headers: { 'content-type': type }, body: req.method === 'HEAD' ? null : body };
}

const ALLOW_METHODS = 'GET, POST, PATCH, PUT, DELETE, OPTIONS, HEAD';

/** Answers the root, OPTIONS and CORS preflights. */
export async function specialResponse(req: SpecialRequest): Promise<Reply> {
  switch (req.kind) {
    case 'root':
      return rootResponse(req);
    case 'options':
      return { status: 200, headers: { 'access-control-allow-origin': '*', allow: req.allow }, body: null };
    case 'preflight': {
      const requested = req.requestHeaders?.trim();
      return {
        status: 200,
        headers: {
          'access-control-allow-headers': ['Authorization', ...(requested ? [requested] : []), 'Accept', 'Accept-Language', 'Content-Language'].join(', '),
          'access-control-allow-methods': ALLOW_METHODS,
          'access-control-allow-origin': '*',
          'access-control-max-age': '86400',
        },
        body: null,
      };
    }
  }
}

const EXPOSE = 'Content-Encoding, Content-Location, Content-Range, Content-Type, Date, Location, Server, Transfer-Encoding, Range-Unit';

/** Adds the CORS headers a request with an Origin gets, and the Server header when configured. */
export function decorate(req: Incoming, res: Reply, serverVersion?: string): Reply {
  if (req.header('origin') !== null && res.headers['access-control-allow-methods'] === undefined) {
    res.headers['access-control-allow-origin'] = '*';
    res.headers['access-control-expose-headers'] = EXPOSE;
  }
  if (serverVersion) res.headers.server = `postgrest/${serverVersion}`;
  return res;
}
