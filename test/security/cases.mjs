// Shared by test/security/*.test.ts (a bounded slice in `npm test`) and scripts/fuzz.mjs (the long run):
// the hostile-input corpus, where a request carries text, random requests for fast-check, and the
// checks every answer must pass. Plain JavaScript so the script runs on compiled dist/ without a loader.
import fc from 'fast-check';

/**
 * Strings that try to end a literal or identifier, comment out the rest, chain a statement, call a
 * function, or hide in unicode. Several would leave a trace if they ever ran: the canary table
 * dropped or changed, rows deleted, or a file created by COPY ... TO PROGRAM.
 */
export function hostileCorpus(pwnedFile = '/tmp/catalog-pwned') {
  const stmts = [
    'drop table canary',
    "update canary set note = 'pwned'",
    'delete from canary',
    "insert into canary values (2, 'pwned')",
    'delete from labels',
    'drop table labels cascade',
    `copy (select 1) to program 'touch ${pwnedFile}'`,
    'select pg_sleep(30)',
  ];
  const breakouts = [];
  for (const s of stmts) {
    breakouts.push(`'; ${s}; --`, `"; ${s}; --`, `'); ${s}; --`, `")); ${s}; /*`, `$$; ${s}; $$`, `\\'; ${s}; --`, `1;${s}`, `x' || (${s}) || '`);
  }
  return [
    ...breakouts,
    "'", "''", '"', '""', '`', '\\', '\\\\', "\\'", '\\"', ')', '(', '((', '))', ',', '.', ':', '::', ';', '--', '-- x', '/*', '*/', '/* */',
    '/*/', '*', '%', '_', '&', '=', '?', '#', '+', '$1', '$$', '${x}', 'E\'\\x27\'', "U&'\\0027'", '\u0000', 'a\u0000b', "'\u0000; drop table canary; --",
    '\r\n', '\n; drop table canary', '\t', '%00', '%27', '%2527', '%E2%82', '%FF', '%%',
    '\u202e', '\u202e; drop table canary; --', '\u200b\'', '\ufeff', '\uff07; drop table canary; --', '\uff02) or (1=1', '\u02bc', '\u2018\u2019\u201c\u201d',
    '\u2028', '\ud83d\udcbf', 'e\u0301', 'İ', 'ﬀ',
    "' or '1'='1", '" or "1"="1', "1' or 1=1 --", '1) or (1=1', "' union select * from canary --", '" union select note from canary --',
    'pg_sleep(30)', "'||pg_sleep(30)||'", '(select pg_sleep(30))', 'now()', 'current_user', "lo_import('/etc/passwd')", 'pg_read_file(\'/etc/passwd\')',
    'canary', 'public.canary', '"canary"', 'catalog_migrations', 'pg_catalog.pg_tables', 'information_schema.tables', 'regclass', 'pg_catalog.text', 'int4',
    'null', 'true', 'not.null', 'eq.1', 'id.desc', 'labels(*)', '*,canary(*)', 'not.is.null', 'or=(id.eq.1)', 'a->b', 'a->>b', '0-', '-1',
    '<script>alert(1)</script>', '{"a":1}', '[1]', 'x'.repeat(3000),
  ];
}

const enc = encodeURIComponent;

/** Percent-encodes only what a URL cannot carry literally: `%` sequences reach the server as sent. */
export function rawish(s) {
  return [...s].map((ch) => (/[\x21-\x7e]/.test(ch) && ch !== '#' ? ch : enc(ch))).join('');
}

/**
 * Every place a request carries text, with the hostile string `h` put there. Writes are shaped so
 * that, done honestly, they change nothing (an empty body, a filter matching no row), so any
 * change in the database afterwards is an injection.
 */
