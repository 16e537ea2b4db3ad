import type { Filter, FilterOp } from '../grammar/types.js';
import { tableByName, type ColumnDef, type TableDef } from '../schema/catalog.js';
import { OPERATORS } from '../grammar/operators.js';
import { quoteIdent } from '../schema/identifiers.js';
import { SOURCE_IDS, sourceIdsTable } from '../schema/source-ids.js';
import { ApiError } from './errors.js';
import { flattenedItems, type ColumnRef, type EmbedNode, type OutItem, type PlannedCondition, type PlannedOrder, type ReadNode, type ReadPlan, type WritePlan } from './plan.js';

/**
 * Query building: a plan becomes ONE SQL statement. Identifiers come from the schema description
 * (or are request aliases, always double-quoted); every value is a bound parameter. Reads build the
 * whole response body inside the database (`json_agg` into one text value), so rows never become
 * JS objects; writes bind the whole body as one JSON parameter.
 */

/** How the response body is rendered. */
export type { BodyFormat } from './negotiate.js';
import type { BodyFormat } from './negotiate.js';

export interface Statement {
  sql: string;
  params: unknown[];
}

/** Collects bound parameters; `add` returns the placeholder. Knows the statement's schema (computed fields are its functions). */
export class Params {
  readonly values: unknown[] = [];
  constructor(readonly schema: string) {}
  add(v: unknown): string {
    this.values.push(v);
    return `$${this.values.length}`;
  }
}

/** Double-quotes an identifier. NUL cannot travel to PostgreSQL, so it is refused here. */
export function ident(name: string): string {
  if (name.includes('\u0000')) throw new ApiError(400, '22021', 'invalid byte sequence for encoding "UTF8": 0x00');
  return quoteIdent(name);
}

export function tableRef(schema: string, t: TableDef): string {
  return `${ident(schema)}.${ident(t.name)}`;
}

const INDEX = /^-?\d+$/;

/**
 * A computed field as PostgREST reads it: its function called with the row (`"public"."source_ids"(ROW(t1."id", …)::"public"."tracks")`).
 * The row is rebuilt from its columns, as embedSource does: a write's rows are a CTE, not the table.
 */
function computedExpr(alias: string, ref: ColumnRef & { computed: TableDef }, schema: string): string {
  const row = `ROW(${ref.computed.columns.map((c) => `${alias}.${ident(c.name)}`).join(', ')})::${tableRef(schema, ref.computed)}`;
  return `${ident(schema)}.${ident(ref.column.name)}(${row})`;
}

/** `t1."meta"->'a'->>'b'` with each key bound (unquoted integers as array indexes, `"2020"` as a key). */
function refExpr(alias: string, ref: ColumnRef, p: Params): string {
  let s = ref.computed ? computedExpr(alias, ref as ColumnRef & { computed: TableDef }, p.schema) : `${alias}.${ident(ref.column.name)}`;
  for (const step of ref.jsonPath) {
    const key = INDEX.test(step.key) && !step.text ? `${p.add(step.key)}::int` : `${p.add(step.key)}::text`;
    s = `(${s}${step.arrow}${key})`;
  }
  return s;
}

/** SQL-standard type names that are keywords, mapped to the catalog names that can be quoted. */
const TYPE_ALIASES: Record<string, string> = {
  int: 'int4',
  integer: 'int4',
  smallint: 'int2',
  bigint: 'int8',
  real: 'float4',
  float: 'float8',
  'double precision': 'float8',
  boolean: 'bool',
  decimal: 'numeric',
  dec: 'numeric',
  char: 'bpchar',
  character: 'bpchar',
  'character varying': 'varchar',
  'char varying': 'varchar',
  'timestamp with time zone': 'timestamptz',
  'timestamp without time zone': 'timestamp',
  'time with time zone': 'timetz',
  'time without time zone': 'time',
  'bit varying': 'varbit',
};

/** `::"int4"`: a cast whose type name can only ever be a (quoted) type name — a bad one is 42704. */
function castSuffix(cast: string): string {
  const norm = cast.trim().replace(/\s+/g, ' ').toLowerCase();
  return `::${ident(TYPE_ALIASES[norm] ?? norm)}`;
}

/** The SQL of each `op.value` operator (`=`, `LIKE`, `@>`, …) and each fts operator's function, from the operator table. */
const BINARY: Partial<Record<FilterOp, string>> = Object.fromEntries(OPERATORS.filter((o) => o.value === 'single').map((o) => [o.op, o.sql]));
const STARS = new Set(OPERATORS.filter((o) => o.stars).map((o) => o.op));
const FTS: Partial<Record<FilterOp, string>> = Object.fromEntries(OPERATORS.filter((o) => o.value === 'fts').map((o) => [o.op, o.sql]));

const IS_VALUES: Record<string, string> = { null: 'NULL', true: 'TRUE', false: 'FALSE', unknown: 'UNKNOWN' };

