import { expect } from 'vitest';
import { fromRequest } from '../../src/server/exchange.js';
import { planRequest, type Planned, type ReadPlan, type WritePlan } from '../../src/server/plan.js';
import { parseRequest, type TableRequest } from '../../src/server/request.js';
import { buildPlannedCount, buildRead, buildWrite, type Statement } from '../../src/server/sql.js';

/**
 * Pure request → plan → SQL helpers: a request goes through the service's own parser
 * (`fromRequest`, `parseRequest`), planner (`planRequest`) and query builder, with no store and no
 * database. What the tests read is the plan, the SQL text and the exact bound parameters.
 */

export const SCHEMA = 'public';

export interface PureRequest {
  headers?: Record<string, string>;
  /** A string is sent as is; anything else as JSON (Content-Type application/json unless given). */
  body?: unknown;
  /** PostgREST's db-max-rows. */
  maxRows?: number;
  /** The schema the request is planned and built against (default `public`). */
  schema?: string;
}

/** Parses a request as the service does (no JWT secret: every request is allowed, as the embedded catalog). */
export async function parsed(method: string, path: string, opts: PureRequest = {}): Promise<TableRequest> {
  const body = opts.body === undefined ? undefined : typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
  const headers = new Headers(opts.headers);
  if (body !== undefined && !headers.has('content-type')) headers.set('Content-Type', 'application/json');
  const req = new Request(`http://localhost${path}`, { method, headers, body });
  const r = await parseRequest(fromRequest(req), { schema: opts.schema ?? SCHEMA, maxBodyBytes: 1 << 20, aggregates: true });
  if (r.kind !== 'table') throw new Error(`not a table request: ${r.kind}`);
  return r;
}

/** The request planned (`planRequest`), as app.ts plans it. */
export async function planned(method: string, path: string, opts: PureRequest = {}): Promise<Planned> {
  return planRequest(await parsed(method, path, opts), { schema: opts.schema ?? SCHEMA, maxRows: opts.maxRows });
}

/** A GET/HEAD's read plan. */
export async function readPlan(path: string, opts: PureRequest = {}, method = 'GET'): Promise<ReadPlan> {
  const p = (await planned(method, path, opts)).plan;
  if (p.kind !== 'read') throw new Error(`expected a read plan, got ${p.kind}`);
  return p;
}

/** A write's plan. */
export async function writePlan(method: string, path: string, opts: PureRequest = {}): Promise<WritePlan> {
  const p = (await planned(method, path, opts)).plan;
  if (p.kind === 'read') throw new Error('expected a write plan');
  return p;
}

/**
 * The request's statement, chosen as app.ts's buildStatement chooses it (not exported there):
 * a read's `buildRead` (plus the EXPLAIN of a planned/estimated count), a write's `buildWrite`
 * with the representation's format only for `return=representation`.
 */
export async function statement(method: string, path: string, opts: PureRequest = {}): Promise<Statement & { extra: Statement | null; planned: Planned }> {
  const pl = await planned(method, path, opts);
  const schema = opts.schema ?? SCHEMA;
  const { plan, representation } = pl;
  if (plan.kind === 'read') {
    const extra = plan.count === 'planned' || plan.count === 'estimated' ? buildPlannedCount(plan, schema) : null;
    return { ...buildRead(plan, schema, representation.format), extra, planned: pl };
  }
  return { ...buildWrite(plan, schema, pl.returnMode === 'representation' ? representation.format : 'none'), extra: null, planned: pl };
}

/** What a rejected step threw, as the error body reads it (ApiError and GrammarError alike). */
export async function failure(p: Promise<unknown>): Promise<{ status: number; code: string; message: string; details: unknown; hint: unknown }> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err, 'expected the request to be refused').toBeInstanceOf(Error);
  const e = err as Error & { status: number; code: string; details?: unknown; hint?: unknown };
  return { status: e.status, code: e.code, message: e.message, details: e.details ?? null, hint: e.hint ?? null };
}

/**
 * Each value reaches the database only as a bound parameter: it is among `params` (exactly), and
 * nowhere in the SQL text.
 */
export function expectBound(st: Statement, values: readonly unknown[]): void {
  expect(values.length).toBeGreaterThan(0);
  for (const v of values) {
    expect(st.params, `${String(v)} is bound`).toContainEqual(v);
    if (typeof v === 'string') expect(st.sql, `${v} is not in the SQL text`).not.toContain(v);
  }
}

/** `$n` placeholders of a statement, in order of appearance (each distinct). */
export function placeholders(sql: string): number[] {
  return [...new Set([...sql.matchAll(/\$(\d+)/g)].map((m) => Number(m[1])))];
}

/** The placeholder that binds `value` (its 1-based index in params). */
export function slot(st: Statement, value: unknown): string {
  const i = st.params.findIndex((p) => Object.is(p, value) || JSON.stringify(p) === JSON.stringify(value));
  expect(i, `${String(value)} is a parameter`).toBeGreaterThanOrEqual(0);
  return `$${i + 1}`;
}