export function injectionPlaces(h) {
  const GET = (place, path, headers) => ({ place, method: 'GET', path, headers });
  const NONE = '[]';
  return [
    GET('filter value (eq)', `/labels?name=eq.${enc(h)}`),
    GET('filter value (raw)', `/labels?name=eq.${rawish(h)}`),
    GET('filter value (not.like)', `/labels?name=not.like.${enc(h)}`),
    GET('filter value (ilike any)', `/labels?name=ilike(any).{${enc(h)},x}`),
    GET('filter value (match)', `/labels?name=match.${enc(h)}`),
    GET('filter value (in)', `/labels?name=in.(${enc(h)},x)`),
    GET('filter value (quoted in)', `/labels?name=in.("${enc(h.replace(/["\\]/g, '\\$&'))}")`),
    GET('filter value (is)', `/labels?name=is.${enc(h)}`),
    GET('filter value (fts)', `/labels?name=fts.${enc(h)}`),
    GET('filter value (fts config)', `/labels?name=fts(${enc(h)}).x`),
    GET('filter value (cs on jsonb)', `/releases?contracts=cs.${enc(h)}`),
    GET('filter value (uuid)', `/labels?id=eq.${enc(h)}`),
    GET('filter value (date)', `/releases?release_date=gte.${enc(h)}`),
    GET('filter key', `/labels?${enc(h)}=eq.1`),
    GET('filter operator', `/labels?name=${enc(h)}.x`),
    GET('logic tree value', `/labels?or=(name.eq.${enc(h)},id.is.null)`),
    GET('logic tree raw', `/labels?or=(${rawish(h)})`),
    GET('json path key', `/releases?contracts->>${enc(h)}=eq.1`),
    GET('json path (select)', `/releases?select=id,contracts->${enc(h)}->>x`),
    GET('select item', `/labels?select=${enc(h)}`),
    GET('select alias', `/labels?select=${enc(h)}:name`),
    GET('select cast', `/labels?select=name::${enc(h)}`),
    GET('select embed', `/releases?select=id,${enc(h)}(*)`),
    GET('select embed hint', `/releases?select=id,labels!${enc(h)}(name)`),
    GET('embedded filter', `/releases?select=id,labels(name)&labels.name=eq.${enc(h)}`),
    GET('embedded key', `/releases?select=id,labels(name)&${enc(h)}.name=eq.x`),
    GET('order', `/labels?order=${enc(h)}`),
    GET('order direction', `/labels?order=name.${enc(h)}`),
    GET('order (embedded)', `/releases?select=id,labels(name)&order=labels(${enc(h)})`),
    GET('limit', `/labels?limit=${enc(h)}`),
    GET('offset', `/labels?offset=${enc(h)}`),
    GET('path (table)', `/${enc(h)}`),
    GET('path (raw)', `/${rawish(h)}`),
    GET('path (second segment)', `/labels/${enc(h)}`),
    GET('Prefer', '/labels', { Prefer: h }),
    GET('Prefer count', '/labels', { Prefer: `count=${h}` }),
    GET('Prefer timezone', '/labels', { Prefer: `timezone=${h}` }),
    GET('Prefer strict', '/labels', { Prefer: `handling=strict, ${h}` }),
    GET('Range', '/labels', { Range: h }),
    GET('Range end', '/labels', { Range: `0-${h}` }),
    GET('Range-Unit', '/labels', { 'Range-Unit': h, Range: '0-1' }),
    GET('Accept', '/labels', { Accept: h }),
    GET('Accept parameter', '/labels', { Accept: `application/json;${h}` }),
    GET('Accept (root)', '/', { Accept: h }),
    GET('Accept-Profile', '/labels', { 'Accept-Profile': h }),
    { place: 'columns', method: 'POST', path: `/labels?columns=${enc(h)}`, body: NONE },
    { place: 'on_conflict', method: 'POST', path: `/labels?on_conflict=${enc(h)}`, headers: { Prefer: 'resolution=merge-duplicates' }, body: NONE },
    { place: 'body key', method: 'POST', path: '/labels', body: JSON.stringify([{ [h]: 'x' }]) },
    { place: 'body key (csv)', method: 'POST', path: '/labels', headers: { 'Content-Type': 'text/csv' }, body: `"${h.replace(/"/g, '""')}"\nx` },
    { place: 'Content-Type', method: 'POST', path: '/labels', headers: { 'Content-Type': h }, body: NONE },
    { place: 'Content-Profile', method: 'POST', path: '/labels', headers: { 'Content-Profile': h }, body: NONE },
    { place: 'Prefer (write)', method: 'POST', path: '/labels', headers: { Prefer: `return=${h}, missing=${h}` }, body: NONE },
    { place: 'PATCH filter', method: 'PATCH', path: `/labels?name=eq.${enc(h)}`, body: JSON.stringify({ name: 'changed-by-injection' }) },
    { place: 'PATCH filter (or)', method: 'PATCH', path: `/labels?or=(name.eq.${enc(h)},name.eq.none)`, body: JSON.stringify({ name: 'changed-by-injection' }) },
    { place: 'PATCH body key', method: 'PATCH', path: '/labels?name=eq.none', body: JSON.stringify({ [h]: 'x' }) },
    { place: 'PUT key', method: 'PUT', path: `/labels?id=eq.${enc(h)}`, body: JSON.stringify({ id: h, name: 'x' }) },
    { place: 'DELETE filter', method: 'DELETE', path: `/labels?name=eq.${enc(h)}` },
    { place: 'DELETE filter (uuid)', method: 'DELETE', path: `/releases?id=eq.${enc(h)}` },
    { place: 'DELETE filter (json path)', method: 'DELETE', path: `/releases?contracts->>${enc(h)}=eq.${enc(h)}` },
  ];
}