/** A PostgreSQL array literal (`{"a","b,c"}`) from list elements. */
export function arrayLiteral(items: string[]): string {
  return `{${items.map((s) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`).join(',')}}`;
}

function scalar(v: string | string[]): string {
  return Array.isArray(v) ? v.join(',') : v;
}

/** One operator application, e.g. `t1."release_title" LIKE $3`. */
function filterSql(expr: string, f: Filter, p: Params): string {
  let s: string;
  const wild = (v: string) => (STARS.has(f.op) ? v.replace(/\*/g, '%') : v);
  if (f.op === 'in') {
    const items = Array.isArray(f.value) ? f.value : [f.value];
    s = `${expr} = ANY(${p.add(arrayLiteral(items))})`;
  } else if (f.op === 'is') {
    const kw = IS_VALUES[scalar(f.value).toLowerCase()];
    if (!kw) throw new ApiError(400, 'PGRST100', `"failed to parse filter (is.${scalar(f.value)})" (line 1, column 4)`);
    s = `${expr} IS ${kw}`;
  } else if (FTS[f.op]) {
    const lang = f.language !== undefined ? `${p.add(f.language)}::regconfig, ` : '';
    s = `${expr} @@ ${FTS[f.op]}(${lang}${p.add(scalar(f.value))})`;
  } else {
    const op = BINARY[f.op];
    if (!op) throw new ApiError(400, 'PGRST100', `unknown operator ${String(f.op)}`);
    if (f.modifier) s = `${expr} ${op} ${f.modifier === 'any' ? 'ANY' : 'ALL'}(${p.add(wild(scalar(f.value)))})`;
    else s = `${expr} ${op} ${p.add(wild(scalar(f.value)))}`;
  }
  return f.negated ? `NOT (${s})` : s;
}

/** The column whose non-null-ness says "this embed matched a row". */
function marker(e: EmbedNode): string {
  return e.toOne ? `${e.lateral}."_m"` : `${e.lateral}."_b"`;
}

/**
 * `source_ids->>legacy=eq.201` (or `in.(…)`) as the side table's index reads it: the rows whose
 * record has that source id. The same rows as the computed field's value compared (a record has
 * one id per source), without calling it for every row of the table. Null for any other filter.
 */
function sourceIdFilter(alias: string, c: Extract<PlannedCondition, { kind: 'filter' }>, p: Params): string | null {
  const f = c.filter;
  const step = c.ref.jsonPath[0];
  if (!c.ref.computed || c.ref.column.name !== SOURCE_IDS || c.ref.jsonPath.length !== 1 || step.arrow !== '->>') return null;
  if (f.negated || f.modifier || (f.op !== 'eq' && f.op !== 'in')) return null;
  const values = f.op === 'in' ? (Array.isArray(f.value) ? f.value : [f.value]) : [scalar(f.value)];
  const side = sourceIdsTable(p.schema);
  const ids = `SELECT _si.record FROM ${side} AS _si WHERE _si.collection = ${p.add(c.ref.computed.name)}::text AND _si.source = ${p.add(step.key)}::text AND _si.source_id = ANY(${p.add(arrayLiteral(values))}::text[])`;
  return `${alias}."id" IN (${ids})`;
}

function condSql(alias: string, c: PlannedCondition, p: Params): string {
  if (c.kind === 'filter') return sourceIdFilter(alias, c, p) ?? filterSql(refExpr(alias, c.ref, p), c.filter, p);
  if (c.kind === 'embed-null') return `${marker(c.embed)} IS ${c.isNull ? '' : 'NOT '}NULL`;
  const inner = c.conditions.map((x) => `(${condSql(alias, x, p)})`).join(c.op === 'and' ? ' AND ' : ' OR ');
  return c.negated ? `NOT (${inner})` : `(${inner})`;
}

function orderSql(alias: string, terms: PlannedOrder[], p: Params): string {
  if (terms.length === 0) return '';
  const parts = terms.map((o) => {
    const expr = o.embed ? `${o.embed.lateral}."_o${o.exportIndex}"` : refExpr(alias, o.ref, p);
    const dir = o.direction === 'desc' ? ' DESC' : o.direction === 'asc' ? ' ASC' : '';
    const nulls = o.nulls === 'first' ? ' NULLS FIRST' : o.nulls === 'last' ? ' NULLS LAST' : '';
    return `${expr}${dir}${nulls}`;
  });
  return ` ORDER BY ${parts.join(', ')}`;
}

/** Beyond 2^53 a limit means "no limit" and an offset "past the end" either way; keep the bound value exact. */
const clamp = (n: number): number => Math.min(Math.trunc(n), Number.MAX_SAFE_INTEGER);

function pageSql(limit: number | undefined, offset: number | undefined, p: Params): string {
  let s = '';
  limit = limit === undefined ? undefined : clamp(limit);
  offset = offset === undefined ? undefined : clamp(offset);
  if (limit !== undefined) s += ` LIMIT ${p.add(limit)}::bigint`;
  if (offset !== undefined && offset > 0) s += ` OFFSET ${p.add(offset)}::bigint`;
  return s;
}

/** A level's output columns as `[key, expression]`, spreads flattened into their embed's exports. */
function flatItems(node: ReadNode, p: Params): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const item of node.items) out.push(...itemExprs(node, item, p));
  return out;
}

function itemExprs(node: ReadNode, item: OutItem, p: Params): Array<[string, string]> {
  if (item.kind === 'column') {
    const e = refExpr(node.alias, item.ref, p);
    return [[item.key, item.cast !== undefined ? `(${e})${castSuffix(item.cast)}` : e]];
  }
  if (item.kind === 'aggregate') {
    if (isSpread(node)) return [[item.key, aggregateArg(node, item, p)]];
    return [[item.key, aggregateCall(item, aggregateArg(node, item, p))]];
  }
  if (item.kind === 'embed') {
    const e = item.embed;
    return [[item.key, e.toOne ? `${e.lateral}."_b"` : `coalesce(${e.lateral}."_b", '[]'::json)`]];
  }
  return spreadExprs(node, item.embed);
}

type AggregateItem = Extract<OutItem, { kind: 'aggregate' }>;

/** Whether a level is a spread embed, whose items its parent outputs (and aggregates) as its own. */
function isSpread(node: ReadNode): boolean {
  return (node as Partial<EmbedNode>).spread === true;
}

/**
 * An aggregate's argument: the field with its cast, or for `count()` `*` — in a spread `true`, so
 * the parent's `count(e1."_c0")` counts the rows the spread matched.
 */
function aggregateArg(node: ReadNode, item: AggregateItem, p: Params): string {
  if (item.ref === null) return isSpread(node) ? 'true' : '*';
  return `(${refExpr(node.alias, item.ref, p)})${item.fieldCast !== undefined ? castSuffix(item.fieldCast) : ''}`;
}

/** `fn(arg)` with the cast after it. */
function aggregateCall(item: AggregateItem, arg: string): string {
  const e = `${item.fn}(${arg})`;
  return item.cast !== undefined ? `(${e})${castSuffix(item.cast)}` : e;
}

/**
 * The columns a spread embed exports (`e1."_c0"` …, see lateralSql). A spread's aggregates come
 * out as their arguments and are computed here, at the first level that is not itself a spread,
 * over that level's rows, as PostgREST 12.2 computes them.
 */
function spreadExprs(node: ReadNode, spread: EmbedNode): Array<[string, string]> {
  const leaves = flattenedItems(spread);
  return spreadKeys(spread).map((k, i) => {
    const col = `${spread.lateral}."_c${i}"`;
    const leaf = leaves[i];
    return [k, leaf?.kind === 'aggregate' && !isSpread(node) ? aggregateCall(leaf, col) : col];
  });
}

/** Output keys a spread embed contributes (its own items, nested spreads flattened). */
function spreadKeys(node: ReadNode): string[] {
  const keys: string[] = [];
  for (const item of node.items) {
    if (item.kind === 'spread') keys.push(...spreadKeys(item.embed));
    else keys.push(item.key);
  }
  return keys;
}

function selectList(cols: Array<[string, string]>): string {
  return cols.map(([k, e]) => `${e} AS ${ident(k)}`).join(', ');
}

/** Embeds whose lateral is needed just to evaluate a level's filters (for counts). */
function embedsInWhere(node: ReadNode): EmbedNode[] {
  const used = new Set<EmbedNode>();
  const walk = (c: PlannedCondition) => {
    if (c.kind === 'embed-null') used.add(c.embed);
    else if (c.kind === 'tree') c.conditions.forEach(walk);
  };
  node.where.forEach(walk);
  return node.embeds.filter((e) => e.inner || used.has(e));
}

function joinCondition(e: EmbedNode, parentAlias: string): string {
  const rel = e.relationship;
  // to-one: this embed is the parent table (its `id`); to-many: this embed is the child holding the FK.
  return e.toOne ? `${e.alias}."id" = ${parentAlias}.${ident(rel.fkColumn)}` : `${e.alias}.${ident(rel.fkColumn)} = ${parentAlias}."id"`;
}

interface BuildCtx {
  schema: string;
  p: Params;
  /** Only compute what filtering needs (count queries). */
  lean: boolean;
}

function lateralsSql(node: ReadNode, ctx: BuildCtx): string {
  const embeds = ctx.lean ? embedsInWhere(node) : node.embeds;
  return embeds.map((e) => ` LEFT JOIN LATERAL (${lateralSql(e, node.alias, ctx)}) AS ${e.lateral} ON TRUE`).join('');
}

function whereSql(node: ReadNode, extra: string[], ctx: BuildCtx): string {
  const conds = [...extra, ...node.where.map((c) => condSql(node.alias, c, ctx.p))];
  for (const e of node.embeds) if (e.inner) conds.push(`${marker(e)} IS NOT NULL`);
  return conds.length ? ` WHERE ${conds.map((c) => `(${c})`).join(' AND ')}` : '';
}

/**
 * `GROUP BY` of a level with aggregates: its other column items, as PostgREST groups them
 * (db-aggregates-enabled). Empty when the level has no aggregate.
 */
function groupSql(node: ReadNode, p: Params): string {
  if (isSpread(node) || !hasAggregates(node)) return '';
  const keys = node.items.flatMap((i) => (i.kind === 'column' ? itemExprs(node, i, p).map(([, e]) => e) : []));
  keys.push(...spreadGroupKeys(node));
  return keys.length ? ` GROUP BY ${keys.join(', ')}` : '';
}

/** Whether a level computes aggregates: its own, or its spreads' (computed at this level). */
function hasAggregates(node: ReadNode): boolean {
  return flattenedItems(node).some((i) => i.kind === 'aggregate');
}

/** The columns a level's spreads export that are not aggregates: grouping keys beside its own. */
function spreadGroupKeys(node: ReadNode): string[] {
  return node.items.flatMap((item) => {
    if (item.kind !== 'spread') return [];
    const leaves = flattenedItems(item.embed);
    return leaves.flatMap((leaf, i) => (leaf.kind === 'aggregate' ? [] : [`${item.embed.lateral}."_c${i}"`]));
  });
}

/** `FROM … LEFT JOIN LATERAL … WHERE … GROUP BY … ORDER BY … LIMIT … OFFSET …` of one level. */
function levelTail(node: ReadNode, from: string, extra: string[], ctx: BuildCtx, ordered = true): string {
  const order = ordered && !ctx.lean ? orderSql(node.alias, node.order, ctx.p) : '';
  return ` FROM ${from}${lateralsSql(node, ctx)}${whereSql(node, extra, ctx)}${groupSql(node, ctx.p)}${order}${pageSql(node.limit, node.offset, ctx.p)}`;
}

/**
 * What an embed reads from: its table joined on the foreign key, or, for a computed relationship,
 * the relationship's function called with the parent's row, as PostgREST calls it. The row is
 * rebuilt from its columns (`ROW(…)::releases`) because a write's parent is the CTE of the written
 * rows, whose row type is not the table's; PostgreSQL folds it back to the columns when it inlines.
 */
function embedSource(e: EmbedNode, parentAlias: string, schema: string): { from: string; join: string[] } {
  const rel = e.relationship;
  if (!rel.computed) return { from: `${tableRef(schema, e.table)} AS ${e.alias}`, join: [joinCondition(e, parentAlias)] };
  const parent = tableByName(rel.from) as TableDef;
  const row = `ROW(${parent.columns.map((c) => `${parentAlias}.${ident(c.name)}`).join(', ')})::${tableRef(schema, parent)}`;
  return { from: `${ident(schema)}.${ident(rel.to)}(${row}) AS ${e.alias}`, join: [] };
}

function lateralSql(e: EmbedNode, parentAlias: string, ctx: BuildCtx): string {
  const { from, join } = embedSource(e, parentAlias, ctx.schema);
  if (!e.toOne) {
    const inner = ctx.lean ? 'SELECT 1' : `SELECT ${selectList(flatItems(e, ctx.p))}`;
    const agg = ctx.lean ? 'bool_or(true)' : 'json_agg(_r)';
    return `SELECT ${agg} AS "_b" FROM (${inner}${levelTail(e, from, join, ctx)}) AS _r`;
  }
  const cols: string[] = ['true AS "_m"'];
  if (!ctx.lean) {
    const items = flatItems(e, ctx.p);
    if (e.spread) items.forEach(([, expr], i) => cols.push(`${expr} AS "_c${i}"`));
    else cols.push(`(SELECT row_to_json(_r) FROM (SELECT ${selectList(items)}) AS _r) AS "_b"`);
    e.orderExports.forEach((ref, i) => cols.push(`${refExpr(e.alias, ref, ctx.p)} AS "_o${i}"`));
  }
  return `SELECT ${cols.join(', ')}${levelTail(e, from, join, ctx)}`;
}

/** The aggregate that turns the rows of `_t` into the response body text. */
function bodyExpr(format: BodyFormat): string {
  switch (format) {
    case 'json':
      return `coalesce(json_agg(_t), '[]')::text`;
    case 'json-stripped':
      return `json_strip_nulls(coalesce(json_agg(_t), '[]'))::text`;
    case 'object':
      return `(json_agg(_t)->0)::text`;
    case 'object-stripped':
      return `json_strip_nulls(json_agg(_t)->0)::text`;
    case 'csv':
      // PostgREST's CSV: each row's record literal without its parentheses, one per line. btrim
      // is exact here (a field starting or ending with a parenthesis is quoted) and renders each
      // row once, where substring(_t::text, 2, length(_t::text) - 2) rendered it twice.
      return `coalesce(string_agg(btrim(_t::text, '()'), chr(10)), '')`;
    case 'none':
      return 'NULL::text';
  }
}

/** The output keys of a level (the CSV header). */
export function outputKeys(node: ReadNode): string[] {
  return node.items.flatMap((item) => (item.kind === 'spread' ? spreadKeys(item.embed) : [item.key]));
}

/** The count-only query of a read's root (`SELECT count(*) …` or, for EXPLAIN, `SELECT 1 …`). */
function countQuery(plan: ReadPlan, schema: string, p: Params, what: string): string {
  const root = plan.root;
  const ctx: BuildCtx = { schema, p, lean: true };
  const from = `${tableRef(schema, root.table)} AS ${root.alias}`;
  return `SELECT ${what} FROM ${from}${lateralsSql(root, ctx)}${whereSql(root, [], ctx)}`;
}

/** The exact count of a read: its rows, or with aggregates its groups. */
function totalQuery(plan: ReadPlan, schema: string, p: Params): string {
  const root = plan.root;
  if (!hasAggregates(root)) return countQuery(plan, schema, p, 'count(*)');
  // Grouping by a spread's columns needs its lateral's exports, which the lean count leaves out.
  const ctx: BuildCtx = { schema, p, lean: !root.items.some((i) => i.kind === 'spread') };
  const from = `${tableRef(schema, root.table)} AS ${root.alias}`;
  return `SELECT count(*) FROM (SELECT 1 FROM ${from}${lateralsSql(root, ctx)}${whereSql(root, [], ctx)}${groupSql(root, p)}) AS _g`;
}

/**
 * A read as one statement returning one row: `total` (count or null), `n` (rows in the page) and
 * `body` (the response body text).
 */
export function buildRead(plan: ReadPlan, schema: string, format: BodyFormat): Statement {
  const p = new Params(schema);
  const total = plan.count === 'exact' || plan.count === 'estimated' ? `(${totalQuery(plan, schema, p)})` : 'NULL::bigint';
  const ctx: BuildCtx = { schema, p, lean: false };
  const root = plan.root;
  const from = `${tableRef(schema, root.table)} AS ${root.alias}`;
  const inner = `SELECT ${selectList(flatItems(root, p))}${levelTail(root, from, [], ctx)}`;
  const body = bodyExpr(plan.head ? 'none' : format);
  return { sql: `SELECT ${total} AS total, count(*) AS n, ${body} AS body FROM (${inner}) AS _t`, params: p.values };
}

/**
 * Params that write each value into the SQL as a literal, for COPY, which takes no bound
 * parameters: `E'…'` with backslashes and quotes doubled (an untyped literal, resolved from its
 * context as a parameter is). NUL cannot travel to PostgreSQL either way.
 * Example: `new Literals(schema).add("it's")` → `E'it''s'`.
 */
class Literals extends Params {
  override add(v: unknown): string {
    if (v === null || v === undefined) return 'NULL';
    const s = typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean' ? String(v) : JSON.stringify(v);
    if (s.includes('\u0000')) throw new ApiError(400, '22021', 'invalid byte sequence for encoding "UTF8": 0x00');
    return `E'${s.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
  }
}

