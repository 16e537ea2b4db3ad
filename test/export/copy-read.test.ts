import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CatalogClient } from '../../src/client/client.js';
import { copyCsvRewriter } from '../../src/export/copy-csv.js';
import { exportTable } from '../../src/export/export.js';
import { fileSink } from '../../src/export/sink.js';
import { parseQuery } from '../../src/grammar/parse.js';
import { COPY_CSV } from '../../src/grammar/media.js';
import { importFile } from '../../src/import/engine.js';
import type { HttpRequest, Transport } from '../../src/client/transport.js';
import { PGLITE_COPY_ROWS } from '../../src/server/copy-out.js';
import { type RunningServer, startServer } from '../../src/server/listen.js';
import type { Store } from '../../src/store/store.js';
import { disposeStore, STORE_KINDS, tempDir } from '../support/stores.js';
import { file, rowsOf, serverFor, table, tmp } from '../import/support.js';

/** Text that every quoting rule of COPY CSV and of record literals meets, and the null token's look-alikes. */
const TEXTS: Array<string | null> = [
  null, '', ' ', 'plain', 'two words', 'tab\there', 'line\nbreak', 'cr\rhere', 'crlf\r\nend', 'quote "x"', 'comma, x', 'back\\slash',
  '(paren)', 'ends)', '\\N', '\\.', 'NULL', 'Künstler 東京', 'vt\vff\f', ' lead', 'trail ', '"', ',', '()', '\\', '{a,b}', 'x'.repeat(3000),
];
const JSONS: Array<string | null> = [null, '{"k":"v\\"w\\\\x"}', '[1, 2]', '"text"', '{}', 'null', '{"a b": "(c)", "n": [null, true]}'];
const DATES = [null, '2024-02-29'];
const TIMES = ['2024-01-01 00:00:00+05', '1999-12-31 23:59:59.123456+00', '2020-06-01 12:00:00.5-03:30'];

async function seedArtists(store: Store): Promise<void> {
  for (let i = 0; i < TEXTS.length * 2; i++) {
    const id = `a0000000-0000-4000-8000-${String(i + 1).padStart(12, '0')}`;
    await store.query(
      `insert into ${store.schema}.artists (id, stage_name, city, biography, is_signed, birthdate, metadata, created, updated)
       values ($1, $2, $3, $4, $5, $6, $7::text::jsonb, $8::timestamptz, $8::timestamptz)`,
      [id, TEXTS[i % TEXTS.length], i % 3 === 0 ? null : i % 3 === 1 ? '' : 'Berlin', TEXTS[(i * 7) % TEXTS.length], i % 3 === 0 ? null : i % 2 === 0, DATES[i % 2], JSONS[i % JSONS.length], TIMES[i % TIMES.length]],
    );
  }
}

