import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appTransport, type HttpRequest, type Transport } from '../../src/client/transport.js';
import { createApp } from '../../src/server/app.js';
import type { Queryable, Store } from '../../src/store/store.js';
import { runCli } from '../cli/support.js';
import { makePGliteStore } from '../support/stores.js';

/**
 * Golden fixtures of the whole path, argv → request → SQL → output, for a few everyday commands:
 * what the CLI sends (only standard PostgREST grammar), the statement the service runs for it, and
 * what the person sees. They read as documentation; a change to any layer shows up here as a diff.
 */

/** A store that records the statements it is given (whitespace collapsed), transactions included. */
function recording(store: Store, log: string[]): Store {
  const note = (sql: string) => log.push(sql.replace(/\s+/g, ' ').trim());
  const wrap = (q: Queryable): Queryable => ({
    query: (sql, params) => (note(sql), q.query(sql, params)),
    copyCsv: q.copyCsv?.bind(q),
    copyCsvOut: q.copyCsvOut ? (select, write) => (note(`COPY (${select}) TO STDOUT`), q.copyCsvOut!(select, write)) : undefined,
  });
  return { ...wrap(store), kind: store.kind, schema: store.schema, transaction: (fn) => store.transaction((tx) => fn(wrap(tx))), close: () => store.close() } as Store;
}

describe('golden: argv → request → SQL → output', () => {
  let store: Store;
  const sql: string[] = [];
  const requests: HttpRequest[] = [];
  let transport: Transport;

  beforeAll(async () => {
    store = await makePGliteStore();
    await store.query(`insert into labels (id, name) values
      ('1ab00000-0000-4000-8000-000000000001', 'Bass Culture'), ('1ab00000-0000-4000-8000-000000000002', 'Café Tacvba Discos'),
      ('1ab00000-0000-4000-8000-000000000003', 'Warp Drive')`);
    await store.query(`insert into releases (id, release_title, label_id, release_date) values
      ('e0000000-0000-4000-8000-000000000001', 'Deep Roots', '1ab00000-0000-4000-8000-000000000001', '2021-03-05'),
      ('e0000000-0000-4000-8000-000000000002', 'Night Bus', '1ab00000-0000-4000-8000-000000000003', '2022-07-01')`);
    await store.query(`insert into tracks (id, track_title, genre) values
      ('70000000-0000-4000-8000-000000000001', 'One', 'House'), ('70000000-0000-4000-8000-000000000002', 'Two', 'House'),
      ('70000000-0000-4000-8000-000000000003', 'Three', 'Techno')`);
    const app = appTransport(createApp({ store: recording(store, sql), log: () => {}, aggregates: true }));
    transport = { send: (req) => (requests.push(req), app.send(req)), stream: (req) => (requests.push(req), app.stream!(req)) };
  });
  afterAll(async () => store.close());

  /** Runs a command line; returns the data requests it sent, the statements they ran, and stdout. */
  async function path(args: string[]) {
    requests.length = 0;
    sql.length = 0;
    const r = await runCli(args, { transport });
    expect(r.code, r.err).toBe(0);
    const sent = requests.filter((q) => q.path !== '/').map((q) => `${q.method} ${q.path}${q.query ? `?${decodeURIComponent(q.query)}` : ''}${q.headers?.prefer ?? q.headers?.Prefer ? ` (Prefer: ${q.headers.prefer ?? q.headers.Prefer})` : ''}`);
    const ran = sql.filter((s) => !/^(select set_config|set |begin|commit|rollback|show )/i.test(s));
    return { sent, sql: ran, out: r.out };
  }

  it('catalog labels list --where "name~*cafe*" --order name -o json', async () => {
    const p = await path(['labels', 'list', '--where', 'name~*cafe*', '--order', 'name', '--select', 'id,name', '-o', 'json']);
    expect(p.sent).toMatchInlineSnapshot(`
      [
        "GET /labels?select=id,name&name=imatch.^.*[cçćĉċčCÇĆĈĊČ][aàáâãäåāăąǎAÀÁÂÃÄÅĀĂĄǍ]f[eèéêëēĕėęěEÈÉÊËĒĔĖĘĚ].*$&order=name",
      ]
    `);
    expect(p.sql).toMatchInlineSnapshot(`
      [
        "SELECT NULL::bigint AS total, count(*) AS n, coalesce(json_agg(_t), '[]')::text AS body FROM (SELECT t1."id" AS "id", t1."name" AS "name" FROM "public"."labels" AS t1 WHERE (t1."name" ~* $1) ORDER BY t1."name") AS _t",
      ]
    `);
    expect(p.out).toMatchInlineSnapshot(`
      "[
      {"id":"1ab00000-0000-4000-8000-000000000002","name":"Café Tacvba Discos"}
      ]
      "
    `);
  });

  it("catalog releases list --select 'release_title,labels(name)' --where 'labels.name=Bass Culture' -o csv", async () => {
    const p = await path(['releases', 'list', '--select', 'release_title,labels(name)', '--where', 'labels.name=Bass Culture', '-o', 'csv']);
    expect(p.sent).toMatchInlineSnapshot(`
      [
        "GET /releases?select=release_title,labels!inner(name)&labels.name=eq.Bass Culture",
      ]
    `);
    expect(p.sql).toMatchInlineSnapshot(`
      [
        "SELECT NULL::bigint AS total, count(*) AS n, coalesce(json_agg(_t), '[]')::text AS body FROM (SELECT t1."release_title" AS "release_title", e1."_b" AS "labels" FROM "public"."releases" AS t1 LEFT JOIN LATERAL (SELECT true AS "_m", (SELECT row_to_json(_r) FROM (SELECT t2."name" AS "name") AS _r) AS "_b" FROM "public"."labels" AS t2 WHERE (t2."id" = t1."label_id") AND (t2."name" = $1)) AS e1 ON TRUE WHERE (e1."_m" IS NOT NULL)) AS _t",
      ]
    `);
    expect(p.out).toMatchInlineSnapshot(`
      "release_title,labels.name
      Deep Roots,Bass Culture
      "
    `);
  });

  it('catalog tracks count --by genre -o csv', async () => {
    const p = await path(['tracks', 'count', '--by', 'genre', '-o', 'csv']);
    expect(p.sent).toMatchInlineSnapshot(`
      [
        "GET /tracks?select=genre,count()",
      ]
    `);
    expect(p.sql).toMatchInlineSnapshot(`
      [
        "SELECT NULL::bigint AS total, count(*) AS n, coalesce(json_agg(_t), '[]')::text AS body FROM (SELECT t1."genre" AS "genre", count(*) AS "count" FROM "public"."tracks" AS t1 GROUP BY t1."genre") AS _t",
      ]
    `);
    expect(p.out).toMatchInlineSnapshot(`
      "genre,count
      House,2
      Techno,1
      "
    `);
  });
});