/** A read's planned SELECT alone (its rows, filters, order, limit and offset), values inlined: what `COPY (…) TO` runs. */
export function buildCopyRead(plan: ReadPlan, schema: string): string {
  const p = new Literals(schema);
  const ctx: BuildCtx = { schema, p, lean: false };
  const root = plan.root;
  return `SELECT ${selectList(flatItems(root, p))}${levelTail(root, `${tableRef(schema, root.table)} AS ${root.alias}`, [], ctx)}`;
}

/** `EXPLAIN (FORMAT JSON)` of the count query: the planner's row estimate (`count=planned`). */
export function buildPlannedCount(plan: ReadPlan, schema: string): Statement {
  const p = new Params(schema);
  return { sql: `EXPLAIN (FORMAT JSON) ${countQuery(plan, schema, p, '1')}`, params: p.values };
}

function defaultExpr(c: ColumnDef): string {
  // Trusted text from the schema description (e.g. `gen_random_uuid()`, `''::text`), never request text.
  return c.default ?? 'NULL';
}

/**
 * Makes this session's staging table `name` when it has none: `select`'s columns without
 * constraints or defaults, and `pgrst_ord` numbering rows as they arrive (a COPY fills it in body
 * order), then the `more` statements on it; emptied at every commit (a rollback empties it too).
 */