/** Header values as node:http hands them to the app: the bytes read as latin1. Null when HTTP cannot carry it. */
export function wireHeaderValue(v) {
  if (/[\0\r\n]/.test(v)) return null;
  return Buffer.from(v, 'utf8').toString('latin1');
}

/** Builds the Request the socket adapter would build, or null when the request cannot travel over HTTP. */
export function toRequest(spec, base = 'http://localhost') {
  const headers = new Headers();
  try {
    for (const [k, v] of Object.entries(spec.headers ?? {})) {
      const wire = wireHeaderValue(v);
      if (wire === null) return null;
      headers.set(k, wire);
    }
  } catch {
    return null;
  }
  if (spec.body !== undefined && !headers.has('content-type')) headers.set('Content-Type', 'application/json');
  return new Request(`${base}${spec.path}`, { method: spec.method, headers, body: spec.body });
}

/** Why an answer breaks the contract (a 5xx, or an error body not in PostgREST's shape), or null. */
export function problemWith(method, status, text) {
  if (status >= 500) return `status ${status}: ${text.slice(0, 300)}`;
  if (status < 400 || method === 'HEAD') return null;
  if (status === 404 && text === '{}') return null;
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    return `status ${status} with a non-JSON error body: ${text.slice(0, 200)}`;
  }
  const keys = body && typeof body === 'object' ? Object.keys(body).sort().join(',') : '';
  if (keys !== 'code,details,hint,message' || typeof body.code !== 'string' || typeof body.message !== 'string') {
    return `status ${status} with an error body not in PostgREST's shape: ${text.slice(0, 200)}`;
  }
  return null;
}

/**
 * Sends one spec to `handle`: the status (0 when HTTP cannot carry the request) and a problem text
 * or null.
 */
export async function checkOne(handle, spec) {
  let req;
  try {
    req = toRequest(spec);
  } catch {
    return { status: 0, problem: null }; // not a URL the WHATWG parser accepts: no HTTP client could send it either
  }
  if (!req) return { status: 0, problem: null };
  let res;
  try {
    res = await handle(req);
  } catch (err) {
    return { status: 0, problem: `handle threw: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}` };
  }
  const text = await res.text();
  const problem = problemWith(spec.method, res.status, text);
  return { status: res.status, problem: problem && `${spec.method} ${spec.path} ${JSON.stringify(spec.headers ?? {})}: ${problem}` };
}

// ------------------------------------------------------------------------------------------ fuzzing

const COLUMNS = ['id', 'name', 'release_title', 'release_date', 'label_id', 'contracts', 'created', 'updated', 'is_compilation', 'catalog_number', 'nope', 'stage_name'];
const TABLE_PATHS = ['/labels', '/releases', '/artists', '/tracks', '/genres', '/', '/canary', '/catalog_migrations', '/pg_tables', '/labels/x', '/rpc/pg_sleep'];
const OPS = ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'like', 'ilike', 'match', 'imatch', 'in', 'is', 'isdistinct', 'fts', 'plfts', 'phfts', 'wfts', 'cs', 'cd', 'ov', 'sl', 'sr', 'nxl', 'nxr', 'adj', 'not', 'xx'];
const NOISE = [',', '.', '(', ')', ':', '::', '->', '->>', '!', '"', '*', '...', ' ', '&', '=', 'not.', 'or', 'and', '(any)', '(all)', '{', '}', '[', ']', '\\', "'", ';', '--', '/*', '%25', 'é', '💿'];

