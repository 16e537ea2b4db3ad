import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPGlite } from '../../src/store/pglite.js';
import { openPGliteThread } from '../../src/store/pglite-remote.js';
import { type Queryable, type Store, StoreError } from '../../src/store/store.js';
import { makePGliteThreadStore, tempDir } from '../support/stores.js';

/**
 * The embedded store with PGlite on a thread of its own (src/store/pglite-remote.ts), as `catalog
 * serve --data`, the background holder and a bulk command opening the catalog run it. What crosses
 * the thread must come back as the store in one thread gives it: rows, errors with every field,
 * COPY in and out, transactions committed or rolled back.
 */
describe('the embedded store on its own thread', () => {
  let thread: Store & { drop(): Promise<void> };
  let here: Store;
  beforeAll(async () => {
    [thread, here] = await Promise.all([makePGliteThreadStore(), openPGlite({ dataDir: `${tempDir('thread-peer-')}/catalog` })]);
  });
  afterAll(async () => {
    await thread?.drop();
    await here?.close();
  });

  it('leaves the calling thread free while a statement runs', async () => {
    // a callback queued after the statement starts runs before it ends: PGlite's WebAssembly is not on this thread
    const order: string[] = [];
    const running = thread.query('select pg_sleep(0.3)').then(() => order.push('statement'));
    setImmediate(() => order.push('this thread'));
    await running;
    expect(order).toEqual(['this thread', 'statement']);
  });

  it('gives back rows, counts, dates as text and boolean parameters as the store in one thread does', async () => {
    const sql = `select $1::boolean as b, '2024-02-29'::date as d, '2024-02-29 12:00:00+00'::timestamptz as t, n from generate_series(1, 3) as n`;
    const [a, b] = await Promise.all([thread.query(sql, [true]), here.query(sql, [true])]);
    expect(a).toEqual(b);
    expect(a.rows).toHaveLength(3);
    expect(a.rows[0]).toMatchObject({ b: true, d: '2024-02-29' });
  });

  it('gives back a database error with its code, message, detail and hint', async () => {
    const fail = (s: Store) => s.query(`insert into labels (id, name) values ('00000000-0000-4000-8000-000000000001', 'Twice'), ('00000000-0000-4000-8000-000000000001', 'Twice')`).then(() => null, (e: unknown) => e);
    const [a, b] = await Promise.all([fail(thread), fail(here)]);
    expect(a).toBeInstanceOf(StoreError);
    const fields = (e: unknown) => ({ ...(e as StoreError), message: (e as Error).message });
    expect(fields(a)).toEqual(fields(b));
    expect((a as StoreError).code).toBe('23505');
    expect((a as StoreError).detail).toMatch(/already exists/);
  });

  it('commits what a transaction wrote, and rolls back when its callback throws, rethrowing that very error', async () => {
    await thread.transaction(async (tx) => {
      await tx.query(`insert into labels (name) values ('Committed')`);
      expect((await tx.query(`select count(*)::int as n from labels where name = 'Committed'`)).rows[0]).toEqual({ n: 1 });
    });
    const mine = new Error('given up');
    await expect(
      thread.transaction(async (tx) => {
        await tx.query(`insert into labels (name) values ('Rolled back')`);
        throw mine;
      }),
    ).rejects.toBe(mine);
    const { rows } = await thread.query<{ name: string }>(`select name from labels where name in ('Committed', 'Rolled back')`);
    expect(rows.map((r) => r.name)).toEqual(['Committed']);
  });

  it('rolls back a transaction a statement of which failed, and answers the next one', async () => {
    const err = await thread
      .transaction(async (tx) => {
        await tx.query(`insert into labels (name) values ('Before the fault')`);
        await tx.query('select 1/0');
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreError);
    expect((err as StoreError).code).toBe('22012');
    expect((await thread.query(`select count(*)::int as n from labels where name = 'Before the fault'`)).rows[0]).toEqual({ n: 0 });
  });

  it('runs transactions started together one after the other, each seeing the last one committed', async () => {
    await thread.query(`insert into labels (name) values ('Counter 0')`);
    const bump = () =>
      thread.transaction(async (tx) => {
        const { rows } = await tx.query<{ n: number }>(`select max(substr(name, 9)::int) as n from labels where name like 'Counter %'`);
        await tx.query(`insert into labels (name) values ($1)`, [`Counter ${rows[0].n + 1}`]);
      });
    await Promise.all(Array.from({ length: 8 }, bump));
    const { rows } = await thread.query<{ name: string }>(`select name from labels where name like 'Counter %' order by substr(name, 9)::int`);
    expect(rows.map((r) => r.name)).toEqual(Array.from({ length: 9 }, (_, i) => `Counter ${i}`));
  });

  it('loads a COPY body in a transaction and writes one out, byte for byte as the store in one thread', async () => {
    const csv = `name\n${Array.from({ length: 5000 }, (_, i) => `"Copied, ${i}"`).join('\n')}\n`;
    const load = (s: Store) => s.transaction((tx) => tx.copyCsv!('labels', ['name'], new TextEncoder().encode(csv)));
    expect(await Promise.all([load(thread), load(here)])).toEqual([5000, 5000]);
    const out = async (s: Store) => {
      const chunks: Uint8Array[] = [];
      const n = await s.copyCsvOut!(`select name from labels where name like 'Copied, %' order by name`, async (c) => void chunks.push(c));
      return { n, text: Buffer.concat(chunks).toString('utf8') };
    };
    const [a, b] = await Promise.all([out(thread), out(here)]);
    expect(a.n).toBe(5000);
    expect(a).toEqual(b);
  });

  it('refuses a directory PGlite cannot open with the error the store in one thread gives', async () => {
    const broken = (name: string) => {
      const dir = join(tempDir(`thread-broken-${name}-`), 'catalog');
      mkdirSync(dir);
      writeFileSync(join(dir, 'PG_VERSION'), '17\n'); // a data directory with nothing else in it
      return dir;
    };
    const failure = (p: Promise<Store>) => p.then(async (s) => (await s.close(), null), (e: unknown) => e as Error);
    const [a, b] = await Promise.all([failure(openPGliteThread(broken('thread'))), failure(openPGlite({ dataDir: broken('here') }))]);
    expect(a).toBeInstanceOf(Error);
    expect([a?.name, a?.message]).toEqual([b?.name, b?.message]);
  });

  it('fails a statement sent for a transaction that has ended, alone, as the store in one thread does, and keeps answering', async () => {
    const late = async (s: Store) => {
      let kept: Queryable | null = null;
      await s.transaction(async (tx) => void (kept = tx));
      return kept!.query('select 1').then(() => null, (e: unknown) => e as StoreError);
    };
    const [a, b] = await Promise.all([late(thread), late(here)]);
    expect(a).toBeInstanceOf(StoreError);
    expect([a?.code, a?.message]).toEqual([b?.code, b?.message]);
    expect((await thread.query('select 1 as one')).rows).toEqual([{ one: 1 }]);
  });

  it('once closed, refuses calls at once instead of leaving them waiting, and closes twice without harm', async () => {
    const other = await makePGliteThreadStore();
    await other.close();
    await expect(other.close()).resolves.toBeUndefined();
    await expect(other.query('select 1')).rejects.toMatchObject({ code: '08006' });
    await expect(other.transaction(async () => 1)).rejects.toMatchObject({ code: '08006' });
    await other.drop();
  });
});