for (const kind of STORE_KINDS) {
  describe.skipIf(kind.skip)(`export by one COPY read (${kind.kind}${kind.skip ? ', SKIPPED: set CATALOG_TEST_DATABASE_URL' : ''})`, () => {
    let store: Store;
    let server: RunningServer;
    let client: CatalogClient;
    beforeAll(async () => {
      store = await kind.make();
      await seedArtists(store);
      server = await startServer({ store, port: 0, host: '127.0.0.1' });
      client = new CatalogClient({ baseUrl: server.url });
    });
    afterAll(async () => {
      await client?.close();
      await server?.close();
      await disposeStore(store);
    });

    /** A transport over HTTP that counts COPY reads; `pages` hides its streaming (the page path). */
    function transport(pages: boolean): Transport & { copies: number } {
      const http: Transport = client;
      const t = {
        copies: 0,
        send: (req: HttpRequest) => http.send(req),
        ...(pages ? {} : { stream: (req: HttpRequest) => (t.copies++, http.stream!(req)) }),
      };
      return t;
    }

    async function exportWith(t: Transport, query: string, nullToken: string | undefined): Promise<{ n: number; bytes: Buffer }> {
      const path = join(tempDir('copy-export-'), 'out.csv');
      const sink = fileSink(path);
      const n = await exportTable({ transport: t, table: table('artists'), format: 'csv', out: sink, query: parseQuery(query), pageSize: 7, nullToken });
      await sink.commit();
      return { n, bytes: readFileSync(path) };
    }

    const CASES: Array<[string, string | undefined]> = [
      ['', undefined],
      ['', 'NULL'],
      ['', ''],
      ['', 'a,b'],
      ['select=id,stage_name,is_signed,birthdate,metadata,created', undefined],
      ['select=id,stage_name', undefined],
      ['city=eq.Berlin&order=stage_name.desc.nullsfirst,birthdate&limit=9&offset=2', undefined],
      ['stage_name=eq.nobody', undefined],
    ];

    it('writes byte for byte what the CSV pages write: nulls, empty strings, quotes, line ends, backslashes, booleans, timestamps, jsonb, --null', async () => {
      for (const [query, nullToken] of CASES) {
        const viaCopy = transport(false);
        const viaPages = transport(true);
        const copy = await exportWith(viaCopy, query, nullToken);
        const pages = await exportWith(viaPages, query, nullToken);
        expect(viaCopy.copies, query).toBe(1);
        expect(copy.n, `${query} ${nullToken}`).toBe(pages.n);
        expect(copy.bytes.toString('utf8'), `${query} ${nullToken}`).toBe(pages.bytes.toString('utf8'));
        expect(copy.bytes.equals(pages.bytes)).toBe(true);
      }
    });

    it('imports back to the same rows (a text that is the null token itself reads back as null, on either path)', async () => {
      const { bytes } = await exportWith(transport(false), '', undefined);
      const copy = await kind.make();
      try {
        await importFile({ table: table('artists'), input: file(tmp(), 'back.csv', bytes.toString('utf8')) }, serverFor(copy));
        const expected = (await rowsOf(store, 'artists')).map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, v === '\\N' ? null : v])));
        expect(await rowsOf(copy, 'artists')).toEqual(expected);
      } finally {
        await disposeStore(copy);
      }
    });

    it('rewrites the same however the stream is cut into pieces', async () => {
      const res = await client.stream({ method: 'GET', path: '/artists', query: 'order=id', headers: { Accept: COPY_CSV } });
      const chunks: Buffer[] = [];
      for await (const c of res.body) chunks.push(Buffer.from(c));
      const body = Buffer.concat(chunks);
      const cols = table('artists').columns.map((c) => c.name);
      const whole = copyCsvRewriter(table('artists'), cols, undefined);
      const expected = Buffer.from(whole.push(body));
      whole.end();
      let seed = 7;
      const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
      for (let round = 0; round < 300; round++) {
        const rw = copyCsvRewriter(table('artists'), cols, undefined);
        const out: Buffer[] = [];
        // pieces of 1..64 bytes early on, larger later: every boundary kind (inside quotes, on a doubled quote, before \n)
        let at = 0;
        while (at < body.length) {
          const size = 1 + Math.floor(random() * (round < 150 ? 64 : 4096));
          out.push(Buffer.from(rw.push(body.subarray(at, at + size))));
          at += size;
        }
        rw.end();
        expect(Buffer.concat(out).equals(expected)).toBe(true);
        expect(rw.rows).toBe(whole.rows);
      }
      expect(() => {
        const rw = copyCsvRewriter(table('artists'), cols, undefined);
        rw.push(body.subarray(0, body.length - 1));
        rw.end();
      }).toThrow(/no line end/);
    });

    it('against a stand-in for PostgREST (406 PGRST107 to the COPY type) it pages, with the same bytes', async () => {
      const standIn = serverFor(store, { plainPostgrest: true, streams: true });
      const fallback = await exportWith(standIn, '', undefined);
      expect(standIn.log[0].res.status).toBe(406);
      expect(standIn.log.slice(1).length).toBeGreaterThan(0);
      expect(standIn.log.slice(1).every((l) => l.req.headers?.Accept === 'text/csv')).toBe(true);
      expect(standIn.log.length).toBeGreaterThan(3);
      const copy = await exportWith(transport(false), '', undefined);
      expect(fallback.bytes.equals(copy.bytes)).toBe(true);
    });

    it('with db-max-rows the service answers 406 with Catalog-Copy-Max-Rows, and the export reads COPY pages under the cap, with the same bytes', async () => {
      for (const [query, nullToken] of CASES) {
        const capped = serverFor(store, { maxRows: 10, streams: true });
        const paged = await exportWith(capped, query, nullToken);
        if (query.includes('limit=9')) expect(capped.log).toHaveLength(1); // within the cap: one COPY read
        else {
          expect(capped.log[0].res.status).toBe(406);
          expect(capped.log[0].res.headers['catalog-copy-max-rows']).toBe('10');
          expect(capped.log.slice(1).length).toBeGreaterThan(0);
          expect(capped.log.slice(1).every((l) => l.req.headers?.Accept === COPY_CSV && l.res.status === 200)).toBe(true);
        }
        const pages = await exportWith(transport(true), query, nullToken);
        expect(paged.n, query).toBe(pages.n);
        expect(paged.bytes.toString('utf8'), `${query} ${nullToken}`).toBe(pages.bytes.toString('utf8'));
      }
    });

    it('a table over PGlite\'s COPY cap is read in COPY pages there (one read on PostgreSQL), with the same bytes', async () => {
      const own = await kind.make();
      try {
        await own.query(`insert into ${own.schema}.tracks (track_title, isrc_code, lyrics) select 'T ' || i, case when i % 7 = 0 then null else lpad(i::text, 6, '0') end, case when i % 5 = 0 then '' else 'la (la)' end from generate_series(1, ${PGLITE_COPY_ROWS + 500}) as i`);
        const t = serverFor(own, { streams: true });
        const copy = join(tempDir('copy-export-'), 'copy.csv');
        const sink = fileSink(copy);
        const n = await exportTable({ transport: t, table: table('tracks'), format: 'csv', out: sink });
        await sink.commit();
        expect(n).toBe(PGLITE_COPY_ROWS + 500);
        const reads = t.log.map((l) => `${l.res.status} ${l.req.headers?.Accept}`);
        if (kind.kind === 'pglite') {
          expect(reads[0]).toBe(`406 ${COPY_CSV}`);
          expect(reads.slice(1).length).toBeGreaterThan(0);
          expect(reads.slice(1).every((r) => r === `200 ${COPY_CSV}`)).toBe(true);
          expect(reads.length).toBeGreaterThan(3);
        } else expect(reads).toEqual([`200 ${COPY_CSV}`]);
        const pagesPath = join(tempDir('copy-export-'), 'pages.csv');
        const pagesSink = fileSink(pagesPath);
        await exportTable({ transport: serverFor(own), table: table('tracks'), format: 'csv', out: pagesSink, pageSize: 5000 });
        await pagesSink.commit();
        expect(readFileSync(copy).equals(readFileSync(pagesPath))).toBe(true);
      } finally {
        await disposeStore(own);
      }
    });

    it('in process (the fetch adapter) the COPY read streams too', async () => {
      const inProcess = serverFor(store, { streams: true });
      const a = await exportWith(inProcess, '', undefined);
      expect(inProcess.log).toHaveLength(1);
      const b = await exportWith(transport(true), '', undefined);
      expect(a.bytes.equals(b.bytes)).toBe(true);
    });

    it('a transfer cut off mid-way fails the export (never a short file)', async () => {
      const http: Transport = client;
      // fault injection: the service's stream ends after its first pieces without the final chunk
      const cut: Transport = {
        send: (req) => http.send(req),
        async stream(req) {
          const res = await http.stream!(req);
          const it = res.body[Symbol.asyncIterator]();
          return {
            ...res,
            body: (async function* () {
              const first = await it.next();
              if (!first.done) yield Buffer.from(first.value).subarray(0, 200);
              res.cancel();
              throw new Error('the connection closed before the whole response arrived');
            })(),
          };
        },
      };
      await expect(exportWith(cut, '', undefined)).rejects.toThrow(/ended the transfer early/);
    });
  });
}
