import { CsvTokenizer, QUOTED, TOKENS_OK } from '../format/csv-tokens.js';
import type { Preferences } from '../grammar/types.js';
import { normalizeUuid } from '../schema/codecs.js';
import { type LocalSettings, type Queryable, type Store, StoreError } from '../store/store.js';
import { ApiError, singularError } from './errors.js';
import { batchKey, type BodyCredits, bodyCreditsSliced, checkBatch, creditsCanonical, linkColumns } from './link-batch.js';
import { matchLock, matchLookup, resolveIds, stagedUnchanged, type LookupRow, type Resolution } from './match.js';
import type { Planned, WritePlan } from './plan.js';
import { copyShapeCheck, copyShapeError, mergeSourceIds, sourceIdConflict } from './source-ids.js';
import { afterWrite, bindMoves, buildCopyRead, buildRepresentation, copyStage, ident, stagedTarget, tableRef, type Statement } from './sql.js';
import { stagedCopyColumns, stagedCreate, stagedFillJson } from './staged.js';
import { actAs, runsAsRole } from './db-role.js';
import { RUN_SETTING } from './runs.js';

/**
 * The transaction step, the only one that touches the database: the session time zone (when
 * asked), the request's ONE statement, the planner estimate for `count=planned|estimated`, and the
 * checks that must roll a write back (singular, max-affected, limited mutations, PUT key). A read
 * without a time zone skips the transaction (see `execute`).
 */

export interface ReadResult {
  kind: 'read';
  total: number | null;
  n: number;
  body: string | null;
  /** Whether `Prefer: timezone=` was valid and applied. */
  timezoneApplied: boolean;
}

export interface WriteResult {
  kind: 'write';
  n: number;
  inserted: boolean;
  /** Rows newly inserted (an upsert's others were updated, or left alone). */
  insertedRows: number;
  /** Rows the body carried, when known. */
  received: number | null;
  body: string | null;
  keys: unknown[][] | null;
  timezoneApplied: boolean;
  /** `match=`: rows of the body that ended on the id of a later row and collapsed into it. */
  collapsed?: number;
}

export type ExecResult = ReadResult | WriteResult;

function num(v: unknown): number {
  return typeof v === 'number' ? v : Number(v ?? 0);
}

function plannedRows(rows: Array<Record<string, unknown>>): number {
  let doc = rows[0]?.['QUERY PLAN'];
  if (typeof doc === 'string') doc = JSON.parse(doc);
  const plan = (doc as Array<{ Plan?: { 'Plan Rows'?: number } }> | undefined)?.[0]?.Plan;
  return Math.round(plan?.['Plan Rows'] ?? 0);
}

/** `SET LOCAL TimeZone` only for a zone PostgreSQL lists; false when it does not. */
async function applyTimezone(tx: Queryable, prefs: Preferences): Promise<boolean> {
  if (prefs.timezone === undefined) return false;
  const r = await tx.query(`SELECT set_config('TimeZone', name, true) FROM pg_timezone_names WHERE name = $1`, [prefs.timezone]);
  return r.rows.length > 0;
}

/** The read's figures from its one row (and the planner estimate for `count=planned|estimated`). */
async function readResult(db: Queryable, planned: Planned, row: Record<string, unknown>, extra: Statement | null, timezoneApplied: boolean): Promise<ReadResult> {
  let total = row.total === null || row.total === undefined ? null : num(row.total);
  const plan = planned.plan;
  if (extra && plan.kind === 'read' && (plan.count === 'planned' || plan.count === 'estimated')) {
    const estimate = plannedRows((await db.query<Record<string, unknown>>(extra.sql, extra.params)).rows);
    if (plan.count === 'planned') total = estimate;
    else if (!(planned.maxRows !== undefined && total !== null && total <= planned.maxRows)) total = Math.max(total ?? 0, estimate);
  }
  return { kind: 'read', total, n: num(row.n), body: (row.body as string | null) ?? null, timezoneApplied };
}

/**
 * Whether a COPY body may first be tried straight into the table: a plain insert or upsert whose
 * answer needs no rows, keys or row-count checks, so that "every row was new" fully describes it.
 * An upsert's conflict target must be the primary key: the straight COPY has no ON CONFLICT, so a
 * target without a unique constraint would never be checked (PostgreSQL refuses it with 42P10 only
 * when the staging path's INSERT … ON CONFLICT names it), and the rows would go in twice.
 */
