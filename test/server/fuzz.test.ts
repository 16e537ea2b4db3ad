import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/server/app.js';
import type { Store } from '../../src/store/store.js';
import { STORE_KINDS, disposeStore } from '../support/stores.js';
import { R, appFor, seedFixture, send } from './support.js';

/**
 * Throws 10,000 random requests (query strings built from grammar fragments and noise, random
 * headers and bodies) at `handle`: no answer may be a 5xx, every error body keeps PostgREST's
 * shape, and the app still answers a normal request afterwards. Most cases fail while parsing or
 * planning, so the run stays well under a minute.
 */

const COLUMNS = ['id', 'name', 'release_title', 'release_date', 'label_id', 'contracts', 'created', 'nope', 'is_compilation', 'catalog_number'];
const EMBEDS = ['labels', 'releases', 'genres', 'label_id', 'countries', 'l'];
const OPS = ['eq', 'neq', 'gt', 'lte', 'like', 'ilike', 'match', 'imatch', 'in', 'is', 'isdistinct', 'fts', 'plfts', 'phfts', 'wfts', 'cs', 'cd', 'ov', 'sl', 'adj', 'xx'];
const VALUES = ['1', 'null', 'true', 'x', '', '*a*', '(1,2)', '()', '{a,b}', '{"k":1}', '[1,2]', R[0], '1965-01-01', '"q,uo)te"', '\\', '%', "'", ';drop table labels', '^(', '2020-13-45', '99999999999999999999'];
const NOISE = [',', '.', '(', ')', ':', '::', '->', '->>', '!', '"', '*', '...', ' ', '%20', '%00', '%FF', '&', '=', 'not.', 'or', 'and', 'é', '💿', '\u0000'];

const pick = <T>(xs: readonly T[]) => fc.constantFrom(...xs);
const fragment = fc.oneof(pick(COLUMNS), pick(EMBEDS), pick(OPS), pick(VALUES), pick(NOISE), fc.string({ maxLength: 6 }));
const junk = fc.array(fragment, { minLength: 0, maxLength: 6 }).map((xs) => xs.join(''));

const filterParam = fc
  .tuple(pick(COLUMNS), fc.boolean(), pick(OPS), fc.option(pick(['(any)', '(all)', '(english)', '()']), { nil: '' }), junk)
  .map(([c, not, op, mod, v]) => `${c}=${not ? 'not.' : ''}${op}${mod}.${v}`);
const selectParam = fc
  .array(fc.oneof(pick(COLUMNS), pick(['*', 'labels(*)', 'labels!inner(name)', '...labels(name)', 'releases(id)', 'l:labels(name)', 'labels()', 'c:contracts->>format', 'id::text', 'id::bad type', 'count()']), junk), { maxLength: 4 })
  .map((xs) => `select=${xs.join(',')}`);
const orderParam = fc.array(fc.oneof(pick(COLUMNS), pick(['id.desc', 'labels(name)', 'releases(id)', 'release_date.asc.nullsfirst', 'contracts->year.desc']), junk), { maxLength: 3 }).map((xs) => `order=${xs.join(',')}`);
const treeParam = fc.tuple(pick(['or', 'and', 'not.or', 'labels.or']), junk, pick(COLUMNS), pick(OPS), junk).map(([k, a, c, op, v]) => `${k}=(${a}${c}.${op}.${v})`);
const pageParam = fc.tuple(pick(['limit', 'offset', 'labels.limit', 'releases.offset']), fc.oneof(fc.integer({ min: -5, max: 30 }).map(String), junk)).map(([k, v]) => `${k}=${v}`);
const otherParam = fc.oneof(fc.tuple(pick(['columns', 'on_conflict', 'labels.name', 'labels', 'releases.order']), junk).map(([k, v]) => `${k}=${v}`), junk);
const queryString = fc.array(fc.oneof(filterParam, selectParam, orderParam, treeParam, pageParam, otherParam), { maxLength: 5 }).map((xs) => xs.join('&'));

