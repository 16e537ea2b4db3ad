import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../src/schema/migrations.js';
import { ensureBuilt, startServe, type Serve } from '../e2e/support.js';
import { PG_URL } from '../support/stores.js';
import { eventually } from './support.js';
import { HAPROXY, type LoadBalancer, PGBOUNCER, type Started, startHaproxy, startPgBouncer } from './topology.js';

const missing = !PG_URL
  ? 'set CATALOG_TEST_DATABASE_URL'
  : !PGBOUNCER
    ? 'pgbouncer is not installed (apt-get install -y pgbouncer)'
    : !HAPROXY
      ? 'haproxy is not installed (apt-get install -y haproxy)'
      : '';
if (missing) console.warn(`test/reliability/multi-instance.test.ts SKIPPED: ${missing}`);

/** One instance of the deployment: its process, and its admin port's URL (HAProxy checks `/ready` there). */
interface Instance {
  serve: Serve;
  admin: string;
}

/** A row as a client writes it: its id is the client's own, so sending it again is the same write. */
interface Row {
  id: string;
  name: string;
}

interface Acked extends Row {
  status: number;
  attempts: number;
}

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * What an idempotent client does: POST the row with `Prefer: resolution=merge-duplicates` (an
 * upsert on its own id), and send it again on a connection error or a 502/503/504 (the load
 * balancer losing the instance, or the service saying the database is away) until it is
 * acknowledged. Any other answer fails the test. Resolves with the acknowledgement.
 */
async function write(lb: string, row: Row): Promise<Acked> {
  for (let attempts = 1; attempts <= 100; attempts++) {
    let res: Response | undefined;
    try {
      res = await fetch(`${lb}/labels`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Prefer: 'resolution=merge-duplicates, return=minimal' },
        body: JSON.stringify(row),
        signal: AbortSignal.timeout(30_000), // a guard against a hang, not a speed check
      });
    } catch {
      // connection reset or refused: the same write again
    }
    if (res) {
      const body = await res.text().catch(() => '');
      if (res.ok) return { ...row, status: res.status, attempts };
      if (![502, 503, 504].includes(res.status)) throw new Error(`${row.name}: ${res.status} ${body}`);
    }
    await delay(50);
  }
  throw new Error(`${row.name}: not acknowledged after 100 attempts`);
}