function directCopyAllowed(planned: Planned): boolean {
  const plan = planned.plan;
  return (
    plan.kind === 'insert' &&
    conflictOnPrimaryKey(plan) &&
    !plan.representation &&
    !plan.wantKeys &&
    !planned.representation.singular &&
    plan.limited === undefined &&
    !(planned.prefs.handling === 'strict' && planned.prefs.maxAffected !== undefined)
  );
}

/** True when a write has no conflict target, or its target is exactly the table's primary key. */
function conflictOnPrimaryKey(plan: WritePlan): boolean {
  if (!plan.onConflict) return true;
  const target = plan.onConflict.columns.map((c) => c.name);
  const key = plan.table.primaryKey;
  return target.length === key.length && key.every((k) => target.includes(k));
}

/**
 * The key of a COPY body's first row when it is the first column, unquoted (a client's ids are):
 * the first field of the record after the header line; else null.
 * @example firstKeyCell(Buffer.from('id,name\nb0c5a000-0000-4000-8000-000000000001,x\n')) // 'b0c5a000-0000-4000-8000-000000000001'
 */
export function firstKeyCell(body: Uint8Array): string | null {
  const t = new CsvTokenizer();
  if (t.read(body, 0, body.length, true) !== TOKENS_OK || t.next >= body.length) return null;
  if (t.read(body, t.next, body.length, true) !== TOKENS_OK || t.flags[0] & QUOTED) return null;
  const [from, to] = [t.starts[0], t.ends[0]];
  return to === from || to - from > 64 ? null : Buffer.from(body.buffer, body.byteOffset + from, to - from).toString('latin1');
}

/**
 * Whether the body's first row already has a stored record (one indexed lookup): then the
 * straight COPY would fail on that row after its round trips and the body's transfer, as every
 * batch of a re-import does, so the staging path is taken at once.
 */
async function firstRowStored(tx: Queryable, plan: WritePlan, schema: string, body: Uint8Array): Promise<boolean> {
  const pk = plan.table.primaryKey;
  if (pk.length !== 1 || plan.columns[0]?.name !== pk[0]) return false;
  const key = firstKeyCell(body);
  if (key === null) return false;
  const col = plan.columns[0];
  // a failed statement would abort the transaction: only keys that surely cast are looked up
  if (col.type === 'uuid' ? normalizeUuid(key) === null : col.type !== 'text') return false;
  const r = await tx.query(`SELECT 1 FROM ${tableRef(schema, plan.table)} WHERE ${ident(col.name)} = $1::text::${col.type} LIMIT 1`, [key]);
  return r.rows.length > 0;
}

/**
 * A COPY body loaded straight into the table: when no row conflicts (a first load, new rows), this
 * is the whole write, and PostgreSQL does half the work of the staging path (no temporary table,
 * no INSERT … SELECT). It runs without a savepoint, in a transaction that began with a 200 ms
 * `lock_timeout` (DIRECT_LOCK_TIMEOUT): rather than wait on a row another transaction is writing (and
 * maybe deadlock with an upsert), it gives up. Any error (a key that exists, a bad value, that
 * lock) is DirectRefused: execute() rolls the transaction back and runs the request again the
 * staged way, which gives it exactly the outcome and error it had before. Rows that conflict make
 * this attempt cost the rows before the first conflict; an all-conflicts batch fails on its first
 * row (and firstRowStored sends such a batch the staged way at once).
 */
async function copyDirect(
  tx: Queryable,
  plan: Extract<Planned['plan'], { kind: 'insert' | 'update' | 'delete' | 'put' }>,
  schema: string,
  body: Uint8Array,
  timezoneApplied: boolean,
): Promise<WriteResult> {
  let n: number;
  try {
    n = await tx.copyCsv!(tableRef(schema, plan.table), plan.columns.map((c) => ident(c.name)), body);
  } catch (err) {
    throw refused(err);
  }
  return directWrite(n, timezoneApplied);
}

/** The answer of a straight write (copyDirect, insertDirect): every row new, `n` of them. */
function directWrite(n: number, timezoneApplied: boolean): WriteResult {
  return { kind: 'write', n, inserted: n > 0, insertedRows: n, received: n, body: null, keys: null, timezoneApplied };
}