const headerValue = fc.oneof(junk, fc.string({ maxLength: 20 }));
const headers = fc.record(
  {
    Prefer: fc.oneof(headerValue, fc.array(pick(['return=representation', 'return=headers-only', 'count=exact', 'count=planned', 'count=estimated', 'resolution=merge-duplicates', 'resolution=ignore-duplicates', 'missing=default', 'handling=strict', 'max-affected=1', 'timezone=Bogus/Zone', 'timezone=UTC', 'tx=rollback', 'foo']), { maxLength: 4 }).map((xs) => xs.join(', '))),
    Range: fc.oneof(headerValue, fc.tuple(fc.nat(30), fc.nat(30)).map(([a, b]) => `${a}-${b}`)),
    Accept: fc.oneof(headerValue, pick(['text/csv', 'application/vnd.pgrst.object+json', 'application/vnd.pgrst.array+json;nulls=stripped', 'application/json;q=0', '*/*', 'application/yaml', 'application/atom+xml'])),
    'Content-Type': pick(['application/json', 'text/csv', 'application/x-www-form-urlencoded', 'text/plain', 'application/json; charset=utf-8']),
  },
  { requiredKeys: [] },
);

const jsonRow = fc.dictionary(pick(['name', 'id', 'release_title', 'label_id', 'nope', 'created', 'release_date']), fc.oneof(fc.string({ maxLength: 8 }), fc.constant(null), fc.integer(), pick([R[0], '2020-01-01'])), { maxKeys: 3 });
const body = fc.oneof(
  jsonRow.map((o) => JSON.stringify(o)),
  fc.array(jsonRow, { maxLength: 3 }).map((a) => JSON.stringify(a)),
  fc.string({ maxLength: 30 }),
  fc.constant('name\na\nb,c'),
  fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)),
);
const path = fc.oneof(pick(['/releases', '/labels', '/genres', '/', '/users', '/releases/x', '/Releases', '/%E2%82', '/rpc/f']), junk.map((j) => `/${encodeURIComponent(j)}`));
const method = pick(['GET', 'GET', 'GET', 'HEAD', 'POST', 'PATCH', 'PUT', 'DELETE', 'OPTIONS', 'PROPFIND']);

const RUNS = 10_000;

for (const { kind, make, skip } of STORE_KINDS) {
  describe.skipIf(skip)(`fuzzing handle() over ${kind}${skip ? ' (SKIPPED: set CATALOG_TEST_DATABASE_URL)' : ''}`, () => {
    let store: Store & { drop?(): Promise<void> };
    let app: App & { logged: string[] };

    beforeAll(async () => {
      store = await make();
      await seedFixture(store);
      app = appFor(store);
    });
    afterAll(async () => {
      if (store) await disposeStore(store);
    });

    it(`${RUNS} random requests: no 5xx, PostgREST-shaped errors, still serving afterwards`, async () => {
      let sqlReached = 0;
      await fc.assert(
        fc.asyncProperty(method, path, queryString, headers, body, async (m, p, q, h, b) => {
          let url: string;
          try {
            url = new URL(`http://localhost${p}?${q}`).toString();
          } catch {
            return; // not a URL a client could send
          }
          const hasBody = m !== 'GET' && m !== 'HEAD';
          let request: Request;
          try {
            request = new Request(url, { method: m, headers: h, body: hasBody ? b : undefined });
          } catch {
            return; // a header value fetch itself refuses
          }
          const res = await app.handle(request);
          const text = await res.text();
          if (res.status < 500 && res.status !== 400 && res.status !== 404 && res.status !== 405 && res.status !== 406 && res.status !== 416) sqlReached++;
          expect(res.status, `${m} ${url} ${JSON.stringify(h)} ${b}\n${text}`).toBeLessThan(500);
          if (res.status >= 400 && text !== '{}') {
            const err = JSON.parse(text) as Record<string, unknown>;
            expect(Object.keys(err).sort()).toEqual(['code', 'details', 'hint', 'message']);
            expect(typeof err.code).toBe('string');
            expect(typeof err.message).toBe('string');
          }
        }),
        { numRuns: RUNS, seed: Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31) },
      );
      expect(app.logged).toEqual([]);
      if (process.env.FUZZ_VERBOSE) console.log(`answered by the database: ${sqlReached} of ${RUNS}`);
      expect(sqlReached).toBeGreaterThan(RUNS / 20);
      const after = await send(app, 'GET', '/labels?select=name&order=name');
      expect(after.status).toBe(200);
      expect(Array.isArray(after.json)).toBe(true);
    });
  });
}