export function stagingTable(name: string, select: string, more: string[] = []): string {
  const target = `pg_temp.${ident(name)}`;
  return `DO $pgrst$ BEGIN
  IF to_regclass('pg_temp.${name}') IS NULL THEN
    CREATE TEMP TABLE ${ident(name)} ON COMMIT DELETE ROWS AS ${select} WITH NO DATA;
    ALTER TABLE ${target} ADD COLUMN "pgrst_ord" bigint GENERATED ALWAYS AS IDENTITY;${more.map((m) => `\n    ${m};`).join('')}
  END IF;
END $pgrst$`;
}

/**
 * The session's staging table of a `COPY_CSV` insert: a temporary copy of the table's columns
 * without constraints or defaults, emptied at every commit (a rollback empties it too). `create`
 * makes it when this connection has none yet.
 */
export function copyStage(plan: WritePlan, schema: string): { create: string; target: string; columns: string[] } {
  const name = `pgrst_copy_${plan.table.name}`;
  const target = ident(name);
  // "pgrst_ord" numbers the rows as the COPY brings them: a checked batch is written in the body's
  // order (execute.ts insertDirect) though the link check rewrote some of its rows in place
  return {
    create: stagingTable(name, `SELECT * FROM ${tableRef(schema, plan.table)}`),
    target: `pg_temp.${target}`,
    columns: plan.columns.map((c) => ident(c.name)),
  };
}