/** A straight write the database refused: the request runs again, staged (see copyDirect). */
class DirectRefused extends Error {}

/** A refusal by the database is DirectRefused; anything else (a lost connection, an aborted store) stays what it is. */
function refused(err: unknown): unknown {
  return err instanceof StoreError && err.connection === null ? new DirectRefused() : err;
}

/** The transaction-local setting of a request's first try when its COPY body may go straight in (copyDirect). */
const DIRECT_LOCK_TIMEOUT = ['lock_timeout', '200ms'] as const;

/**
 * A checked batch (link-batch.ts) written from its staging table as copyDirect writes a COPY body:
 * a plain INSERT in the body's order, no ON CONFLICT; null when any row conflicts (or anything
 * else fails), and the caller's statement then writes the batch, which is still staged, exactly as before.
 */
async function insertDirect(tx: Queryable, plan: WritePlan, schema: string, staging: string, timezoneApplied: boolean): Promise<WriteResult | null> {
  const cols = plan.columns.map((c) => ident(c.name)).join(', ');
  return writeDirect(tx, timezoneApplied, async () => (await tx.query(`INSERT INTO ${tableRef(schema, plan.table)} (${cols}) SELECT ${cols} FROM ${staging} ORDER BY "pgrst_ord"`)).rowCount);
}

/**
 * `write` (every row new: its row count) inside a savepoint, whose write is then the request's
 * whole write (the caller returns it, and the transaction commits). Rows go in body order, not in key
 * order as the upsert takes them: rather than wait on a row another transaction is writing (and
 * maybe deadlock with an upsert that would then fail), give up after 200 ms and take the ordered
 * path. Any error rolls the savepoint back (the lock timeout with it) and answers null.
 */
async function writeDirect(tx: Queryable, timezoneApplied: boolean, write: () => Promise<number>): Promise<WriteResult | null> {
  await tx.query('SAVEPOINT pgrst_copy_direct');
  await tx.query(`SELECT set_config('lock_timeout', '200ms', true)`);
  let n: number;
  try {
    n = await write();
  } catch {
    await tx.query('ROLLBACK TO SAVEPOINT pgrst_copy_direct');
    return null;
  }
  // (no RELEASE: the transaction commits right after, which ends the savepoint too)
  return directWrite(n, timezoneApplied);
}

/**
 * A COPY_CSV body: on the request's first try (`direct`), straight into the table when the first
 * row is not stored and the links need nothing from the triggers (copyDirect, creditsCanonical);
 * else into this session's staging table, which the statement reads, links checked there
 * (`checked`: the catalog's key, link-batch.ts). Returns the write when it is done, else the rows staged.
 */
async function writeCopy(tx: Queryable, plan: WritePlan, schema: string, checked: string | null, credits: BodyCredits | null, timezoneApplied: boolean, direct: boolean): Promise<WriteResult | number> {
  if (!tx.copyCsv) throw new ApiError(415, 'PGRST102', 'This store cannot load COPY bodies');
  const body = plan.payload!.copy!;
  let fresh = false;
  if (direct) {
    // every row new (as far as the first one says): the body may go straight in; asked once for both ways
    let straight: boolean;
    try {
      fresh = !(await firstRowStored(tx, plan, schema, body));
      straight = fresh && (!checked || (await creditsCanonical(tx, plan, schema, body, checked, credits!)));
    } catch (err) {
      throw refused(err); // (under the 200 ms lock timeout: the staged way waits as it always has)
    }
    if (straight) return copyDirect(tx, plan, schema, body, timezoneApplied);
    await tx.query('SET LOCAL lock_timeout TO DEFAULT');
  }
  const stage = copyStage(plan, schema);
  await tx.query(stage.create);
  const received = await tx.copyCsv(stage.target, stage.columns, body);
  if (checked) {
    await checkBatch(tx, plan, schema, stage.target, checked, credits!.plain);
    if (fresh) {
      const written = await insertDirect(tx, plan, schema, stage.target, timezoneApplied);
      if (written) return written;
    }
  }
  return received;
}

