import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/server/app.js';
import { type RunningServer, startServer } from '../../src/server/listen.js';
import { PGLITE_COPY_ROWS } from '../../src/server/copy-out.js';
import { COPY_CSV } from '../../src/grammar/media.js';
import type { Store } from '../../src/store/store.js';
import { STORE_KINDS, disposeStore } from '../support/stores.js';
import { L, R, appFor, seedFixture, send } from './support.js';
import { PATIENCE_MS } from '../support/patience.js';

const ACCEPT = { Accept: COPY_CSV };

/** Our COPY read extension (README "The service"): `Accept: application/vnd.catalog.copy+csv` on a GET. */
for (const { kind, make, skip } of STORE_KINDS) {
  describe.skipIf(skip)(`COPY reads over ${kind}${skip ? ' (SKIPPED: set CATALOG_TEST_DATABASE_URL)' : ''}`, () => {
    let store: Store & { drop?(): Promise<void> };
    let app: App & { logged: string[] };

    beforeAll(async () => {
      store = await make();
      app = appFor(store);
      await seedFixture(store);
    });
    afterAll(async () => {
      expect(app?.logged ?? []).toEqual([]);
      if (store) await disposeStore(store);
    });

    it('answers COPY CSV with a header line: the same rows, filters, order and limit as the JSON read', async () => {
      const path = '/releases?select=id,release_title,release_date,is_compilation,contracts&label_id=eq.' + L[0] + '&order=release_date.desc&limit=5&offset=1';
      const r = await send(app, 'GET', path, { headers: ACCEPT });
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toBe(`${COPY_CSV}; charset=utf-8`);
      expect(r.headers.get('content-range')).toBeNull();
      const json = (await send(app, 'GET', path)).json as Array<Record<string, unknown>>;
      const rows = parse(r.text, { columns: true }) as Array<Record<string, string>>;
      expect(r.text.split('\n')[0]).toBe('id,release_title,release_date,is_compilation,contracts');
      expect(rows.map((x) => x.id)).toEqual(json.map((x) => x.id));
      expect(rows.map((x) => x.is_compilation)).toEqual(json.map((x) => (x.is_compilation ? 't' : 'f')));
      expect(rows.map((x) => JSON.parse(x.contracts))).toEqual(json.map((x) => x.contracts));
    });

    it("is exactly PostgreSQL's COPY output: NULL unquoted empty, '' quoted, quotes doubled, line ends inside quotes", async () => {
      await store.query(`update releases set description = $1, vinyl = '', bandcamp = null where id = $2`, ['say "hi",\nthen \\ go', R[0]]);
      const r = await send(app, 'GET', `/releases?select=id,description,vinyl,bandcamp&id=eq.${R[0]}`, { headers: ACCEPT });
      expect(r.text).toBe(`id,description,vinyl,bandcamp\n${R[0]},"say ""hi"",\nthen \\ go","",\n`);
    });

    it('inlines filter values safely (quotes, backslashes, in-lists, JSON paths, full text)', async () => {
      const paths = [
        `/labels?select=name&name=eq.${encodeURIComponent("O'Brien\\'; drop table labels; --")}`,
        `/labels?select=name&name=in.(${encodeURIComponent('"Impulse, Records",Verve')})&order=name`,
        `/releases?select=id&contracts->>format=eq.cd&contracts->tags->0=eq."jazz"&order=id`,
        `/releases?select=id&release_title=fts.blue&order=id`,
        `/releases?select=id&release_title=like.*Blue*&order=id`,
      ];
      for (const path of paths) {
        const copy = await send(app, 'GET', path, { headers: ACCEPT });
        const json = (await send(app, 'GET', path)).json as Array<Record<string, unknown>>;
        expect(copy.status, path).toBe(200);
        const rows = parse(copy.text, { columns: true }) as Array<Record<string, string>>;
        expect(rows, path).toEqual(json.map((x) => Object.fromEntries(Object.entries(x).map(([k, v]) => [k, String(v)]))));
      }
      expect((await store.query('select count(*)::int as n from labels')).rows[0]).toEqual({ n: 3 });
    });

    it('an empty result is the header line alone; HEAD checks the read and sends no body', async () => {
      const r = await send(app, 'GET', '/labels?select=id,name&name=eq.nobody', { headers: ACCEPT });
      expect(r.status).toBe(200);
      expect(r.text).toBe('id,name\n');
      const head = await send(app, 'HEAD', '/labels?select=id,name', { headers: ACCEPT });
      expect(head.status).toBe(200);
      expect(head.text).toBe('');
    });

    it('embeds are JSON text in their cell, as the JSON read has them', async () => {
      const path = `/releases?select=id,labels(name)&id=eq.${R[0]}`;
      const r = await send(app, 'GET', path, { headers: ACCEPT });
      const rows = parse(r.text, { columns: true }) as Array<Record<string, string>>;
      expect(JSON.parse(rows[0].labels)).toEqual({ name: 'Blue Note' });
    });

    it('errors before the first row are ordinary error answers (bad value, unknown column, bad cast)', async () => {
      const bad = await send(app, 'GET', '/labels?id=eq.not-a-uuid', { headers: ACCEPT });
      expect(bad.status).toBe(400);
      expect(bad.json.code).toBe('22P02');
      const unknown = await send(app, 'GET', '/labels?select=nope', { headers: ACCEPT });
      expect(unknown.status).toBe(400);
      expect(unknown.json.code).toBe('42703');
      const cast = await send(app, 'GET', '/releases?select=catalog_number::int', { headers: ACCEPT });
      expect(cast.status).toBe(400);
      expect(cast.json.code).toBe('22P02');
    });

    it('writes asking for it are 406 PGRST107, as PostgREST answers a media type it does not offer', async () => {
      const r = await send(app, 'POST', '/labels', { body: [{ name: 'X' }], headers: { ...ACCEPT, Prefer: 'return=representation' } });
      expect(r.status).toBe(406);
      expect(r.json.code).toBe('PGRST107');
      expect((await store.query(`select count(*)::int as n from labels where name = 'X'`)).rows[0]).toEqual({ n: 0 });
    });

    it('with db-max-rows, a read it would cap is 406 (the client pages instead); a read within it streams', async () => {
      const capped = appFor(store, { maxRows: 5 });
      const r = await send(capped, 'GET', '/releases?select=id', { headers: ACCEPT });
      expect(r.status).toBe(406);
      expect(r.json.code).toBe('PGRST107');
      expect(r.json.details).toMatch(/db-max-rows/);
      const ok = await send(capped, 'GET', '/releases?select=id&limit=5&order=id', { headers: ACCEPT });
      expect(ok.status).toBe(200);
      expect(ok.text.trim().split('\n')).toEqual(['id', ...R.slice(0, 5)]);
    });

    it('on PGlite, a table over PGLITE_COPY_ROWS rows is read by COPY only with a limit up to it (its whole output is made in memory)', async () => {
      await store.query(`insert into tracks (track_title) select 'T' || i from generate_series(1, ${PGLITE_COPY_ROWS + 1}) as i`);
      try {
        const whole = await send(app, 'GET', '/tracks?select=track_title', { headers: ACCEPT });
        const limited = await send(app, 'GET', `/tracks?select=track_title&limit=${PGLITE_COPY_ROWS}`, { headers: ACCEPT });
        expect(limited.status).toBe(200);
        expect(limited.text.split('\n')).toHaveLength(PGLITE_COPY_ROWS + 2);
        if (kind === 'pglite') {
          expect(whole.status).toBe(406);
          expect(whole.json.code).toBe('PGRST107');
          expect(whole.json.details).toMatch(/PGlite/);
          expect(whole.headers.get('catalog-copy-max-rows')).toBe(String(PGLITE_COPY_ROWS));
        } else {
          expect(whole.status).toBe(200);
          expect(whole.text.split('\n')).toHaveLength(PGLITE_COPY_ROWS + 3);
        }
      } finally {
        await store.query('delete from tracks');
      }
    });

    it('over a socket: a large read arrives whole, chunked, in order', async () => {
      const server: RunningServer = await startServer({ store, port: 0, host: '127.0.0.1' });
      try {
        await store.query(`insert into tracks (track_title, lyrics) select 'T' || i, repeat('la ', 50) from generate_series(1, 20000) as i`);
        const res = await fetch(`${server.url}/tracks?select=track_title,lyrics&order=id`, { headers: ACCEPT });
        expect(res.status).toBe(200);
        expect(res.headers.get('transfer-encoding')).toBe('chunked');
        const text = await res.text();
        const lines = text.split('\n');
        expect(lines[0]).toBe('track_title,lyrics');
        expect(lines.length).toBe(20002);
        expect(lines[20001]).toBe('');
      } finally {
        await store.query('delete from tracks');
        await server.close();
      }
    });

    it('a client that goes away mid-stream stops the COPY; the service goes on answering', async () => {
      const logged: string[] = [];
      const server: RunningServer = await startServer({ store, port: 0, host: '127.0.0.1', log: (l) => logged.push(l) });
      try {
        await store.query(`insert into tracks (track_title, lyrics) select 'T' || i, repeat('la ', 200) from generate_series(1, 30000) as i`);
        // more abandoned reads than the pool has connections: each must give its connection back
        for (let k = 0; k < 6; k++) {
          const abort = new AbortController();
          const res = await fetch(`${server.url}/tracks?select=track_title,lyrics`, { headers: ACCEPT, signal: abort.signal });
          const reader = res.body!.getReader();
          await reader.read();
          abort.abort();
        }
        const after = await fetch(`${server.url}/tracks?select=track_title&limit=2&order=track_title`, { headers: ACCEPT });
        expect(after.status).toBe(200);
        expect(await after.text()).toBe('track_title\nT1\nT10\n');
        // each abandoned read is logged once its COPY stops: wait for all six (a condition, not a pause)
        const deadline = Date.now() + PATIENCE_MS;
        while (logged.length < 6 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
        expect(logged.length).toBeGreaterThanOrEqual(6);
        expect(logged.every((l) => /streamed response cut off: the (client closed the connection|response was closed)/.test(l))).toBe(true);
      } finally {
        await store.query('delete from tracks');
        await server.close();
      }
    });

    it('an error after rows went out cuts the response off (no final chunk); before any row it is an error answer', async () => {
      const logged: string[] = [];
      const server: RunningServer = await startServer({ store, port: 0, host: '127.0.0.1', log: (l) => logged.push(l) });
      try {
        // the last row's year is not a number: unsorted, PostgreSQL fails the COPY after streaming the rows before it
        await store.query(`insert into tracks (isrc_code, recording_year, lyrics) select lpad(i::text, 6, '0'), case when i = 20000 then 'MCMLXX' else i::text end, repeat('la ', 50) from generate_series(1, 20000) as i`);
        const res = await fetch(`${server.url}/tracks?select=isrc_code,recording_year::int,lyrics`, { headers: ACCEPT });
        if (kind === 'postgres') {
          expect(res.status).toBe(200);
          await expect(res.text()).rejects.toThrow();
          expect(logged.join('\n')).toMatch(/streamed response cut off: .*invalid input syntax/);
        } else {
          // PGlite makes the whole output before the first byte: the error is still an ordinary answer
          expect(res.status).toBe(400);
          expect(((await res.json()) as { code: string }).code).toBe('22P02');
        }
      } finally {
        await store.query('delete from tracks');
        await server.close();
      }
    });
  });
}