/**
 * Stand-ins in a staged insert's parameters for the moves' rows and ids (`bigint[]`, `uuid[]`),
 * which the statement joins to the staged rows: known only once the match has run (execute.ts
 * puts them in), where an UPDATE of the staged rows cost more than the rest of a batch's match.
 */
export const MOVED_ROWS = Symbol('moved rows');
export const MOVED_IDS = Symbol('moved ids');

/** The staged rows with each moved row's new id (`id`), as a FROM item (`_b`); `add` binds the moves. */
export function movedRows(staged: string, add: (v: unknown) => string): { from: string; id: string } {
  return {
    from: `${staged} AS _b LEFT JOIN unnest(${add(MOVED_ROWS)}::bigint[], ${add(MOVED_IDS)}::uuid[]) AS _m(o, id) ON _m.o = _b."pgrst_ord"`,
    id: `coalesce(_m.id, _b."id")`,
  };
}

/** The moves as the statement's parameters (see MOVED_ROWS). */
export function bindMoves(params: readonly unknown[], moves: ReadonlyArray<[number, string]>): unknown[] {
  const rows = moves.map((m) => m[0]);
  const ids = moves.map((m) => m[1]);
  return params.map((v) => (v === MOVED_ROWS ? `{${rows.join(',')}}` : v === MOVED_IDS ? `{${ids.join(',')}}` : v));
}

