import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../src/server/listen.js';
import { catalog, ensureBuilt, startServe, type Serve } from '../e2e/support.js';
import { PG_URL } from '../support/stores.js';

/**
 * Concurrency over PostgreSQL. PostgREST promises that each request is one transaction: a write is
 * all-or-nothing, its representation shows what it wrote, concurrent upserts of one key never fail
 * with a duplicate, and a committed write is never undone by another request that did not touch
 * that row. It does not promise an order between concurrent writers (last commit wins). The tests
 * assert exactly that, with 50 writers on overlapping rows.
 */

const WRITERS = 50;
const ROUNDS = 3;
const SHARED = 10;
const uuid = (group: number, n: number) => `${String(group).padStart(8, '0')}-0000-4000-8000-${String(n).padStart(12, '0')}`;
const sharedIds = Array.from({ length: SHARED }, (_, i) => uuid(1, i));
const ownId = (w: number) => uuid(2, w);
const freshId = (round: number) => uuid(3, round);

interface Artist {
  id: string;
  stage_name: string;
  biography: string;
  city: string;
}
/** A row written by one request: the three columns carry the same tag. */
const row = (id: string, tag: string) => ({ id, stage_name: tag, biography: tag, city: tag });

/** A deterministic shuffle per writer, so writers lock the shared rows in different orders. */
function shuffled<T>(xs: T[], seed: number): T[] {
  const out = [...xs];
  let s = seed + 1;
  for (let i = out.length - 1; i > 0; i--) {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    const j = s % (i + 1);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

describe.skipIf(!PG_URL)(`${WRITERS} concurrent writers through one server${PG_URL ? '' : ' (SKIPPED: set CATALOG_TEST_DATABASE_URL)'}`, () => {
  const schema = `catalog_concurrency_${process.pid}`;
  let server: RunningServer;
  const logged: string[] = [];

  beforeAll(async () => {
    server = await startServer({ port: 0, databaseUrl: PG_URL, schema, log: (l) => logged.push(l) });
    const seed = [...sharedIds.map((id) => row(id, 'seed')), ...Array.from({ length: WRITERS }, (_, w) => row(ownId(w), 'seed'))];
    const res = await fetch(`${server.url}/artists`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(seed) });
    expect(res.status).toBe(201);
  });
  afterAll(async () => {
    await server?.store.query(`drop schema if exists ${schema} cascade`).catch(() => {});
    await server?.close();
  });

  it('upserts, PATCHes and inserts on overlapping rows: no 5xx or 409, each answer shows its own write, no torn or lost rows', async () => {
    const statuses: number[] = [];
    const problems: string[] = [];
    const ownLast = new Map<number, string>();
    const written = new Set<string>(['seed']);
    // rows other tests in this file added (the COPY test's keys) are not this test's to count
    const mine = new Set([...sharedIds, ...Array.from({ length: WRITERS }, (_, w) => ownId(w)), ...Array.from({ length: ROUNDS }, (_, r) => freshId(r))]);
    const before = (await (await fetch(`${server.url}/artists?select=id`)).json()) as Array<{ id: string }>;
    const others = new Set(before.map((a) => a.id).filter((id) => !mine.has(id)));
    const send = async (method: string, path: string, body: unknown, prefer: string) => {
      const res = await fetch(`${server.url}${path}`, { method, headers: { 'Content-Type': 'application/json', Prefer: prefer }, body: JSON.stringify(body) });
      statuses.push(res.status);
      const text = await res.text();
      if (res.status >= 300) problems.push(`${method} ${path} → ${res.status} ${text.slice(0, 200)}`);
      return res.status < 300 ? (JSON.parse(text) as Artist[]) : [];
    };
    const writer = async (w: number) => {
      for (let r = 0; r < ROUNDS; r++) {
        // 1. one upsert batch: every shared row (in this writer's own order), its own row, and this round's new key
        const up = `u${w}.${r}`;
        written.add(up);
        const batch = [...shuffled(sharedIds, w * 31 + r).map((id) => row(id, up)), row(ownId(w), up), row(freshId(r), up)];
        const upserted = await send('POST', '/artists?on_conflict=id&select=id,stage_name,biography,city', batch, 'resolution=merge-duplicates, return=representation');
        if (upserted.length && (upserted.length !== SHARED + 2 || upserted.some((a) => a.stage_name !== up || a.city !== up))) problems.push(`upsert ${up} answered ${JSON.stringify(upserted).slice(0, 200)}`);
        // 2. a PATCH of one shared row (five writers share each)
        const patch = `p${w}.${r}`;
        written.add(patch);
        const patched = await send('PATCH', `/artists?id=eq.${sharedIds[(w + r) % SHARED]}&select=id,stage_name,biography,city`, { stage_name: patch, biography: patch, city: patch }, 'return=representation');
        if (patched.length !== 1 || patched[0].stage_name !== patch || patched[0].biography !== patch) problems.push(`patch ${patch} answered ${JSON.stringify(patched)}`);
        // 3. its own row, which nobody else touches
        const own = `o${w}.${r}`;
        const mine = await send('PATCH', `/artists?id=eq.${ownId(w)}&select=id,stage_name,biography,city`, { stage_name: own, biography: own, city: own }, 'return=representation');
        if (mine.length !== 1 || mine[0].stage_name !== own) problems.push(`own ${own} answered ${JSON.stringify(mine)}`);
        else ownLast.set(w, own);
      }
    };
    await Promise.all(Array.from({ length: WRITERS }, (_, w) => writer(w)));

    expect(problems.slice(0, 5)).toEqual([]);
    expect(statuses.filter((s) => s >= 300)).toEqual([]);
    expect(statuses).toHaveLength(WRITERS * ROUNDS * 3);
    expect(logged).toEqual([]);

    const all = ((await (await fetch(`${server.url}/artists?select=id,stage_name,biography,city&order=id`)).json()) as Artist[]).filter((a) => !others.has(a.id));
    // exactly the rows written: shared, own, one per round's new key; no duplicates
    expect(all.map((a) => a.id)).toEqual([...sharedIds, ...Array.from({ length: WRITERS }, (_, w) => ownId(w)), ...Array.from({ length: ROUNDS }, (_, r) => freshId(r))].sort());
    for (const a of all) {
      // no torn row: the three columns come from one request, and that request really wrote it
      expect([a.id, a.biography, a.city]).toEqual([a.id, a.stage_name, a.stage_name]);
      expect(written.has(a.stage_name) || /^o\d+\.\d+$/.test(a.stage_name)).toBe(true);
    }
    // no lost update: every writer's last write to its own row is there
    for (let w = 0; w < WRITERS; w++) expect(all.find((a) => a.id === ownId(w))?.stage_name).toBe(ownLast.get(w));
  });

  it('COPY bodies of new keys in clashing orders, racing JSON upserts of the same keys: no error, every key once', async () => {
    // each COPY body is first tried straight into the table, in body order; these bodies share 20
    // new keys in different orders, so two of them (or one and an ordered JSON upsert) could wait
    // on each other. The straight load gives up on a held row and takes the ordered path instead.
    const keys = Array.from({ length: 20 }, (_, i) => uuid(4, i));
    const problems: string[] = [];
    const post = async (body: string, type: string) => {
      const res = await fetch(`${server.url}/artists?on_conflict=id`, { method: 'POST', headers: { 'Content-Type': type, Prefer: 'resolution=merge-duplicates' }, body });
      const text = await res.text();
      if (res.status >= 300) problems.push(`${type} → ${res.status} ${text.slice(0, 200)}`);
    };
    const copyBody = (ids: string[], tag: string) => `id,stage_name,biography,city\n${ids.map((id) => `${id},${tag},${tag},${tag}`).join('\n')}\n`;
    await Promise.all(
      Array.from({ length: 20 }, (_, w) =>
        w % 4 === 3
          ? post(JSON.stringify(keys.map((id) => row(id, `j${w}`))), 'application/json')
          : post(copyBody(shuffled(keys, w * 7), `c${w}`), 'application/vnd.catalog.copy+csv'),
      ),
    );
    expect(problems.slice(0, 3)).toEqual([]);
    expect(logged).toEqual([]);
    const got = (await (await fetch(`${server.url}/artists?select=id,stage_name,biography,city&id=in.(${keys.join(',')})&order=id`)).json()) as Artist[];
    expect(got.map((a) => a.id)).toEqual(keys);
    for (const a of got) expect([a.biography, a.city]).toEqual([a.stage_name, a.stage_name]);
  });

  it('multi-row PATCHes of the same rows from 10 writers at once all succeed (a deadlock is retried by the store, never a 500)', async () => {
    const tags = Array.from({ length: 20 }, (_, i) => `m${i}`);
    const results = await Promise.all(
      tags.map(async (tag) => {
        const res = await fetch(`${server.url}/artists?id=in.(${sharedIds.join(',')})&select=stage_name,city`, {
          method: 'PATCH',
          headers: { 'Content-Type': 'application/json', Prefer: 'return=representation' },
          body: JSON.stringify({ stage_name: tag, biography: tag, city: tag }),
        });
        return [res.status, await res.json()] as [number, Array<{ stage_name: string; city: string }>];
      }),
    );
    for (const [i, [status, rows]] of results.entries()) {
      expect(status).toBe(200);
      expect(rows).toEqual(Array(SHARED).fill({ stage_name: tags[i], city: tags[i] }));
    }
    // all ten rows end with one writer's values: the last PATCH to commit wrote all of them at once
    const after = (await (await fetch(`${server.url}/artists?id=in.(${sharedIds.join(',')})&select=stage_name,biography,city`)).json()) as Artist[];
    expect(new Set(after.map((a) => a.stage_name)).size).toBe(1);
    expect(tags).toContain(after[0].stage_name);
    expect(after.length).toBeGreaterThan(0);
    expect(after.every((a) => a.biography === a.stage_name && a.city === a.stage_name)).toBe(true);
    expect(logged).toEqual([]);
  });
});

describe.skipIf(!PG_URL)(`two catalog serve processes over one PostgreSQL${PG_URL ? '' : ' (SKIPPED: set CATALOG_TEST_DATABASE_URL)'}`, () => {
  const schema = `catalog_two_serves_${process.pid}`;
  let a: Serve;
  let b: Serve;

  beforeAll(async () => {
    ensureBuilt();
    // started together on an empty schema: the migrations must not race
    [a, b] = await Promise.all([startServe(['--database-url', PG_URL!, '--db-schema', schema]), startServe(['--database-url', PG_URL!, '--db-schema', schema])]);
  });
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    const pg = (await import('pg')).default;
    const c = new pg.Client({ connectionString: PG_URL });
    await c.connect();
    await c.query(`drop schema if exists ${schema} cascade`);
    await c.end();
  });

  it('serve the same data: what one writes the other reads at once, and concurrent writes through both agree', async () => {
    const added = await catalog(['--url', a.url, 'labels', 'add', 'name=Written via A', '-o', 'json']);
    expect(added.code, added.stderr).toBe(0);
    const id = JSON.parse(added.stdout).id as string;
    const got = await catalog(['--url', b.url, 'labels', 'get', id, '-o', 'json']);
    expect(JSON.parse(got.stdout)).toMatchObject({ id, name: 'Written via A' });

    const shared = uuid(9, 1);
    const statuses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        fetch(`${(i % 2 ? a : b).url}/labels?on_conflict=id`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', Prefer: 'resolution=merge-duplicates' },
          body: JSON.stringify([{ id: shared, name: `writer ${i}` }]),
        }).then((r) => r.status),
      ),
    );
    expect(statuses.filter((s) => s >= 300)).toEqual([]);
    const viaA = await (await fetch(`${a.url}/labels?select=id,name&order=id`)).json();
    const viaB = await (await fetch(`${b.url}/labels?select=id,name&order=id`)).json();
    expect(viaA).toEqual(viaB);
    expect(viaA).toHaveLength(2);
  });
});