/** fast-check arbitraries for whole requests: grammar fragments, noise and the hostile corpus mixed. */
export function requestArbitrary(corpus) {
  const pick = (xs) => fc.constantFrom(...xs);
  const text = fc.oneof(
    { weight: 3, arbitrary: pick(corpus) },
    { weight: 3, arbitrary: fc.array(fc.oneof(pick(COLUMNS), pick(OPS), pick(NOISE), fc.string({ maxLength: 4 })), { maxLength: 6 }).map((xs) => xs.join('')) },
    { weight: 1, arbitrary: fc.string({ maxLength: 12, unit: 'binary' }) },
  );
  const value = fc.oneof(text, text.map(enc), text.map(rawish));
  const param = fc.oneof(
    fc.tuple(pick(COLUMNS), fc.boolean(), pick(OPS), value).map(([c, not, op, v]) => `${c}=${not ? 'not.' : ''}${op}.${v}`),
    fc.tuple(pick(['select', 'order', 'limit', 'offset', 'columns', 'on_conflict', 'or', 'and', 'not.or', 'labels.name', 'labels.order', 'releases.limit', 'contracts->>year']), value).map(([k, v]) => `${k}=${v}`),
    fc.tuple(value, value).map(([k, v]) => `${k}=${v}`),
    value,
  );
  const query = fc.array(param, { maxLength: 4 }).map((xs) => (xs.length ? `?${xs.join('&')}` : ''));
  const path = fc.oneof({ weight: 4, arbitrary: pick(TABLE_PATHS) }, { weight: 1, arbitrary: value.map((v) => `/${v}`) });
  const headerValue = fc.oneof(
    text,
    pick(['return=representation', 'count=exact', 'count=planned', 'resolution=merge-duplicates', 'missing=default', 'handling=strict', 'tx=rollback', 'return=minimal, count=exact']),
    pick(['text/csv', 'application/vnd.pgrst.object+json', 'application/json', '*/*', 'application/yaml', 'application/atom+xml', 'application/openapi+json']),
    fc.tuple(fc.nat(40), fc.nat(40)).map(([a, b]) => `${a}-${b}`),
  );
  const headers = fc.dictionary(pick(['Prefer', 'Range', 'Accept', 'Content-Type', 'Accept-Profile', 'Content-Profile', 'Range-Unit', 'Authorization']), headerValue, { maxKeys: 3 });
  const row = fc.dictionary(fc.oneof(pick(COLUMNS), text), fc.oneof(text, fc.constant(null), fc.integer(), fc.boolean(), fc.jsonValue({ maxDepth: 2 })), { maxKeys: 3 });
  const body = fc.option(
    fc.oneof(row.map((r) => JSON.stringify(r)), fc.array(row, { maxLength: 3 }).map((a) => JSON.stringify(a)), text, fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v))),
    { nil: undefined },
  );
  const method = pick(['GET', 'GET', 'GET', 'HEAD', 'POST', 'POST', 'PATCH', 'PUT', 'DELETE', 'OPTIONS', 'TRACE', 'PROPFIND']);
  return fc.record({ method, path, query, headers, body }).map((r) => ({
    method: r.method,
    path: `${r.path}${r.query}`,
    headers: r.headers,
    body: r.method === 'GET' || r.method === 'HEAD' ? undefined : r.body,
  }));
}

/** Arbitrary query strings for the parser alone. */
export function queryStringArbitrary(corpus) {
  return requestArbitrary(corpus).map((r) => r.path.split('?').slice(1).join('?'));
}

/** A small catalog for fuzzing (3 labels, 6 releases, the canary), reset to this state on each call. */
export async function seedSmall(store) {
  await store.query('create table if not exists canary (id int primary key, note text not null)');
  await store.query(`insert into canary values (1, 'intact') on conflict (id) do update set note = 'intact'`);
  await store.transaction(async (tx) => {
    for (const t of ['tracks', 'releases', 'artists', 'labels']) await tx.query(`delete from ${t}`);
    for (let i = 1; i <= 3; i++) await tx.query(`insert into labels (id, name) values ($1, $2)`, [`10000000-0000-4000-8000-00000000000${i}`, `Label ${i}`]);
    for (let i = 1; i <= 6; i++) {
      await tx.query(`insert into releases (id, release_title, release_date, label_id, contracts) values ($1, $2, $3, $4, $5::text::jsonb)`, [
        `20000000-0000-4000-8000-00000000000${i}`,
        `Release ${i}`,
        `19${60 + i}-01-0${i}`,
        i <= 4 ? `10000000-0000-4000-8000-00000000000${(i % 3) + 1}` : null,
        JSON.stringify({ format: i % 2 ? 'vinyl' : 'cd', year: 1960 + i, tags: ['jazz'] }),
      ]);
    }
  });
}

/** The canary row and the schema's table list: what fuzzing must leave untouched. */
export async function invariants(store) {
  const canary = (await store.query('select id, note from canary order by id')).rows;
  const tables = (await store.query('select tablename as t from pg_tables where schemaname = $1 order by 1', [store.schema])).rows.map((r) => r.t);
  return JSON.stringify({ canary, tables });
}