/**
 * The session's table of an insert's rows loaded with their order (`pgrst_ord`) and their
 * `source_ids` (src/server/staged.ts makes and fills it): the rows the insert reads when the body
 * carries source ids or `Prefer: match=` decides the ids.
 */
export function stagedTarget(plan: WritePlan): string {
  return `pg_temp.${ident(`pgrst_ext_${plan.table.name}`)}`;
}

function insertSource(plan: WritePlan, target: string, p: Params, rowsJson: string, schema = ''): string {
  const cols = plan.columns;
  if (plan.staged) {
    if (!plan.match) return `SELECT ${cols.map((c) => `_b.${ident(c.name)}`).join(', ')} FROM ${stagedTarget(plan)} AS _b`;
    // each row's id as the match decided it; rows that ended on the same id collapse to the last of them
    const moved = movedRows(stagedTarget(plan), (v) => p.add(v));
    const list = cols.map((c) => (c.name === 'id' ? `${moved.id} AS "id"` : `_b.${ident(c.name)}`)).join(', ');
    return `SELECT DISTINCT ON (${moved.id}) ${list} FROM ${moved.from} ORDER BY ${moved.id}, _b."pgrst_ord" DESC`;
  }
  if (plan.payload?.copy !== undefined) {
    return `SELECT ${cols.map((c) => `_b.${ident(c.name)}`).join(', ')} FROM ${copyStage(plan, schema).target} AS _b`;
  }
  if (plan.missingDefault && cols.length > 0) {
    const exprs = cols.map((c) => `CASE WHEN _o.obj ? ${p.add(c.name)}::text THEN _b.${ident(c.name)} ELSE ${defaultExpr(c)} END AS ${ident(c.name)}`);
    return `SELECT ${exprs.join(', ')} FROM jsonb_array_elements(${p.add(rowsJson)}::text::jsonb) AS _o(obj), LATERAL jsonb_populate_record(NULL::${target}, _o.obj) AS _b`;
  }
  const exprs = cols.map((c) => `_b.${ident(c.name)}`);
  return `SELECT ${exprs.join(', ')} FROM json_populate_recordset(NULL::${target}, ${p.add(rowsJson)}::text::json) AS _b`;
}

function conflictSql(plan: WritePlan): string {
  if (!plan.onConflict) return '';
  const target = plan.onConflict.columns.map((c) => ident(c.name)).join(', ');
  if (plan.onConflict.action === 'ignore' || plan.columns.length === 0) return ` ON CONFLICT (${target}) DO NOTHING`;
  const sets = plan.columns.map((c) => `${ident(c.name)} = EXCLUDED.${ident(c.name)}`);
  // unchanged=skip: a row whose every written column already holds the value is not updated (no
  // new row version, no `updated` bump); jsonb compares as values, timestamps as instants
  const t = plan.root.alias;
  const skip = plan.skipUnchanged
    ? ` WHERE (${plan.columns.map((c) => `${t}.${ident(c.name)}`).join(', ')}) IS DISTINCT FROM (${plan.columns.map((c) => `EXCLUDED.${ident(c.name)}`).join(', ')})`
    : '';
  return ` ON CONFLICT (${target}) DO UPDATE SET ${sets.join(', ')}${skip}`;
}