/**
 * A staged insert's steps before its statement (src/server/staged.ts): the body into the staging
 * table (a COPY body's source ids checked there), then with `match=` each row's id decided
 * (decideIds). Returns the rows the body carried, the rows that move to another id (the insert
 * and the merge join them to the staged rows), how many collapsed into a later row, and how many
 * are still staged (`unchanged=skip` drops rows equal to their record). `fail` throws the
 * request's own answer.
 */
async function stage(tx: Queryable, plan: WritePlan, schema: string, fail: (e: ApiError) => never): Promise<{ received: number; collapsed: number; moves: Array<[number, string]>; staged: number }> {
  await tx.query(stagedCreate(plan, schema));
  const target = stagedTarget(plan);
  let received: number;
  if (plan.payload?.copy !== undefined) {
    if (!tx.copyCsv) fail(new ApiError(415, 'PGRST102', 'This store cannot load COPY bodies'));
    received = await tx.copyCsv!(target, stagedCopyColumns(plan), plan.payload.copy);
    if (plan.sourceIds) {
      const bad = (await tx.query<{ o: number; ids: string }>(copyShapeCheck(plan))).rows[0];
      if (bad) fail(copyShapeError(bad));
    }
  } else {
    const fill = stagedFillJson(plan, schema);
    received = (await tx.query(fill.sql, fill.params)).rowCount;
  }
  if (!plan.match) return { received, collapsed: 0, moves: [], staged: received };
  const decided = await decideIds(tx, plan, schema, target);
  const drop = stagedUnchanged(plan, schema, target, decided.held);
  const dropped = drop ? (await tx.query(drop.sql, drop.params)).rowCount : 0;
  return { received, collapsed: decided.collapsed, moves: decided.moves, staged: received - dropped };
}

/**
 * The match (match.ts): each staged row's id. Read first without the table's match lock: when
 * every row with a key found its stored record, nothing new is inserted by key and no concurrent
 * writer can make that decision wrong (an unchanged re-run's batches then run side by side).
 * Otherwise the lock, and the match read again under it: the second of two concurrent writers
 * reads the first one's rows.
 */
async function decideIds(tx: Queryable, plan: WritePlan, schema: string, target: string): Promise<Resolution & { held: number[] }> {
  const alts = plan.match!.length;
  const lookup = matchLookup(plan.table, plan.match!, schema, target);
  await tx.query(`SELECT set_config('jit', 'off', true)`);
  let rows = (await tx.query<LookupRow>(lookup)).rows;
  if (rows.some((r) => placesNew(r, alts))) {
    const lock = matchLock(schema, plan.table);
    await tx.query(lock.sql, lock.params);
    rows = (await tx.query<LookupRow>(lookup)).rows;
  }
  const res = resolveIds(rows, alts);
  return { ...res, held: heldRows(rows, res) };
}

/** Whether a looked-up row has a key that names no stored record (it may become a new record with that key). */
function placesNew(row: LookupRow, alternatives: number): boolean {
  let keyed = false;
  for (let i = 0; i < alternatives; i++) {
    if (typeof row[`k${i}`] !== 'string') continue;
    if (typeof row[`m${i}`] === 'string') return false;
    keyed = true;
  }
  return keyed;
}

/** Rows the unchanged drop must leave staged: those that move, and those that share their id with another row (the last of them is written). */
function heldRows(rows: readonly LookupRow[], res: Resolution): number[] {
  const moved = new Map(res.moves);
  const count = new Map<string, number>();
  const idOf = (r: LookupRow) => moved.get(Number(r.o)) ?? r.id;
  for (const r of rows) count.set(idOf(r), (count.get(idOf(r)) ?? 0) + 1);
  return rows.filter((r) => moved.has(Number(r.o)) || count.get(idOf(r))! > 1).map((r) => Number(r.o));
}

/**
 * What follows a write whose source ids go to their side table (afterWrite): the merge (a source
 * id another record holds fails the request, 409), then the representation, read from the written
 * rows' keys now that their source ids are there.
 */