/** A figure from an instance's `/metrics` (summed over its label sets). */
async function metric(instance: Instance, name: string, labels = ''): Promise<number> {
  const text = await (await fetch(`${instance.admin}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n')) if (line.startsWith(name) && line.includes(labels)) sum += Number(line.split(' ').pop());
  return sum;
}

/** Runs `clients` clients side by side, each writing `each` new rows one after another; `onAck` hears every acknowledgement. */
function clients(lb: string, prefix: string, count: number, each: number, onAck: (a: Acked) => void = () => {}): Promise<Acked[][]> {
  return Promise.all(
    Array.from({ length: count }, async (_, c) => {
      const done: Acked[] = [];
      for (let i = 0; i < each; i++) {
        const acked = await write(lb, { id: randomUUID(), name: `${prefix} ${c}-${i}` });
        done.push(acked);
        onAck(acked);
      }
      return done;
    }),
  );
}

/**
 * Issue 38 item 8, on this machine: three stateless `catalog serve` instances on one PostgreSQL
 * behind PgBouncer in transaction mode, HAProxy balancing them round-robin with health checks on
 * their admin ports (docs/deploy.md). One instance is killed (SIGKILL) while clients write through
 * the balancer, with writes of its own in flight (held by a row lock until after the kill).
 */
describe.skipIf(!!missing)(`N catalog serve instances behind HAProxy and PgBouncer${missing ? ` (SKIPPED: ${missing})` : ''}`, () => {
  const schema = `catalog_multi_${process.pid}_${Date.now().toString(36)}`;
  let bouncer: Started | undefined;
  let lb: LoadBalancer | undefined;
  const instances: Instance[] = [];
  let db: pg.Client;
  /** Holds the row locks of the test's held writes: ended first after a failure, or the schema could not be dropped. */
  let lock: pg.Client | undefined;

  beforeAll(async () => {
    ensureBuilt();
    db = new pg.Client({ connectionString: PG_URL });
    await db.connect();
    bouncer = await startPgBouncer(PG_URL!, 20);
    // started together on a schema that does not exist yet: each creates and migrates it at start
    const serves = await Promise.all(
      [0, 1, 2].map(() => startServe(['--database-url', bouncer!.url, '--db-schema', schema, '--admin-port', '0'], { CATALOG_LOG_FORMAT: 'text' })),
    );
    for (const serve of serves) {
      let admin = '';
      const printed = await eventually(async () => {
        admin = /Admin \(\/live, \/ready, \/metrics\) at (http:\/\/\S+)/.exec(serve.stderr())?.[1] ?? '';
        return admin !== '';
      });
      expect(printed, serve.stderr()).toBe(true);
      instances.push({ serve, admin });
    }
    const port = (u: string) => Number(new URL(u).port);
    lb = await startHaproxy(instances.map((x, i) => ({ name: `s${i}`, port: port(x.serve.url), adminPort: port(x.admin) })));
    const up = await eventually(async () => Object.values(await lb!.states()).every((s) => s === 'UP'));
    expect(up, JSON.stringify(await lb.states())).toBe(true);
  });

  afterAll(async () => {
    await lock?.end().catch(() => {});
    await lb?.stop();
    for (const x of instances) if (x.serve.proc.exitCode === null && x.serve.proc.signalCode === null) await x.serve.stop();
    await bouncer?.stop();
    await db?.query(`drop schema if exists ${schema} cascade`);
    await db?.end();
  });

  it('instances started together on a new schema migrate it once (an advisory lock per step, through PgBouncer)', async () => {
    const { rows } = await db.query<{ version: number }>(`select version from ${schema}.catalog_migrations order by version`);
    expect(rows.map((r) => r.version)).toEqual(MIGRATIONS.map((m) => m.version));
  });

  it('an instance killed under concurrent writes: every acknowledged write is stored once, and the clients carry on through the others', async () => {
    const [victim, ...survivors] = instances;
    // Six writes held in flight by a row lock: round-robin puts two on each instance.
    lock = new pg.Client({ connectionString: PG_URL });
    await lock.connect();
    const held: Row[] = Array.from({ length: 6 }, (_, i) => ({ id: randomUUID(), name: `Held ${i}` }));
    const { rows: me } = await lock.query<{ pid: number }>('select pg_backend_pid() as pid');
    await lock.query('begin');
    await lock.query(`insert into ${schema}.labels (id, name) select id, 'lock' from unnest($1::uuid[]) as id`, [held.map((h) => h.id)]);
    const heldWrites = held.map((row) => write(lb!.url, row));
    for (const w of heldWrites) w.catch(() => {}); // awaited below; a failure before that is the test's, not an unhandled rejection
    const blocked = async () => (await db.query<{ n: number }>('select count(*)::int as n from pg_stat_activity where $1 = any(pg_blocking_pids(pid))', [me[0].pid])).rows[0].n === 6;
    expect(await eventually(blocked), 'six writes waiting on the lock').toBe(true);
    // Each instance has a pooled connection in use beyond its health check: the victim holds a write.
    const inUse = async () => (await Promise.all(instances.map((x) => metric(x, 'catalog_db_pool_in_use')))).every((n) => n >= 2);
    expect(await eventually(inUse), 'every instance holds one of the six').toBe(true);

    // Four clients write 50 rows each through the balancer; once 20 are acknowledged, the victim is killed.
    let acks = 0;
    let killed: Promise<void> | undefined;
    const kill = async () => {
      const gone = new Promise((r) => victim.serve.proc.once('exit', r));
      victim.serve.proc.kill('SIGKILL');
      await gone;
      await lock!.query('rollback'); // the held writes go on (on the survivors: the victim's were cut off)
    };
    const bulk = clients(lb!.url, 'Bulk', 4, 50, () => {
      if (++acks === 20) killed = kill();
    });
    const bulkAcked = (await bulk).flat();
    await killed;
    const heldAcked = await Promise.all(heldWrites);
    // the writes the victim held never answered: the balancer said 502 and their clients sent them again
    expect(heldAcked.filter((a) => a.attempts > 1).length).toBeGreaterThanOrEqual(1);

    // HAProxy's health checks take the dead instance out; from then on every write succeeds at once
    const out = await eventually(async () => (await lb!.states()).s0 === 'DOWN');
    expect(out, JSON.stringify(await lb!.states())).toBe(true);
    const before = await Promise.all(survivors.map((x) => metric(x, 'catalog_http_requests_total', 'method="POST"')));
    const laterAcked = (await clients(lb!.url, 'Later', 4, 5)).flat();
    expect(laterAcked.map((a) => a.attempts)).toEqual(laterAcked.map(() => 1));
    const after = await Promise.all(survivors.map((x) => metric(x, 'catalog_http_requests_total', 'method="POST"')));
    // round-robin over both survivors
    for (const [i, n] of after.entries()) expect(n, `survivor s${i + 1}`).toBeGreaterThan(before[i]);

    const acked = [...heldAcked, ...bulkAcked, ...laterAcked];
    expect(acked).toHaveLength(6 + 200 + 20);
    // 201, or 200 for a write sent again whose first try the victim had committed before dying (its answer lost)
    for (const a of acked) expect(a.status === 201 || (a.status === 200 && a.attempts > 1), JSON.stringify(a)).toBe(true);
    const byId = (a: Row, b: Row) => (a.id < b.id ? -1 : 1);
    const { rows } = await db.query<Row>(`select id, name from ${schema}.labels`);
    const expected = acked.map(({ id, name }) => ({ id, name }));
    // each acknowledged write once, with the client's id and value, and nothing else (no doubles, no strays)
    expect(rows.sort(byId)).toEqual(expected.sort(byId));
  });
});