/**
 * `unchanged=skip`: rows of the body equal to the stored row with their key are dropped before
 * the insert, so they never reach the table's BEFORE INSERT triggers (the links trigger parses
 * and resolves every credit of a track) nor the speculative insertion; a re-import of an
 * unchanged file then costs an index lookup and a compare per row. Only rows equal as given are
 * dropped: a row the triggers would rewrite still goes through them and the IS DISTINCT FROM of
 * conflictSql, as before.
 */
function dropUnchanged(plan: WritePlan, schema: string, source: string): string {
  if (!plan.skipUnchanged || plan.onConflict?.action !== 'merge' || plan.columns.length === 0) return source;
  const keys = plan.onConflict.columns;
  if (keys.length === 0 || !keys.every((k) => plan.columns.some((c) => c.name === k.name))) return source;
  const on = keys.map((k) => `_x.${ident(k.name)} = _u.${ident(k.name)}`).join(' AND ');
  const same = `(${plan.columns.map((c) => `_x.${ident(c.name)}`).join(', ')}) IS NOT DISTINCT FROM (${plan.columns.map((c) => `_u.${ident(c.name)}`).join(', ')})`;
  return `SELECT * FROM (${source}) AS _u WHERE NOT EXISTS (SELECT 1 FROM ${tableRef(schema, plan.table)} AS _x WHERE ${on} AND ${same})`;
}

/**
 * An upsert takes its row locks in conflict-key order, so concurrent upserts of overlapping rows
 * sent in different orders queue behind each other instead of deadlocking (40P01).
 */
function lockOrdered(plan: WritePlan, source: string): string {
  if (!plan.onConflict) return source;
  const positions = plan.onConflict.columns.map((c) => plan.columns.findIndex((col) => col.name === c.name) + 1);
  if (positions.length === 0 || positions.includes(0)) return source;
  return `SELECT * FROM (${source}) AS _s ORDER BY ${positions.join(', ')}`;
}

/** The data-modifying statement of a write (without RETURNING). */
function mutationSql(plan: WritePlan, schema: string, p: Params): string {
  const target = tableRef(schema, plan.table);
  const t = plan.root.alias;
  const colList = plan.columns.length ? ` (${plan.columns.map((c) => ident(c.name)).join(', ')})` : '';
  const conds = (alias: string) => plan.where.map((c) => `(${condSql(alias, c, p)})`);
  switch (plan.kind) {
    case 'insert': {
      const rows = plan.payload?.json ?? '[]';
      return `INSERT INTO ${target} AS ${t}${colList} ${lockOrdered(plan, dropUnchanged(plan, schema, insertSource(plan, target, p, rows, schema)))}${conflictSql(plan)}`;
    }
    case 'put': {
      const first = plan.payload?.first ? JSON.stringify([plan.payload.first]) : '[]';
      // The URL's key filters are applied to the body row: a body whose key differs inserts nothing (PGRST115).
      const check = conds('_b');
      return `INSERT INTO ${target} AS ${t}${colList} ${insertSource({ ...plan, missingDefault: false }, target, p, first)}${check.length ? ` WHERE ${check.join(' AND ')}` : ''}${conflictSql(plan)}`;
    }
    case 'update': {
      if (plan.columns.length === 0 && plan.sourceIds) {
        // a body of source_ids alone changes no column: the rows it names are those the filters
        // choose, locked against a delete until the source ids are written (as an UPDATE would)
        const { using, where } = limitedJoin(plan, target, p);
        const all = [...conds(t), ...where];
        return `SELECT ${t}.* FROM ${target} AS ${t}${using ? `, ${using}` : ''}${all.length ? ` WHERE ${all.join(' AND ')}` : ''} FOR KEY SHARE OF ${t}`;
      }
      if (plan.columns.length === 0) return `SELECT ${t}.* FROM ${target} AS ${t} WHERE false`;
      const present = new Set(Object.keys(plan.payload?.first ?? {}));
      const sets = plan.columns.map((c) => {
        const value = !present.has(c.name) && plan.missingDefault ? 'DEFAULT' : `_b.${ident(c.name)}`;
        return `${ident(c.name)} = ${value}`;
      });
      const body = `(SELECT * FROM json_populate_record(NULL::${target}, ${p.add(JSON.stringify(plan.payload?.first ?? {}))}::text::json)) AS _b`;
      const { using, where } = limitedJoin(plan, target, p);
      const all = [...conds(t), ...where];
      return `UPDATE ${target} AS ${t} SET ${sets.join(', ')} FROM ${body}${using ? `, ${using}` : ''}${all.length ? ` WHERE ${all.join(' AND ')}` : ''}`;
    }
    case 'delete': {
      const { using, where } = limitedJoin(plan, target, p);
      const all = [...conds(t), ...where];
      return `DELETE FROM ${target} AS ${t}${using ? ` USING ${using}` : ''}${all.length ? ` WHERE ${all.join(' AND ')}` : ''}`;
    }
  }
}