async function finishWrite(
  tx: Queryable,
  planned: Planned,
  plan: WritePlan,
  schema: string,
  keys: unknown[][],
  moves: ReadonlyArray<[number, string]>,
  fail: (e: ApiError) => never,
): Promise<string | null> {
  const ids = keys.map((k) => String(k[0]));
  if (plan.sourceIds) {
    const merge = mergeSourceIds(plan, schema, ids, moves);
    const c = (await tx.query<{ conflict: string | null }>(merge.check.sql, merge.check.params)).rows[0];
    if (c?.conflict) fail(sourceIdConflict(plan.table.name, JSON.parse(c.conflict)));
    await tx.query(merge.add.sql, merge.add.params);
  }
  if (planned.returnMode !== 'representation') return null;
  const read = buildRepresentation(plan, schema, planned.representation.format, ids);
  return ((await tx.query<{ body: string | null }>(read.sql, read.params)).rows[0]?.body as string | null) ?? null;
}

/** The checks that roll a write back once its rows are counted: PUT's key, singular, limited mutations, max-affected. */
function checkWritten(planned: Planned, plan: WritePlan, n: number, fail: (e: ApiError) => never): void {
  const { prefs } = planned;
  if (plan.kind === 'put' && n === 0) fail(new ApiError(400, 'PGRST115', 'Payload values do not match URL in primary key column(s)'));
  if (planned.representation.singular && n !== 1) fail(singularError(n));
  if (plan.limited?.limit !== undefined && n > plan.limited.limit) {
    fail(new ApiError(400, 'PGRST110', 'The maximum number of rows allowed to change was surpassed', {
      details: `Results contain ${n} rows changed but the maximum number allowed is ${plan.limited.limit}`,
    }));
  }
  if (prefs.handling === 'strict' && prefs.maxAffected !== undefined && (plan.kind === 'update' || plan.kind === 'delete') && n > prefs.maxAffected) {
    fail(new ApiError(400, 'PGRST124', 'Query result exceeds max-affected preference constraint', { details: `The query affects ${n} rows` }));
  }
}

/** `Prefer: run=`: the write counter tallies the transaction's statements as the run's own (runs.ts). */
function runSetting(planned: Planned): LocalSettings {
  return planned.prefs.run !== undefined && planned.plan.kind !== 'read' ? [[RUN_SETTING, planned.prefs.run]] : [];
}

/**
 * Runs a planned request. A read that sets nothing transaction-local (no `Prefer: timezone`) is
 * sent as its statement alone: one statement is atomic and sees one snapshot by itself, and
 * BEGIN/COMMIT would cost two more round trips to the database than the statement (the count
 * estimate's EXPLAIN reads no rows, so it needs no shared snapshot either). Everything else runs
 * in one transaction; an ApiError thrown inside rolls it back. `signal` aborts when the client went
 * away: the store cancels the statement (PostgreSQL) and nothing is committed.
 */
