import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/server/app.js';
import type { Queryable, QueryResult, Store } from '../../src/store/store.js';
import { makePGliteStore } from '../support/stores.js';
import { seedFixture, send } from './support.js';

interface Recorded {
  sql: string;
  params: unknown[];
  /** Whether the statement ran inside `store.transaction`. */
  inTransaction: boolean;
}

/** A real store that also records each statement sent through it (it forwards everything). */
function recording(store: Store): Store & { log: Recorded[] } {
  const log: Recorded[] = [];
  const wrap = (q: Queryable, inTransaction: boolean): Queryable => ({
    query<R>(sql: string, params?: unknown[]): Promise<QueryResult<R>> {
      log.push({ sql, params: params ?? [], inTransaction });
      return q.query<R>(sql, params);
    },
  });
  return {
    log,
    kind: store.kind,
    schema: store.schema,
    query: (sql, params) => wrap(store, false).query(sql, params),
    transaction: (fn, signal, local) => store.transaction((tx) => fn(wrap(tx, true)), signal, local),
    close: () => store.close(),
  };
}

/** What reaches the database: one statement per request, request values only as bound parameters. */
describe('statements sent to the database', () => {
  let base: Store;
  let store: Store & { log: Recorded[] };
  let app: ReturnType<typeof createApp>;

  beforeAll(async () => {
    base = await makePGliteStore();
    await seedFixture(base);
    store = recording(base);
    app = createApp({ store });
  });
  afterAll(async () => {
    await base?.close();
  });

  const run = async (method: string, path: string, opts: { body?: unknown; headers?: Record<string, string> } = {}) => {
    store.log.length = 0;
    const r = await send(app, method, path, opts);
    return { r, log: [...store.log] };
  };

  it('a read with filters, trees, json paths and embeds is ONE statement; values and json keys are parameters', async () => {
    const evil = "Robert'); DROP TABLE labels;--";
    const { r, log } = await run(
      'GET',
      `/releases?select=id,c:contracts->>we'ird,labels(name)&release_title=neq.${encodeURIComponent(evil)}&or=(catalog_number.like.*1*,label_id.is.null)&contracts->>fo"rmat=eq.cd&labels.name=in.(a,"b,c")&order=release_date.desc.nullslast&limit=5`,
      { headers: { Prefer: 'count=exact' } },
    );
    expect(r.status, r.text).toBe(200);
    expect(log).toHaveLength(1);
    const { sql, params } = log[0];
    for (const text of [evil, "we'ird", 'fo"rmat', 'cd', '*1*', '%1%', 'b,c']) expect(sql).not.toContain(text);
    expect(params).toEqual(expect.arrayContaining([evil, "we'ird", 'fo"rmat', 'cd', '%1%', '{"a","b,c"}', 5]));
    expect(sql).toMatch(/json_agg/);
  });

  it('a bulk POST of 1,000 rows is ONE statement with ONE parameter (the JSON body)', async () => {
    const rows = Array.from({ length: 1000 }, (_, i) => ({ name: `row ${i}` }));
    const { r, log } = await run('POST', '/labels', { body: rows });
    expect(r.status).toBe(201);
    expect(log).toHaveLength(1);
    expect(log[0].params).toHaveLength(1);
    expect(log[0].sql).toMatch(/json_populate_recordset/);
  });

  it('an upsert, a PATCH and a DELETE are one statement each', async () => {
    const up = await run('POST', '/labels', { body: [{ name: 'u' }], headers: { Prefer: 'resolution=merge-duplicates, return=representation' } });
    expect([up.r.status, up.log.length]).toEqual([201, 1]);
    expect(up.log[0].sql).toMatch(/ON CONFLICT \("id"\) DO UPDATE SET "name" = EXCLUDED\."name"/);
    const patch = await run('PATCH', "/labels?name=eq.u", { body: { name: "o'brien" } });
    expect([patch.r.status, patch.log.length]).toEqual([204, 1]);
    expect(patch.log[0].sql).not.toContain("o'brien");
    const del = await run('DELETE', "/labels?name=eq.o'brien");
    expect([del.r.status, del.log.length]).toEqual([204, 1]);
  });

  it('count=planned adds the EXPLAIN; timezone adds its check; bad requests never reach the database', async () => {
    const planned = await run('GET', '/labels', { headers: { Prefer: 'count=planned' } });
    expect(planned.log.map((l) => l.sql.slice(0, 7))).toEqual(['SELECT ', 'EXPLAIN']);
    const tz = await run('GET', '/labels', { headers: { Prefer: 'timezone=UTC' } });
    expect(tz.log).toHaveLength(2);
    for (const path of ['/releases?id=0', '/releases?select=nope', '/releases?select=*,countries(*)', '/releases?labels.name=eq.x', '/users']) {
      const bad = await run('GET', path);
      expect(bad.r.status, path).toBeGreaterThanOrEqual(400);
      expect(bad.log, path).toHaveLength(0);
    }
  });

  it('a read runs its statement alone (no BEGIN/COMMIT round trips); a time zone or any write runs in a transaction', async () => {
    const read = await run('GET', '/labels?order=name&limit=2', { headers: { Prefer: 'count=exact' } });
    expect(read.log.map((l) => l.inTransaction)).toEqual([false]);
    const planned = await run('HEAD', '/labels', { headers: { Prefer: 'count=planned' } });
    expect(planned.log.map((l) => l.inTransaction)).toEqual([false, false]);
    const tz = await run('GET', '/labels', { headers: { Prefer: 'timezone=UTC' } });
    expect(tz.log.map((l) => l.inTransaction)).toEqual([true, true]);
    const write = await run('POST', '/labels', { body: { name: 'tx' } });
    expect(write.r.status).toBe(201);
    expect(write.log.map((l) => l.inTransaction)).toEqual([true]);
  });
});