/**
 * A limited PATCH/DELETE (PostgREST 12): the first `limit` rows in `order` are picked, and rows are
 * matched back on the ordering columns — so a non-unique order can change more rows (PGRST110).
 */
function limitedJoin(plan: WritePlan, target: string, p: Params): { using: string | null; where: string[] } {
  const lim = plan.limited;
  if (!lim) return { using: null, where: [] };
  const a = 'l1';
  const exprs = lim.order.map((o, i) => `${refExpr(a, o.ref, p)} AS "_k${i}"`);
  const conds = plan.where.map((c) => `(${condSql(a, c, p)})`);
  const sub = `(SELECT ${exprs.join(', ')} FROM ${target} AS ${a}${conds.length ? ` WHERE ${conds.join(' AND ')}` : ''}${orderSql(a, lim.order, p)}${pageSql(lim.limit, lim.offset, p)}) AS _a`;
  const t = plan.root.alias;
  const where = lim.order.map((o, i) => `${refExpr(t, o.ref, p)} IS NOT DISTINCT FROM _a."_k${i}"`);
  return { using: sub, where };
}

/**
 * A write as one statement returning one row: `n` (rows written), `inserted` (any row newly
 * inserted, for upserts), `body` (representation text or null) and `keys` (PKs of written rows).
 */
export function buildWrite(plan: WritePlan, schema: string, format: BodyFormat): Statement {
  const p = new Params(schema);
  const t = plan.root.alias;
  const tracksInsert = plan.kind === 'put' || plan.onConflict?.action === 'merge';
  // source ids are written after the rows (their side table refers to them): the representation,
  // which may show them, is read after that (buildRepresentation), from the written rows' keys
  const later = afterWrite(plan);
  if (later) format = 'none';
  const wantKeys = plan.wantKeys || later;
  const needRows = (plan.representation && format !== 'none') || wantKeys;
  // without a representation or keys, the CTE need not carry whole rows (bulk inserts write thousands)
  const returned = needRows ? `${t}.*${tracksInsert ? `, (${t}.xmax = 0) AS "pgrst_inserted"` : ''}` : tracksInsert ? `(${t}.xmax = 0) AS "pgrst_inserted"` : '1 AS "pgrst_one"';
  const returning = plan.kind === 'update' && plan.columns.length === 0 ? '' : ` RETURNING ${returned}`;
  const mutation = mutationSql(plan, schema, p) + returning;
  const inserted = tracksInsert ? `coalesce(bool_or("pgrst_inserted"), false)` : 'count(*) > 0';
  const insertedRows = tracksInsert ? `count(*) FILTER (WHERE "pgrst_inserted")` : plan.kind === 'insert' ? 'count(*)' : '0';
  let body = 'NULL::text';
  if (plan.representation && format !== 'none') {
    const ctx: BuildCtx = { schema, p, lean: false };
    const root = plan.root;
    const inner = `SELECT ${selectList(flatItems(root, p))}${levelTail(root, `pgrst_source AS ${t}`, [], ctx)}`;
    body = `(SELECT ${bodyExpr(format)} FROM (${inner}) AS _t)`;
  }
  const pk = plan.table.primaryKey;
  const keys = wantKeys && pk.length ? `(SELECT json_agg(json_build_array(${pk.map((k) => `s.${ident(k)}`).join(', ')}))::text FROM pgrst_source AS s)` : 'NULL::text';
  const sql = `WITH pgrst_source AS (${mutation}) SELECT count(*) AS n, ${inserted} AS inserted, ${insertedRows} AS inserted_rows, ${body} AS body, ${keys} AS keys FROM pgrst_source`;
  return { sql, params: p.values };
}

/** Whether a write has work after its statement: source ids to merge into their side table (and then its representation to read). */
export function afterWrite(plan: WritePlan): boolean {
  return plan.sourceIds || plan.match !== null;
}

/**
 * The representation of a write whose statement could not build it (afterWrite): the written
 * rows read again by their keys, in the order the write gave them, shaped by the same `select`.
 * Returns one row with `body`.
 */
export function buildRepresentation(plan: WritePlan, schema: string, format: BodyFormat, ids: readonly string[]): Statement {
  const p = new Params(schema);
  const t = plan.root.alias;
  const keys = `SELECT _k.id, _k.ord FROM unnest(${p.add(arrayLiteral([...ids]))}::uuid[]) WITH ORDINALITY AS _k(id, ord)`;
  const source = `SELECT _r.* FROM (${keys}) AS _k JOIN ${tableRef(schema, plan.table)} AS _r ON _r."id" = _k.id ORDER BY _k.ord`;
  const ctx: BuildCtx = { schema, p, lean: false };
  const inner = `SELECT ${selectList(flatItems(plan.root, p))}${levelTail(plan.root, `pgrst_source AS ${t}`, [], ctx)}`;
  return { sql: `WITH pgrst_source AS MATERIALIZED (${source}) SELECT ${bodyExpr(format)} AS body FROM (${inner}) AS _t`, params: p.values };
}