export async function execute(store: Store, planned: Planned, statement: Statement, extra: Statement | null, signal?: AbortSignal): Promise<ExecResult> {
  const { prefs } = planned;
  if (planned.plan.kind === 'read' && prefs.timezone === undefined && !runsAsRole(planned.request.principal)) {
    const row = (await store.query<Record<string, unknown>>(statement.sql, statement.params, signal)).rows[0] ?? {};
    return readResult(store, planned, row, extra, false);
  }
  let abort: ApiError | null = null;
  const fail = (e: ApiError): never => {
    abort = e;
    throw e;
  };
  // a staged insert with links is checked as one set, and skips the row triggers (link-batch.ts);
  // the key is read before the transaction (the embedded store runs one statement at a time)
  const checked = planned.plan.kind === 'insert' && linkColumns(planned.plan).length > 0 ? await batchKey(store) : null;
  // a COPY body's credits are read before the transaction too: the embedded store's thread runs
  // another batch's statements meanwhile (the ids are kept for the way straight in, when it is open)
  const credits = checked && planned.plan.kind !== 'read' && !planned.plan.staged && planned.plan.payload?.copy !== undefined ? await bodyCreditsSliced(planned.plan.payload.copy, planned.plan, directCopyAllowed(planned)) : null;
  // a COPY body that may go straight into the table is tried so first (copyDirect), and if the database refuses that, staged
  const directable = planned.plan.kind !== 'read' && !planned.plan.staged && planned.plan.payload?.copy !== undefined && directCopyAllowed(planned);
  const attempt = (direct: boolean) => store.transaction(async (tx): Promise<ExecResult> => {
    await actAs(tx, planned.request.principal); // --db-roles: the JWT's database role (db-role.ts)
    const timezoneApplied = await applyTimezone(tx, prefs);
    if (prefs.timezone !== undefined && !timezoneApplied && prefs.handling === 'strict') {
      fail(new ApiError(400, 'PGRST122', 'Invalid preferences given with handling=strict', {
        details: `Invalid preferences: ${[...prefs.invalid, `timezone=${prefs.timezone}`].join(', ')}`,
      }));
    }
    let received: number | null = null;
    let collapsed: number | undefined;
    let moves: Array<[number, string]> = [];
    let params = statement.params;
    const plan0 = planned.plan;
    if (plan0.kind !== 'read' && plan0.staged) {
      const s = await stage(tx, plan0, store.schema, fail);
      ({ received, moves } = s);
      if (plan0.match) [params, collapsed] = [bindMoves(params, moves), s.collapsed];
      if (checked && s.staged > 0) await checkBatch(tx, plan0, store.schema, stagedTarget(plan0), checked);
    } else if (plan0.kind !== 'read' && plan0.payload?.copy !== undefined) {
      const copied = await writeCopy(tx, plan0, store.schema, checked, credits, timezoneApplied, direct);
      if (typeof copied !== 'number') return copied;
      received = copied;
    } else if (plan0.kind !== 'read' && plan0.payload && plan0.payload.rows >= 0) received = plan0.payload.rows;
    const row = (await tx.query<Record<string, unknown>>(statement.sql, params)).rows[0] ?? {};
    if (planned.plan.kind === 'read') return readResult(tx, planned, row, extra, timezoneApplied);
    const plan = planned.plan;
    const n = num(row.n);
    checkWritten(planned, plan, n, fail);
    const keysText = row.keys as string | null | undefined;
    const keys = keysText ? (JSON.parse(keysText) as unknown[][]) : null;
    const body = afterWrite(plan) ? await finishWrite(tx, planned, plan, store.schema, keys ?? [], moves, fail) : ((row.body as string | null) ?? null);
    return {
      kind: 'write' as const,
      n,
      inserted: Boolean(row.inserted),
      insertedRows: num(row.inserted_rows),
      received,
      body,
      keys,
      timezoneApplied,
      ...(collapsed !== undefined ? { collapsed } : {}),
    };
  }, signal, [...runSetting(planned), ...(direct ? [DIRECT_LOCK_TIMEOUT] : [])]);
  try {
    const result = await attempt(directable).catch((err: unknown) => (err instanceof DirectRefused && !signal?.aborted ? attempt(false) : Promise.reject(err)));
    if (result.kind === 'write' && planned.plan.kind !== 'read') store.wrote?.(planned.plan.table.name, result.n);
    return result;
  } catch (err) {
    // The store wraps whatever the callback throws; our own answer is kept aside.
    if (abort) throw abort;
    throw err;
  }
}

/**
 * A COPY read (copy-out.ts answers with it): with a sink, the read's rows as PostgreSQL's CSV COPY
 * writes them, resolving when the COPY has finished; without one (HEAD), the statement is planned
 * and checked (bad values, unknown casts) without reading a row.
 */
export async function executeCopyRead(store: Store, planned: Planned, sink: ((chunk: Uint8Array) => Promise<void>) | null): Promise<void> {
  if (planned.plan.kind !== 'read') throw new Error('executeCopyRead: a read plan is required');
  const select = buildCopyRead(planned.plan, store.schema);
  if (!sink) {
    await store.query(`SELECT 1 FROM (${select}) AS _t LIMIT 0`);
    return;
  }
  if (!store.copyCsvOut) throw new Error('executeCopyRead: this store cannot run COPY TO');
  await store.copyCsvOut(select, sink);
}

/** Whether the request's table has more than `cap` rows (the table's, not the read's: counting stops after one row too many). */
export async function tableHasMoreRows(store: Store, planned: Planned, cap: number): Promise<boolean> {
  const table = tableRef(store.schema, planned.request.table);
  const r = await store.query<{ n: number | string }>(`SELECT count(*) AS n FROM (SELECT 1 FROM ${table} LIMIT ${cap + 1}) AS _c`);
  return Number(r.rows[0]?.n ?? 0) > cap;
}
