import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/server/app.js';
import type { Store } from '../../src/store/store.js';
import { STORE_KINDS, disposeStore } from '../support/stores.js';
import { G, L, LABEL_NAMES, R, U, appFor, seedFixture, send } from './support.js';

/** HTTP spec for reads (reference §2–§6, §8 and the read rows of the §13 checklist), on both stores. */
for (const { kind, make, skip } of STORE_KINDS) {
  describe.skipIf(skip)(`reads over ${kind}${skip ? ' (SKIPPED: set CATALOG_TEST_DATABASE_URL)' : ''}`, () => {
    let store: Store & { drop?(): Promise<void> };
    let app: App & { logged: string[] };
    const get = (path: string, headers: Record<string, string> = {}) => send(app, 'GET', path, { headers });
    const ids = async (path: string, headers: Record<string, string> = {}) => {
      const r = await get(path, headers);
      expect(r.status, r.text).toBe(200);
      return (r.json as Array<{ id: string }>).map((x) => x.id).sort();
    };

    beforeAll(async () => {
      store = await make();
      await seedFixture(store);
      app = appFor(store);
    });
    afterAll(async () => {
      expect(app?.logged ?? []).toEqual([]);
      if (store) await disposeStore(store);
    });

    describe('§13 checklist: pagination and counts', () => {
      it('1: GET /releases → 200 JSON, Content-Range 0-14/*, 15 rows', async () => {
        const r = await get('/releases');
        expect(r.status).toBe(200);
        expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8');
        expect(r.headers.get('content-range')).toBe('0-14/*');
        expect(r.json).toHaveLength(15);
      });

      it('2: limit=3&offset=2 → Content-Range 2-4/*', async () => {
        const r = await get('/releases?limit=3&offset=2&order=id');
        expect(r.status).toBe(200);
        expect(r.headers.get('content-range')).toBe('2-4/*');
        expect(r.json.map((x: { id: string }) => x.id)).toEqual(R.slice(2, 5));
      });

      it('3: HEAD with limit/offset → 200, empty body, JSON type, 2-4/*', async () => {
        const r = await send(app, 'HEAD', '/releases?limit=3&offset=2&order=id');
        expect(r.status).toBe(200);
        expect(r.text).toBe('');
        expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8');
        expect(r.headers.get('content-range')).toBe('2-4/*');
      });

      it('4: Range 0-4 → 200 (no count), 5 rows', async () => {
        const r = await get('/releases?order=id', { Range: '0-4' });
        expect(r.status).toBe(200);
        expect(r.headers.get('content-range')).toBe('0-4/*');
        expect(r.json).toHaveLength(5);
      });

      it('5: Range 10-100 → truncated to 10-14/*', async () => {
        const r = await get('/releases?order=id', { Range: '10-100' });
        expect(r.status).toBe(200);
        expect(r.headers.get('content-range')).toBe('10-14/*');
        expect(r.json).toHaveLength(5);
      });

      it('Range and limit intersect; Range is ignored on HEAD and unit-prefixed ranges are ignored', async () => {
        const r = await get('/releases?order=id&limit=3', { Range: '0-1' });
        expect(r.json).toHaveLength(2);
        expect(r.headers.get('content-range')).toBe('0-1/*');
        const open = await get('/releases?order=id', { Range: '13-' });
        expect(open.headers.get('content-range')).toBe('13-14/*');
        const items = await get('/releases?order=id', { Range: 'items=0-1' });
        expect(items.json).toHaveLength(15);
        const head = await send(app, 'HEAD', '/releases', { headers: { Range: '0-1' } });
        expect(head.headers.get('content-range')).toBe('0-14/*');
      });

      it('6: Range 1-0 → 416 PGRST103 (lower boundary)', async () => {
        const r = await get('/releases', { Range: '1-0' });
        expect(r.status).toBe(416);
        expect(r.json).toEqual({
          code: 'PGRST103',
          details: 'The lower boundary must be lower than or equal to the upper boundary in the Range header.',
          hint: null,
          message: 'Requested range not satisfiable',
        });
      });

      it('7: limit=-1 → 416 PGRST103', async () => {
        const r = await get('/releases?limit=-1');
        expect(r.status).toBe(416);
        expect(r.json).toEqual({ code: 'PGRST103', details: 'Limit should be greater than or equal to zero.', hint: null, message: 'Requested range not satisfiable' });
      });

      it('8: limit=0 → 200 [] with */*', async () => {
        const r = await get('/releases?limit=0');
        expect(r.status).toBe(200);
        expect(r.json).toEqual([]);
        expect(r.headers.get('content-range')).toBe('*/*');
      });

      it('9: count=exact → 0-14/15 and Preference-Applied', async () => {
        const r = await get('/releases', { Prefer: 'count=exact' });
        expect(r.status).toBe(200);
        expect(r.headers.get('content-range')).toBe('0-14/15');
        expect(r.headers.get('preference-applied')).toBe('count=exact');
      });

      it('10: limit=5 + count=exact → 206, 0-4/15', async () => {
        const r = await get('/releases?limit=5&order=id', { Prefer: 'count=exact' });
        expect(r.status).toBe(206);
        expect(r.headers.get('content-range')).toBe('0-4/15');
      });

      it('11: offset=100 + count=exact → 416 with */15', async () => {
        const r = await get('/releases?offset=100', { Prefer: 'count=exact' });
        expect(r.status).toBe(416);
        expect(r.headers.get('content-range')).toBe('*/15');
        expect(r.json.details).toBe('An offset of 100 was requested, but there are only 15 rows.');
        expect(r.json.code).toBe('PGRST103');
      });

      it('12: offset=100 without count → 200 [] */*', async () => {
        const r = await get('/releases?offset=100');
        expect(r.status).toBe(200);
        expect(r.json).toEqual([]);
        expect(r.headers.get('content-range')).toBe('*/*');
      });

      it('13/14: no match → [] with */* or */0', async () => {
        const a = await get(`/releases?id=eq.${U}`);
        expect([a.status, a.json, a.headers.get('content-range')]).toEqual([200, [], '*/*']);
        const b = await get(`/releases?id=eq.${U}`, { Prefer: 'count=exact' });
        expect([b.status, b.json, b.headers.get('content-range')]).toEqual([200, [], '*/0']);
      });

      it('§6.3 edges: offset == total is 206, offset 1 on an empty result is 416, limit=0 with count is 206 */15', async () => {
        const a = await get('/releases?offset=15', { Prefer: 'count=exact' });
        expect([a.status, a.headers.get('content-range')]).toEqual([206, '*/15']);
        const b = await get(`/releases?id=eq.${U}&offset=1`, { Prefer: 'count=exact' });
        expect([b.status, b.headers.get('content-range'), b.json.details]).toEqual([416, '*/0', 'An offset of 1 was requested, but there are only 0 rows.']);
        const c = await get('/releases?limit=0', { Prefer: 'count=exact' });
        expect([c.status, c.headers.get('content-range')]).toEqual([206, '*/15']);
      });

      it('negative offset is ignored; non-numeric limit is ignored', async () => {
        expect((await get('/releases?offset=-3')).headers.get('content-range')).toBe('0-14/*');
        expect((await get('/releases?limit=abc')).json).toHaveLength(15);
      });

      it('count=planned and count=estimated give a number; count=none is our "no count"', async () => {
        const p = await get('/releases?limit=2', { Prefer: 'count=planned' });
        expect([200, 206]).toContain(p.status);
        expect(p.headers.get('content-range')).toMatch(/^0-1\/\d+$/);
        expect(p.headers.get('preference-applied')).toBe('count=planned');
        const e = await get('/releases?limit=2', { Prefer: 'count=estimated' });
        const total = Number(e.headers.get('content-range')?.split('/')[1]);
        expect(total).toBeGreaterThanOrEqual(15);
        const n = await get('/releases?limit=2', { Prefer: 'count=none, handling=strict' });
        expect(n.status).toBe(200);
        expect(n.headers.get('content-range')).toBe('0-1/*');
      });

      it('!inner and embed filters are reflected in the count', async () => {
        const r = await get('/releases?select=id,labels!inner(name)&labels.name=eq.Verve', { Prefer: 'count=exact' });
        expect(r.headers.get('content-range')).toBe('0-5/6');
      });
    });

    describe('§13 checklist: singular, negotiation, CSV, errors', () => {
      it('15: singular Accept with one row → bare object', async () => {
        const r = await get(`/releases?id=eq.${R[0]}`, { Accept: 'application/vnd.pgrst.object+json' });
        expect(r.status).toBe(200);
        expect(r.headers.get('content-type')).toBe('application/vnd.pgrst.object+json; charset=utf-8');
        expect(r.json.id).toBe(R[0]);
        expect(Array.isArray(r.json)).toBe(false);
      });

      it('16/17: singular Accept with 0 or 15 rows → 406 PGRST116', async () => {
        const a = await get(`/releases?id=eq.${U}`, { Accept: 'application/vnd.pgrst.object+json' });
        expect(a.status).toBe(406);
        expect(a.json).toEqual({ code: 'PGRST116', details: 'The result contains 0 rows', hint: null, message: 'JSON object requested, multiple (or no) rows returned' });
        const b = await get('/releases', { Accept: 'application/vnd.pgrst.object' });
        expect(b.status).toBe(406);
        expect(b.json.details).toBe('The result contains 15 rows');
      });

      it('18/19: unknown Accept → 406 PGRST107, with */* → JSON', async () => {
        const a = await get('/releases', { Accept: 'text/unknowntype' });
        expect(a.status).toBe(406);
        expect(a.json).toEqual({ code: 'PGRST107', details: null, hint: null, message: 'None of these media types are available: text/unknowntype' });
        const b = await get('/releases', { Accept: 'text/unknowntype, */*' });
        expect(b.status).toBe(200);
        expect(b.headers.get('content-type')).toBe('application/json; charset=utf-8');
        const c = await get('/releases', { Accept: 'application/openapi+json' });
        expect(c.status).toBe(406);
      });

      it('20: CSV output: header, rows, no trailing newline, quoting', async () => {
        const r = await get('/labels?select=name&order=name', { Accept: 'text/csv' });
        expect(r.status).toBe(200);
        expect(r.headers.get('content-type')).toBe('text/csv; charset=utf-8');
        expect(r.text).toBe('name\n"Blue Note"\n"Impulse, Records"\nVerve');
      });

      it('CSV: first acceptable type wins, booleans are t/f, NULL is empty, empty result is a newline', async () => {
        const r = await get(`/releases?select=catalog_number,is_compilation,release_date&id=in.(${R[4]},${R[14]})&order=catalog_number`, {
          Accept: 'text/csv, application/json',
        });
        expect(r.text).toBe('catalog_number,is_compilation,release_date\nCAT-15,t,\nCAT-5,t,1960-06-15');
        const e = await get(`/releases?select=id&id=eq.${U}`, { Accept: 'text/csv' });
        expect(e.text).toBe('\n');
      });

      it('nulls=stripped drops null-valued keys', async () => {
        const r = await get(`/releases?select=id,release_date,label_id&id=eq.${R[14]}`, { Accept: 'application/vnd.pgrst.array+json;nulls=stripped' });
        expect(r.status).toBe(200);
        expect(r.json).toEqual([{ id: R[14] }]);
        const o = await get(`/releases?select=id,release_date&id=eq.${R[14]}`, { Accept: 'application/vnd.pgrst.object+json;nulls=stripped' });
        expect(o.json).toEqual({ id: R[14] });
      });

      it('21: GET /releases?id=0 → 400 PGRST100', async () => {
        const r = await get('/releases?id=0');
        expect(r.status).toBe(400);
        expect(r.json).toEqual({
          code: 'PGRST100',
          details: 'unexpected "0" expecting "not" or operator (eq, gt, ...)',
          hint: null,
          message: '"failed to parse filter (0)" (line 1, column 1)',
        });
      });

      it('22: bad order → PGRST100 with parser position', async () => {
        const r = await get('/releases?order=id.asc.nullslasttt');
        expect(r.status).toBe(400);
        expect(r.json).toEqual({
          code: 'PGRST100',
          details: 'unexpected \'t\' expecting "," or end of input',
          hint: null,
          message: '"failed to parse order (id.asc.nullslasttt)" (line 1, column 17)',
        });
      });

      it('23: or=() → PGRST100 logic tree', async () => {
        const r = await get('/releases?or=()');
        expect(r.status).toBe(400);
        expect(r.json).toEqual({
          code: 'PGRST100',
          details: 'unexpected ")" expecting field name (* or [a..z0..9_$]), negation operator (not) or logic operator (and, or)',
          hint: null,
          message: '"failed to parse logic tree (())" (line 1, column 4)',
        });
      });

      it('24: is.nil and is.not_null → PGRST100', async () => {
        expect((await get('/releases?label_id=is.nil')).json.code).toBe('PGRST100');
        expect((await get('/releases?label_id=is.not_null')).json.code).toBe('PGRST100');
      });

      it('25: is.null / not.is.null / is.NULL', async () => {
        expect(await ids('/releases?label_id=is.null')).toEqual([R[14]]);
        expect(await ids('/releases?label_id=not.is.null')).toHaveLength(14);
        expect(await ids('/releases?label_id=is.NULL')).toEqual([R[14]]);
      });

      it('26: in.() → [] and not.in.() → all', async () => {
        expect(await ids('/releases?id=in.()')).toEqual([]);
        expect(await ids('/releases?id=not.in.()')).toHaveLength(15);
      });

      it('27: unknown column → 400 42703', async () => {
        const r = await get('/releases?select=nope');
        expect(r.status).toBe(400);
        expect(r.json).toEqual({ code: '42703', details: null, hint: null, message: 'column releases.nope does not exist' });
        expect((await get('/releases?nope=eq.1')).json.code).toBe('42703');
        expect((await get('/releases?order=nope')).json.code).toBe('42703');
      });

      it('28: unknown table → 404 42P01 with the store schema', async () => {
        const r = await get('/users');
        expect(r.status).toBe(404);
        expect(r.json).toEqual({ code: '42P01', details: null, hint: null, message: `relation "${store.schema}.users" does not exist` });
        expect((await get('/Releases')).status).toBe(404);
        expect((await get('/users?select=*,labels(*)')).json.code).toBe('PGRST200');
      });

      it('29: nested path → 404 {}', async () => {
        for (const path of ['/releases/abc', '/a/b/c', '/releases/']) {
          const r = await get(path);
          expect(r.status).toBe(404);
          expect(r.text).toBe('{}');
        }
      });

      it('30: unsupported method → 405 PGRST117 (TRACE cannot be built as a fetch Request; PROPFIND and root writes are the same rule)', async () => {
        const r = await send(app, 'PROPFIND', '/releases');
        expect(r.status).toBe(405);
        expect(r.json).toEqual({ code: 'PGRST117', details: null, hint: null, message: 'Unsupported HTTP method: PROPFIND' });
        const root = await send(app, 'POST', '/', { body: {} });
        expect([root.status, root.json.code]).toEqual([405, 'PGRST117']);
      });

      it('41/42: handling=strict rejects unknown preferences, lenient ignores and echoes', async () => {
        const a = await get('/releases', { Prefer: 'handling=strict, foo' });
        expect(a.status).toBe(400);
        expect(a.json).toEqual({ code: 'PGRST122', details: 'Invalid preferences: foo', hint: null, message: 'Invalid preferences given with handling=strict' });
        const b = await get('/releases', { Prefer: 'handling=lenient, foo' });
        expect(b.status).toBe(200);
        expect(b.headers.get('preference-applied')).toBe('handling=lenient');
      });

      it('timezone= changes timestamptz output and is echoed; an unknown zone is ignored (lenient) or PGRST122 (strict)', async () => {
        const r = await get(`/releases?select=created&id=eq.${R[0]}`, { Prefer: 'timezone=Asia/Tokyo' });
        expect(r.headers.get('preference-applied')).toBe('timezone=Asia/Tokyo');
        expect(r.json[0].created).toMatch(/\+09:00$/);
        const utc = await get(`/releases?select=created&id=eq.${R[0]}`);
        expect(utc.json[0].created).toMatch(/\+00:00$/);
        const bad = await get('/releases?limit=1', { Prefer: 'timezone=Mars/Olympus' });
        expect(bad.status).toBe(200);
        expect(bad.headers.get('preference-applied')).toBeNull();
        const strict = await get('/releases?limit=1', { Prefer: 'handling=strict, timezone=Mars/Olympus' });
        expect([strict.status, strict.json.code, strict.json.details]).toEqual([400, 'PGRST122', 'Invalid preferences: timezone=Mars/Olympus']);
      });

      it('tx= is ignored and not echoed', async () => {
        const r = await get('/releases?limit=1', { Prefer: 'tx=rollback' });
        expect(r.status).toBe(200);
        expect(r.headers.get('preference-applied')).toBeNull();
      });

      it('Content-Location lists the query parameters sorted', async () => {
        const r = await get('/releases?select=id&catalog_number=eq.CAT-1&and=(id.not.is.null)');
        expect(r.headers.get('content-location')).toBe('/releases?and=(id.not.is.null)&catalog_number=eq.CAT-1&select=id');
        expect((await get('/labels')).headers.get('content-location')).toBe('/labels');
      });
    });

    describe('§3 operators', () => {
      const cases: Array<[string, string, number | string[]]> = [
        ['eq', '/releases?release_title=eq.Kind%20of%20Blue', [R[0]]],
        ['eq with an unquoted value full of reserved characters', '/releases?release_title=eq.Vol. 2: Live (Remastered)', [R[4]]],
        ['eq. with an empty value matches the empty string', '/releases?release_version=eq.', 15],
        ['neq', '/releases?catalog_number=neq.CAT-1', 14],
        ['gt', '/releases?release_date=gt.1969-01-01', [R[13]]],
        ['gte', '/releases?release_date=gte.1965-01-01', [R[9], R[10], R[11], R[12], R[13]]],
        ['lt', '/releases?release_date=lt.1960-01-01', [R[0], R[1], R[2], R[3]]],
        ['lte', '/releases?release_date=lte.1956-02-15', [R[0]]],
        ['like with * wildcards', '/releases?release_title=like.*Train*', [R[1], R[10]]],
        ['like with %25', '/releases?release_title=like.%25Train', [R[1], R[10]]],
        ['ilike', '/releases?release_title=ilike.*BLUE*', [R[0], R[1]]],
        ['match', '/releases?release_title=match.^S', [R[3], R[6], R[7]]],
        ['imatch', '/releases?release_title=imatch.^s', [R[3], R[6], R[7]]],
        ['in', `/releases?id=in.(${R[0]},${R[1]})`, [R[0], R[1]]],
        ['in with quoted elements', '/releases?release_title=in.("Verve Live, Vol. 1","Vol. 2: Live (Remastered)")', [R[4], R[12]]],
        ['not.in', `/releases?id=not.in.(${R[0]},${R[1]})`, 13],
        ['is.true', '/releases?is_compilation=is.true', [R[4], R[9], R[14]]],
        ['is.FAlSe', '/releases?is_compilation=is.FAlSe', 12],
        ['is.unknown', '/releases?is_compilation=is.unknown', 0],
        ['isdistinct includes NULL rows', `/releases?label_id=isdistinct.${L[0]}`, 7],
        ['not.isdistinct', `/releases?label_id=not.isdistinct.${L[0]}`, 8],
        ['fts (implicit text @@ tsquery)', '/releases?release_title=fts.train', [R[1], R[10]]],
        ['fts with a config and &', '/releases?release_title=fts(english).blue%26train', [R[1]]],
        ['not.fts', '/releases?release_title=not.fts(english).train', 13],
        ['plfts', '/releases?release_title=plfts.blue%20train', [R[1]]],
        ['phfts', '/releases?release_title=phfts(english).night%20train', [R[10]]],
        ['wfts with or and negation', '/releases?release_title=wfts(english).blue%20or%20night', [R[0], R[1], R[10]]],
        ['wfts -word', '/releases?release_title=wfts(english).train%20-night', [R[1]]],
        ['cs on jsonb', '/releases?contracts=cs.{"format":"cd"}', 7],
        ['cd on a jsonb path', '/releases?contracts->tags=cd.["jazz","live"]', 15],
        ['not.cs on a jsonb path inside', '/releases?contracts->tags=not.cs.["live"]', 12],
        ['like(any)', '/releases?release_title=like(any).{Kind*,Blue*}', [R[0], R[1]]],
        ['gt(all)', '/releases?release_date=gt(all).{1960-01-01,1965-06-01}', [R[10], R[11], R[12], R[13]]],
        ['eq(any)', `/releases?id=eq(any).{${R[0]},${R[1]},${R[2]}}`, [R[0], R[1], R[2]]],
        ['json path ->> text compare', '/releases?contracts->>format=eq.vinyl', 8],
        ['json path -> jsonb compare', '/releases?contracts->year=gt.1965', [R[10], R[11], R[12], R[13], R[14]]],
        ['json path with an array index', '/releases?contracts->tags->>1=eq.live', [R[3], R[7], R[11]]],
        ['json path -> equal to a JSON string', '/releases?contracts->tags->0=eq."jazz"', 15],
        ['repeated filters are ANDed', '/releases?release_date=gte.1960-01-01&release_date=lt.1962-01-01', [R[4], R[5]]],
        ['or tree', '/releases?or=(label_id.is.null,release_date.lt.1957-01-01)', [R[0], R[14]]],
        ['nested and inside or', '/releases?or=(label_id.is.null,and(release_date.gte.1960-01-01,release_date.lt.1962-01-01))', [R[4], R[5], R[14]]],
        ['not.or', '/releases?not.or=(label_id.is.null,is_compilation.is.true)', 12],
        ['and with whitespace and nested not', `/releases?and=( or( id.eq.${R[0]},id.eq.${R[1]}), id.not.eq.${R[1]})`, [R[0]]],
        ['quoted values in trees', '/releases?or=(release_title.eq."Verve Live, Vol. 1",release_title.like."*(Remastered)*")', [R[4], R[12]]],
        ['json path inside a tree', '/releases?or=(contracts->>format.eq.cd,label_id.is.null)', 8],
        ['several trees and filters are ANDed', `/releases?or=(id.eq.${R[0]},id.eq.${R[1]})&or=(id.eq.${R[1]},id.eq.${R[2]})&label_id=not.is.null`, [R[1]]],
      ];
      for (const [name, path, expected] of cases) {
        it(name, async () => {
          const got = await ids(path);
          if (typeof expected === 'number') expect(got).toHaveLength(expected);
          else expect(got).toEqual([...expected].sort());
        });
      }

      it('an operator the column type lacks is PostgreSQL 42883 → 404', async () => {
        const r = await get('/releases?id=like.*1*');
        expect(r.status).toBe(404);
        expect(r.json.code).toBe('42883');
        for (const op of ['ov.{a}', 'sl.(1,2)', 'sr.(1,2)', 'nxr.(1,2)', 'nxl.(1,2)', 'adj.(1,2)']) {
          const x = await get(`/releases?contracts=${op}`);
          expect([x.status, x.json.code], op).toEqual([404, '42883']);
        }
      });

      it('a bad literal is PostgreSQL 22P02/22007 → 400', async () => {
        const a = await get('/releases?id=eq.nope');
        expect([a.status, a.json.code, a.json.message]).toEqual([400, '22P02', 'invalid input syntax for type uuid: "nope"']);
        const b = await get('/releases?release_date=gt.yesterdayish');
        expect([b.status, b.json.code]).toEqual([400, '22007']);
        const c = await get('/releases?release_title=fts(nolang).x');
        expect(c.status).toBe(400);
      });

      it('modifiers are only allowed on their operators', async () => {
        expect((await get('/releases?id=neq(any).{a}')).json.code).toBe('PGRST100');
        expect((await get('/releases?id=in(any).{a}')).json.code).toBe('PGRST100');
      });
    });

    describe('§4 select', () => {
      it('* gives every column in table order; duplicates are kept', async () => {
        const r = await get(`/labels?id=eq.${L[0]}`);
        expect(Object.keys(r.json[0])).toEqual(['id', 'name', 'created', 'updated']);
        const d = await get(`/labels?select=name,*&id=eq.${L[0]}`);
        expect(d.text.match(/"name"/g)).toHaveLength(2);
        expect((await get('/labels?select=')).json[0]).toHaveProperty('created');
      });

      it('40: alias renames the key', async () => {
        const r = await get(`/releases?select=t:release_title&id=eq.${R[0]}`);
        expect(r.json).toEqual([{ t: 'Kind of Blue' }]);
      });

      it('casts, including SQL-standard multi-word names; a bad type is 42704', async () => {
        const r = await get(`/releases?select=id::text,d:release_date::text,y:contracts->>year::integer,f:contracts->year::double precision&id=eq.${R[0]}`);
        expect(r.status).toBe(200);
        expect(r.json).toEqual([{ id: R[0], d: '1956-02-15', y: 1956, f: 1956 }]);
        const bad = await get('/releases?select=id::nosuchtype');
        expect(bad.status).toBe(400);
        expect(bad.json).toEqual({ code: '42704', details: null, hint: null, message: 'type "nosuchtype" does not exist' });
        const injection = await get('/releases?select=id::int or true');
        expect(injection.status).toBe(400);
        expect(injection.json.code).toBe('42704');
      });

      it('json paths: the key is the last named key', async () => {
        const r = await get(`/releases?select=contracts->>format,contracts->tags->0,contracts->tags->>1&id=eq.${R[3]}`);
        // Two keys named `tags` (index steps do not name a key): the text keeps both, JSON.parse the last.
        expect(r.text.match(/"tags"/g)).toHaveLength(2);
        expect(r.json).toEqual([{ format: 'cd', tags: 'live' }]);
        const k = await get(`/releases?select=contracts->tags->0&id=eq.${R[3]}`);
        expect(k.json).toEqual([{ tags: 'jazz' }]);
      });

      it('31: many-to-one embed with alias: object or null', async () => {
        const r = await get('/releases?select=id,label:labels(name)&order=id');
        expect(r.json).toHaveLength(15);
        expect(r.json[14]).toEqual({ id: R[14], label: null });
        expect(r.json[0]).toEqual({ id: R[0], label: { name: LABEL_NAMES[0] } });
      });

      it('32: one-to-many embed: L3 has releases []', async () => {
        const r = await get('/labels?select=name,releases(id)&order=name');
        const byName = Object.fromEntries(r.json.map((x: { name: string; releases: unknown[] }) => [x.name, x.releases]));
        expect(byName['Impulse, Records']).toEqual([]);
        expect(byName['Blue Note']).toHaveLength(8);
        expect(byName.Verve).toHaveLength(6);
      });

      it('33: !inner drops rows without a label', async () => {
        const r = await get('/releases?select=id,labels!inner(name)', { Prefer: 'count=exact' });
        expect(r.json).toHaveLength(14);
        expect(r.headers.get('content-range')).toBe('0-13/14');
        const left = await get('/releases?select=id,labels!left(name)');
        expect(left.json).toHaveLength(15);
      });

      it('34: embedded filter keeps parents, nulls the embed', async () => {
        const r = await get('/releases?select=id,labels(name)&labels.name=eq.Blue%20Note&order=id');
        expect(r.json).toHaveLength(15);
        expect(r.json.filter((x: { labels: unknown }) => x.labels !== null).map((x: { id: string }) => x.id)).toEqual(R.slice(0, 8));
      });

      it('35: empty embed + is.null anti-join', async () => {
        const r = await get('/releases?select=id,labels()&labels=is.null');
        expect(r.json).toEqual([{ id: R[14] }]);
        const n = await get('/releases?select=id,labels()&labels.name=eq.Verve&labels=not.is.null');
        expect(n.json).toHaveLength(6);
      });

      it('OR across embeds', async () => {
        const r = await get('/releases?select=id,labels(),genres()&labels.name=eq.Verve&genres.name=eq.Jazz&or=(labels.not.is.null,genres.not.is.null)');
        // Verve: R9..R14; Jazz (odd, not multiple of 3): R1, R5, R7, R11, R13.
        expect(r.json.map((x: { id: string }) => x.id).sort()).toEqual([R[0], R[4], R[6], R[8], R[9], R[10], R[11], R[12], R[13]].sort());
      });

      it('36: filtering an embed that is not selected → PGRST108', async () => {
        const r = await get('/releases?select=*&labels.name=eq.x');
        expect(r.status).toBe(400);
        expect(r.json).toEqual({
          code: 'PGRST108',
          details: null,
          hint: "Verify that 'labels' is included in the 'select' query parameter.",
          message: "'labels' is not an embedded resource in this request",
        });
        expect((await get('/releases?select=id&labels.order=name')).json.code).toBe('PGRST108');
        expect((await get('/releases?select=id&labels.limit=1')).json.code).toBe('PGRST108');
      });

      it('38: spread of a to-many → PGRST119', async () => {
        const r = await get('/labels?select=*,...releases(*)');
        expect(r.status).toBe(400);
        expect(r.json).toEqual({
          code: 'PGRST119',
          details: "'labels' and 'releases' do not form a many-to-one or one-to-one relationship",
          hint: null,
          message: "A spread operation on 'releases' is not possible",
        });
      });

      it('39: spread of a missing parent gives null keys', async () => {
        const r = await get(`/releases?select=id,...labels(label_name:name)&id=eq.${R[14]}`);
        expect(r.json).toEqual([{ id: R[14], label_name: null }]);
        const s = await get(`/releases?select=id,...labels(label_name:name,label_id:id)&id=eq.${R[0]}`);
        expect(s.json).toEqual([{ id: R[0], label_name: 'Blue Note', label_id: L[0] }]);
      });

      it('hints by FK column or constraint name; FK column as target', async () => {
        const a = await get(`/releases?select=labels!label_id(name)&id=eq.${R[0]}`);
        expect(a.json).toEqual([{ labels: { name: 'Blue Note' } }]);
        const b = await get(`/releases?select=labels!releases_label_id_fkey!inner(name)&id=eq.${R[0]}`);
        expect(b.json).toEqual([{ labels: { name: 'Blue Note' } }]);
        const c = await get(`/releases?select=label_id(name)&id=eq.${R[0]}`);
        expect(c.json).toEqual([{ label_id: { name: 'Blue Note' } }]);
        const d = await get(`/labels?select=releases!label_id(id)&id=eq.${L[2]}`);
        expect(d.json).toEqual([{ releases: [] }]);
      });

      it('genres and subgenres embed both ways', async () => {
        const r = await get(`/releases?select=id,genres(name),subgenres(name)&id=in.(${R[0]},${R[2]})&order=id`);
        expect(r.json).toEqual([
          { id: R[0], genres: { name: 'Jazz' }, subgenres: { name: 'Hard Bop' } },
          { id: R[2], genres: null, subgenres: null },
        ]);
        const g = await get(`/genres?select=name,releases(id)&id=eq.${G[0]}&releases.order=id`);
        expect(g.json[0].releases.map((x: { id: string }) => x.id)).toEqual([R[0], R[4], R[6], R[10], R[12]]);
        const s = await get('/subgenres?select=name,releases(n:id)');
        expect(s.json[0].releases).toHaveLength(2);
      });

      it('nested embeds and nested embed filters', async () => {
        const r = await get(`/labels?select=name,releases(id,genres(name))&id=eq.${L[0]}&releases.genres.name=eq.Jazz&releases.order=id&releases.limit=2`);
        expect(r.json).toEqual([{ name: 'Blue Note', releases: [{ id: R[0], genres: { name: 'Jazz' } }, { id: R[1], genres: null }] }]);
        const inner = await get(`/labels?select=name,releases!inner(id,genres!inner(name))&releases.genres.name=eq.Bossa%20Nova&order=name`);
        expect(inner.json.map((x: { name: string }) => x.name)).toEqual(['Blue Note', 'Verve']);
        expect(inner.json[0].releases.map((x: { id: string }) => x.id).sort()).toEqual([R[1], R[3], R[7]]);
      });

      it('embedded order, limit, offset and trees', async () => {
        const r = await get(`/labels?select=name,releases(release_title)&id=eq.${L[0]}&releases.order=release_title.desc&releases.limit=2&releases.offset=1`);
        expect(r.json[0].releases).toEqual([{ release_title: 'Speak No Evil' }, { release_title: 'Song for My Father' }]);
        const t = await get('/labels?select=name,releases(id)&releases.or=(id.eq.' + R[0] + ',id.eq.' + R[9] + ')&order=name');
        expect(t.json.map((x: { releases: unknown[] }) => x.releases.length)).toEqual([1, 0, 1]);
        const one = await get(`/releases?select=id,labels(name)&labels.offset=1&id=eq.${R[0]}`);
        expect(one.json).toEqual([{ id: R[0], labels: null }]);
        const aliased = await get(`/releases?select=id,l:labels(name)&l.name=eq.Verve&id=eq.${R[0]}`);
        expect(aliased.json).toEqual([{ id: R[0], l: null }]);
      });

      it('relationship errors: PGRST200 with schema, aggregates PGRST123', async () => {
        const r = await get('/releases?select=*,countries(*)');
        expect(r.status).toBe(400);
        expect(r.json).toEqual({
          code: 'PGRST200',
          details: `Searched for a foreign key relationship between 'releases' and 'countries' in the schema '${store.schema}', but no matches were found.`,
          hint: null,
          message: "Could not find a relationship between 'releases' and 'countries' in the schema cache",
        });
        const typo = await get('/releases?select=*,label(*)');
        expect(typo.json.hint).toBe("Perhaps you meant 'labels' instead of 'label'.");
        const h = await get('/releases?select=*,labels!nope(*)');
        expect(h.json.details).toContain("using the hint 'nope'");
        expect((await get('/releases?select=count()')).json.code).toBe('PGRST123');
        expect((await get('/releases?select=labels(nope)')).json).toMatchObject({ code: '42703', message: 'column labels.nope does not exist' });
      });
    });

    describe('§5 order', () => {
      const order = async (q: string) => ((await get(`/releases?select=id&${q}`)).json as Array<{ id: string }>).map((x) => x.id);

      it('asc/desc with PostgreSQL null defaults and explicit nulls', async () => {
        expect((await order('order=release_date'))[14]).toBe(R[14]);
        expect((await order('order=release_date.desc'))[0]).toBe(R[14]);
        expect((await order('order=release_date.desc.nullslast'))[14]).toBe(R[14]);
        expect((await order('order=release_date.nullsfirst'))[0]).toBe(R[14]);
        expect(await order('order=label_id.desc.nullslast,id.desc&limit=3')).toEqual([R[13], R[12], R[11]]);
      });

      it('by json path', async () => {
        expect(await order('order=contracts->year.desc&limit=2')).toEqual([R[14], R[13]]);
        expect(await order('order=contracts->>format,id&limit=1')).toEqual([R[1]]);
      });

      it('by a to-one embed column, alias allowed', async () => {
        const r = await get('/releases?select=id,labels(name)&order=labels(name).desc.nullslast,id&limit=2');
        expect(r.json.map((x: { id: string }) => x.id)).toEqual([R[8], R[9]]);
        const a = await get('/releases?select=id,label:labels(name)&order=label(name).asc.nullsfirst,id&limit=1');
        expect(a.json[0].id).toBe(R[14]);
        const hidden = await get('/releases?select=id,labels()&order=labels(name),id&limit=1');
        expect(hidden.json).toEqual([{ id: R[0] }]);
      });

      it('37: order by a to-many embed → PGRST118; unknown embed → PGRST108; bad direction → PGRST100', async () => {
        const r = await get('/labels?select=*,releases(*)&order=releases(id)');
        expect(r.status).toBe(400);
        expect(r.json).toEqual({
          code: 'PGRST118',
          details: "'labels' and 'releases' do not form a many-to-one or one-to-one relationship",
          hint: null,
          message: "A related order on 'releases' is not possible",
        });
        expect((await get('/releases?order=labels(name)')).json.code).toBe('PGRST108');
        expect((await get('/releases?order=id.ac')).json.code).toBe('PGRST100');
      });
    });

    describe('max rows (db-max-rows)', () => {
      it('caps reads at every level', async () => {
        const capped = appFor(store, { maxRows: 2 });
        const r = await send(capped, 'GET', '/labels?select=name,releases(id)&order=name', { headers: { Prefer: 'count=exact' } });
        expect(r.json).toHaveLength(2);
        expect(r.json[0].releases).toHaveLength(2);
        expect(r.headers.get('content-range')).toBe('0-1/3');
        expect(r.status).toBe(206);
      });
    });
  });
}
