import type {
  Condition,
  FieldRef,
  Filter,
  AggregateFn,
  JsonPathStep,
  OrderTerm,
  Preferences,
  Query,
  RangeHeader,
  SelectAggregate,
  SelectEmbed,
  SelectItem,
  WhereClause,
} from '../grammar/types.js';
import { RELATIONSHIPS, tableByName, type ColumnDef, type Relationship, type TableDef } from '../schema/catalog.js';
import { computedColumn, computedField, SOURCE_IDS } from '../schema/source-ids.js';
import { editDistance } from '../shared/edit-distance.js';
import { ApiError } from './errors.js';
import { limitError, rootWindow } from './paging.js';
import { chooseRepresentation, type Representation } from './negotiate.js';
import { planMatch, takeMatch, type PlannedMatch } from './match-preference.js';
import type { Payload } from './payload.js';
import type { TableRequest } from './request.js';

/**
 * The plan: every identifier of the request resolved against the schema description (columns,
 * embeds and their relationships, order targets, conflict columns). Planning never touches the
 * database; `sql.ts` turns a plan into one statement.
 */

/** A column of a node's table, possibly followed by a JSON path. */
export interface ColumnRef {
  column: ColumnDef;
  jsonPath: JsonPathStep[];
  /**
   * Set for a PostgREST computed field (`source_ids`, src/schema/source-ids.ts): the value is the
   * function `column.name(row)` of this table's row, as PostgREST calls it, never a column.
   */
  computed?: TableDef;
}

export type OutItem =
  | { kind: 'column'; key: string; ref: ColumnRef; cast?: string }
  /** An aggregate over the level's rows (`ref` null for `count()`), grouped by its column items. */
  | { kind: 'aggregate'; key: string; fn: AggregateFn; ref: ColumnRef | null; fieldCast?: string; cast?: string }
  | { kind: 'embed'; key: string; embed: EmbedNode }
  | { kind: 'spread'; embed: EmbedNode };

export type PlannedCondition =
  | { kind: 'filter'; ref: ColumnRef; filter: Filter }
  | { kind: 'embed-null'; embed: EmbedNode; isNull: boolean }
  | { kind: 'tree'; op: 'and' | 'or'; negated: boolean; conditions: PlannedCondition[] };

export interface PlannedOrder {
  ref: ColumnRef;
  /** Set when ordering by a to-one embed's column (`order=labels(name)`). */
  embed?: EmbedNode;
  /** Index of the column the embed's lateral exports for this order term. */
  exportIndex?: number;
  direction?: 'asc' | 'desc';
  nulls?: 'first' | 'last';
}

/** One level of a read: the root table or an embed. */
export interface ReadNode {
  table: TableDef;
  /** SQL alias of this level's table (`t1`, `t2`, …). */
  alias: string;
  items: OutItem[];
  where: PlannedCondition[];
  order: PlannedOrder[];
  limit?: number;
  offset?: number;
  embeds: EmbedNode[];
}

export interface EmbedNode extends ReadNode {
  /** Output key: the alias, else the relation as written. */
  key: string;
  /** Names a filter/order path may use for this embed: alias first, then the relation. */
  names: string[];
  relationship: Relationship;
  toOne: boolean;
  inner: boolean;
  spread: boolean;
  /** SQL alias of the lateral subquery (`e1`, …). */
  lateral: string;
  /** Columns of this (to-one) embed that the parent orders by. */
  orderExports: ColumnRef[];
}

export type CountMode = 'exact' | 'planned' | 'estimated' | null;

export interface ReadPlan {
  kind: 'read';
  root: ReadNode;
  count: CountMode;
  head: boolean;
}

export interface WritePlan {
  kind: 'insert' | 'update' | 'delete' | 'put';
  table: TableDef;
  /** Representation of the affected rows (alias `t1` reads the written rows). */
  root: ReadNode;
  /** Root filters choosing the rows to update/delete (and the PUT key). */
  where: PlannedCondition[];
  /** Columns the body sets, in body order. */
  columns: ColumnDef[];
  payload: Payload | null;
  onConflict?: { columns: ColumnDef[]; action: 'merge' | 'ignore' };
  missingDefault: boolean;
  /** `Prefer: unchanged=skip` (our extension): a merge leaves rows whose values are all equal untouched. */
  skipUnchanged: boolean;
  /** PATCH/DELETE with limit (+ order): only the first rows in that order are changed. */
  limited?: { order: PlannedOrder[]; limit?: number; offset?: number };
  /** Whether the statement must build the representation body. */
  representation: boolean;
  /** Whether PK values of the written rows are needed (Location of return=headers-only). */
  wantKeys: boolean;
  /** Our extension: the body carries `source_ids`, merged into their side table after the write (src/server/source-ids.ts). */
  sourceIds: boolean;
  /** Our extension, `Prefer: match=` on an upsert: the alternatives that decide each row's id (src/server/match.ts). */
  match: PlannedMatch[] | null;
  /** An insert whose rows are staged with their order and source ids first (src/server/staged.ts): with source ids or a match. */
  staged: boolean;
}

export type Plan = ReadPlan | WritePlan;

/** What planning needs from the parsed request. */
export interface PlanInput {
  method: 'GET' | 'HEAD' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  table: TableDef;
  schema: string;
  query: Query;
  prefs: Preferences;
  /** The Range header (GET only; already validated). */
  range: RangeHeader | null;
  payload: Payload | null;
  /** Whether the response must carry rows (representation, or a singular/CSV answer needs them). */
  representation: boolean;
  wantKeys: boolean;
  maxRows?: number;
  /** `Prefer: match=`'s value, taken out of the preferences (takeMatch). */
  match?: string | null;
}

class Aliases {
  private t = 0;
  private e = 0;
  table(): string {
    return `t${++this.t}`;
  }
  lateral(): string {
    return `e${++this.e}`;
  }
}

function undefinedColumn(table: string, name: string): ApiError {
  return new ApiError(400, '42703', `column ${table}.${name} does not exist`);
}

function columnOf(table: TableDef, name: string): ColumnDef {
  const c = table.columns.find((col) => col.name === name);
  if (!c) throw undefinedColumn(table.name, name);
  return c;
}

/**
 * A field a read may name: a column, or a computed field (PostgREST lets `select`, filters and
 * `order` use those like columns; `*` does not include them, and no write sets them).
 */
function resolveRef(table: TableDef, field: FieldRef): ColumnRef {
  const column = table.columns.find((col) => col.name === field.name);
  if (column) return { column, jsonPath: field.jsonPath };
  const computed = computedField(table.name, field.name);
  if (!computed) throw undefinedColumn(table.name, field.name);
  return { column: computedColumn(computed), jsonPath: field.jsonPath, computed: table };
}

/** Output key of a selected field: the alias, else the last named JSON key, else the column. */
function keyOf(field: FieldRef, alias?: string): string {
  if (alias) return alias;
  for (let i = field.jsonPath.length - 1; i >= 0; i--) {
    const k = field.jsonPath[i].key;
    if (!/^-?\d+$/.test(k) || field.jsonPath[i].text) return k;
  }
  return field.name;
}

const CAST_NAME = /^[A-Za-z0-9_ ]+$/;

/** Plans the select tree of one level. */
function planLevel(table: TableDef, select: SelectItem[] | undefined, aliases: Aliases, schema: string, alias = aliases.table()): ReadNode {
  const node: ReadNode = { table, alias, items: [], where: [], order: [], embeds: [] };
  for (const item of select ?? [{ type: 'star' }]) {
    if (item.type === 'star') {
      for (const c of table.columns) node.items.push({ kind: 'column', key: c.name, ref: { column: c, jsonPath: [] } });
    } else if (item.type === 'field') {
      if (item.cast !== undefined && !CAST_NAME.test(item.cast)) {
        throw new ApiError(400, '42704', `type "${item.cast}" does not exist`);
      }
      node.items.push({ kind: 'column', key: keyOf(item.field, item.alias), ref: resolveRef(table, item.field), ...(item.cast ? { cast: item.cast } : {}) });
    } else if (item.type === 'aggregate') {
      node.items.push(planAggregate(table, item));
    } else {
      const embed = planEmbed(table, item, aliases, schema);
      node.embeds.push(embed);
      if (embed.spread) node.items.push({ kind: 'spread', embed });
      // An empty embed (`labels()`) joins for filtering but emits no key.
      else if (item.select.length > 0) node.items.push({ kind: 'embed', key: embed.key, embed });
    }
  }
  checkAggregateShape(node);
  return node;
}

/**
 * The items a level outputs once its to-one spreads are flattened into it, as PostgREST 12.2
 * flattens them: a spread's columns group the level's aggregates, and a spread's aggregates are
 * computed over the level's rows (`...labels!inner(name.max())`: once over the result).
 */
export function flattenedItems(node: ReadNode): OutItem[] {
  return node.items.flatMap((i) => (i.kind === 'spread' ? flattenedItems(i.embed) : [i]));
}

/**
 * Aggregates group by the level's columns and its spreads' columns (`count(),...labels!inner()`
 * counts over the join). An embed kept as JSON cannot be a grouping key here: beside an aggregate
 * it is a 400 PGRST123.
 */
function checkAggregateShape(node: ReadNode): void {
  const items = flattenedItems(node);
  if (items.some((i) => i.kind === 'aggregate') && items.some((i) => i.kind === 'embed')) {
    throw new ApiError(400, 'PGRST123', 'Aggregates cannot be combined with embedded resources on the same level here', {
      hint: 'aggregate inside the embed instead, e.g. select=name,releases(count()), or spread it: select=count(),...labels(name)',
    });
  }
}

/** An aggregate select item, its field and casts checked. */
function planAggregate(table: TableDef, item: SelectAggregate): OutItem {
  for (const c of [item.fieldCast, item.cast]) {
    if (c !== undefined && !CAST_NAME.test(c)) throw new ApiError(400, '42704', `type "${c}" does not exist`);
  }
  const ref = item.field ? resolveRef(table, item.field) : null;
  return {
    kind: 'aggregate',
    key: item.alias ?? item.fn,
    fn: item.fn,
    ref,
    ...(item.fieldCast ? { fieldCast: item.fieldCast } : {}),
    ...(item.cast ? { cast: item.cast } : {}),
  };
}

/** Finds the one relationship an embed means (by table or FK column, narrowed by the hint). */
function resolveRelationship(from: TableDef, item: SelectEmbed, schema: string): { rel: Relationship; table: TableDef } {
  let candidates = RELATIONSHIPS.filter((r) => r.from === from.name && r.to === item.relation);
  if (candidates.length === 0) {
    // `label_id(name)`: the FK column as the target names the to-one side.
    candidates = RELATIONSHIPS.filter((r) => r.from === from.name && r.cardinality === 'many-to-one' && r.fkColumn === item.relation);
  }
  if (item.hint !== undefined) candidates = candidates.filter((r) => r.constraint === item.hint || r.fkColumn === item.hint);
  if (candidates.length === 0) {
    const using = item.hint !== undefined ? ` using the hint '${item.hint}'` : '';
    throw new ApiError(400, 'PGRST200', `Could not find a relationship between '${from.name}' and '${item.relation}' in the schema cache`, {
      details: `Searched for a foreign key relationship between '${from.name}' and '${item.relation}'${using} in the schema '${schema}', but no matches were found.`,
      hint: suggestTable(from.name, item.relation),
    });
  }
  if (candidates.length > 1) {
    throw new ApiError(300, 'PGRST201', `Could not embed because more than one relationship was found for '${from.name}' and '${item.relation}'`, {
      details: candidates.map((r) => ({
        cardinality: r.cardinality,
        embedding: `${from.name} with ${r.to}`,
        relationship: `${r.constraint} using ${r.child}(${r.fkColumn}) and ${r.parent}(id)`,
      })),
      hint: `Try changing '${item.relation}' to one of the following: ${candidates.map((r) => `'${item.relation}!${r.constraint}'`).join(', ')}. Find the desired relationship in the 'details' key.`,
    });
  }
  const rel = candidates[0];
  return { rel, table: tableByName(rel.to) as TableDef };
}

/** "Perhaps you meant …" for a relation name one or two edits away from a related table. */
function suggestTable(from: string, wanted: string): string | null {
  const related = RELATIONSHIPS.filter((r) => r.from === from).map((r) => r.to);
  // plain Levenshtein (no swaps), as these hints have always counted
  const best = related.map((t) => ({ t, d: editDistance(t, wanted, { swaps: false }) })).sort((a, b) => a.d - b.d)[0];
  return best && best.d <= 2 ? `Perhaps you meant '${best.t}' instead of '${wanted}'.` : null;
}

function planEmbed(from: TableDef, item: SelectEmbed, aliases: Aliases, schema: string): EmbedNode {
  const { rel, table } = resolveRelationship(from, item, schema);
  const toOne = rel.cardinality === 'many-to-one';
  if (item.spread && !toOne) {
    throw new ApiError(400, 'PGRST119', `A spread operation on '${item.relation}' is not possible`, {
      details: `'${from.name}' and '${item.relation}' do not form a many-to-one or one-to-one relationship`,
    });
  }
  const level = planLevel(table, item.select, aliases, schema);
  const names = item.alias !== undefined ? [item.alias, item.relation] : [item.relation];
  return {
    ...level,
    key: item.alias ?? item.relation,
    names,
    relationship: rel,
    toOne,
    inner: item.join === 'inner',
    spread: item.spread,
    lateral: aliases.lateral(),
    orderExports: [],
  };
}

/** The embed a path (`['labels', 'countries']`) addresses, or PGRST108. */
function nodeAt(root: ReadNode, path: string[]): ReadNode {
  let node = root;
  for (const name of path) {
    const next = node.embeds.find((e) => e.names[0] === name) ?? node.embeds.find((e) => e.names.includes(name));
    if (!next) throw notEmbedded(name);
    node = next;
  }
  return node;
}

function notEmbedded(name: string): ApiError {
  return new ApiError(400, 'PGRST108', `'${name}' is not an embedded resource in this request`, {
    hint: `Verify that '${name}' is included in the 'select' query parameter.`,
  });
}

/** Resolves one condition against a level: columns, or `embed=is.null` / `embed=not.is.null`. */
function planCondition(node: ReadNode, c: Condition): PlannedCondition {
  if (c.kind !== 'filter') {
    return { kind: 'tree', op: c.kind, negated: c.negated, conditions: c.conditions.map((x) => planCondition(node, x)) };
  }
  if (c.op === 'is' && c.value === 'null' && c.field.jsonPath.length === 0 && !c.modifier) {
    const embed = node.embeds.find((e) => e.names[0] === c.field.name) ?? node.embeds.find((e) => e.names.includes(c.field.name));
    if (embed) return { kind: 'embed-null', embed, isNull: !c.negated };
  }
  return { kind: 'filter', ref: resolveRef(node.table, c.field), filter: c };
}

function planOrder(node: ReadNode, term: OrderTerm): PlannedOrder {
  const base = { direction: term.direction, nulls: term.nulls };
  if (term.relation === undefined) return { ...base, ref: resolveRef(node.table, term.field) };
  const embed = node.embeds.find((e) => e.names[0] === term.relation) ?? node.embeds.find((e) => e.names.includes(term.relation as string));
  if (!embed) throw notEmbedded(term.relation);
  if (!embed.toOne) {
    throw new ApiError(400, 'PGRST118', `A related order on '${embed.table.name}' is not possible`, {
      details: `'${node.table.name}' and '${embed.table.name}' do not form a many-to-one or one-to-one relationship`,
    });
  }
  const ref = resolveRef(embed.table, term.field);
  embed.orderExports.push(ref);
  return { ...base, ref, embed, exportIndex: embed.orderExports.length - 1 };
}

function applyWhere(root: ReadNode, where: WhereClause[], skipRoot = false): PlannedCondition[] {
  const rootConds: PlannedCondition[] = [];
  for (const w of where) {
    const node = nodeAt(root, w.path);
    const planned = planCondition(node, w.condition);
    if (w.path.length === 0) rootConds.push(planned);
    if (w.path.length > 0 || !skipRoot) node.where.push(planned);
  }
  return rootConds;
}

/** Applies `order=` and `limit=/offset=` for embedded levels (the root's page is handled by the caller). */
function applyShaping(root: ReadNode, q: Query, maxRows: number | undefined): void {
  for (const o of q.order) {
    const node = nodeAt(root, o.path);
    node.order.push(...o.terms.map((t) => planOrder(node, t)));
  }
  for (const p of q.page) {
    if (p.path.length === 0) continue;
    const node = nodeAt(root, p.path);
    if (p.limit !== undefined && p.limit < 0) throw limitError();
    node.limit = p.limit;
    node.offset = p.offset !== undefined && p.offset > 0 ? p.offset : undefined;
  }
  if (maxRows !== undefined) capEmbeds(root, maxRows);
}

function capEmbeds(node: ReadNode, maxRows: number): void {
  for (const e of node.embeds) {
    if (!e.toOne) e.limit = e.limit === undefined ? maxRows : Math.min(e.limit, maxRows);
    capEmbeds(e, maxRows);
  }
}

function countMode(prefs: Preferences): CountMode {
  return prefs.count === 'exact' || prefs.count === 'planned' || prefs.count === 'estimated' ? prefs.count : null;
}

/** Plans a GET/HEAD. */
export function planRead(input: PlanInput): ReadPlan {
  const aliases = new Aliases();
  const root = planLevel(input.table, input.query.select, aliases, input.schema);
  applyWhere(root, input.query.where);
  applyShaping(root, input.query, input.maxRows);
  const w = rootWindow(input.query, input.range, input.maxRows);
  root.limit = w.limit;
  root.offset = w.offset > 0 ? w.offset : undefined;
  return { kind: 'read', root, count: countMode(input.prefs), head: input.method === 'HEAD' };
}

function payloadColumns(table: TableDef, keys: string[]): ColumnDef[] {
  const seen = new Set<string>();
  const out: ColumnDef[] = [];
  for (const k of keys) {
    const c = table.columns.find((col) => col.name === k);
    if (!c) throw new ApiError(400, 'PGRST204', `Could not find the '${k}' column of '${table.name}' in the schema cache`);
    if (!seen.has(k)) out.push(c);
    seen.add(k);
  }
  return out;
}

/** True when the filters are exactly one `eq` on every primary-key column (PUT's rule). */
function isPkFilter(table: TableDef, where: WhereClause[]): boolean {
  if (where.length !== table.primaryKey.length) return false;
  const seen = new Set<string>();
  for (const w of where) {
    const c = w.condition;
    if (w.path.length > 0 || c.kind !== 'filter' || c.op !== 'eq' || c.negated || c.modifier || c.field.jsonPath.length > 0) return false;
    if (!table.primaryKey.includes(c.field.name) || seen.has(c.field.name)) return false;
    seen.add(c.field.name);
  }
  return seen.size === table.primaryKey.length;
}

function mentionsEmbed(c: PlannedCondition): boolean {
  if (c.kind === 'embed-null') return true;
  return c.kind === 'tree' && c.conditions.some(mentionsEmbed);
}

/** Plans a POST/PATCH/PUT/DELETE. */
export function planWrite(input: PlanInput): WritePlan {
  const { table, query: q, prefs } = input;
  const aliases = new Aliases();
  const root = planLevel(table, q.select, aliases, input.schema);
  const kind = input.method === 'POST' ? 'insert' : input.method === 'PATCH' ? 'update' : input.method === 'PUT' ? 'put' : 'delete';
  const rootPage = q.page.find((p) => p.path.length === 0);
  const hasPage = rootPage !== undefined && (rootPage.limit !== undefined || rootPage.offset !== undefined);

  if (kind === 'put') {
    if (!isPkFilter(table, q.where)) {
      throw new ApiError(405, 'PGRST105', "Filters must include all and only primary key columns with 'eq' operators");
    }
    if (hasPage) throw new ApiError(400, 'PGRST114', 'limit/offset querystring parameters are not allowed for PUT');
  }
  let limited: WritePlan['limited'];
  if ((kind === 'update' || kind === 'delete') && hasPage) {
    const rootOrder = q.order.filter((o) => o.path.length === 0).flatMap((o) => o.terms);
    if (rootOrder.length === 0) {
      throw new ApiError(400, 'PGRST109', "A 'limit' was applied without an explicit 'order'", { hint: "Apply an 'order' using unique column(s)" });
    }
    if (rootPage?.limit !== undefined && rootPage.limit < 0) throw limitError();
    limited = {
      order: rootOrder.map((t) => {
        if (t.relation !== undefined) throw notEmbedded(t.relation);
        return { ref: resolveRef(table, t.field), direction: t.direction, nulls: t.nulls };
      }),
      limit: rootPage?.limit,
      offset: rootPage?.offset !== undefined && rootPage.offset > 0 ? rootPage.offset : undefined,
    };
  }

  // Root filters choose the rows written; embedded ones (and `embed=is.null` checks) shape the representation.
  const where: PlannedCondition[] = [];
  if (kind !== 'insert') {
    for (const c of applyWhere(root, q.where, true)) {
      if (mentionsEmbed(c)) root.where.push(c);
      else where.push(c);
    }
  } else applyWhere(root, q.where.filter((w) => w.path.length > 0));
  applyShaping(root, q, undefined);

  const payload = kind === 'delete' ? null : input.payload;
  let columns = payload ? payloadColumns(table, payload.keys) : [];
  if (kind === 'update' && payload && payload.rows === 0) columns = [];
  if (q.onConflict) for (const c of q.onConflict) columnOf(table, c);
  let onConflict: WritePlan['onConflict'];
  if (kind === 'insert' && prefs.resolution) {
    const names = q.onConflict ?? table.primaryKey;
    if (names.length > 0) {
      onConflict = { columns: names.map((n) => columnOf(table, n)), action: prefs.resolution === 'merge-duplicates' ? 'merge' : 'ignore' };
    }
  }
  if (kind === 'put') onConflict = { columns: table.primaryKey.map((n) => columnOf(table, n)), action: 'merge' };
  // match= steers an insert that resolves conflicts; anywhere else it does not apply (as PostgREST
  // drops a resolution it cannot apply), and is not echoed
  const match = kind === 'insert' && onConflict && input.match != null ? planMatch(table, input.match, onConflict.columns.map((c) => c.name)) : null;
  const sourceIds = payload?.sourceIds === true;
  const staged = kind === 'insert' && (sourceIds || match !== null);
  // a staged row always has an id (its own, or a new one when the body has none): the insert writes it
  if (staged && !columns.some((c) => c.name === 'id')) columns = [columnOf(table, 'id'), ...columns];
  return {
    kind,
    table,
    root,
    where,
    columns,
    payload,
    onConflict,
    missingDefault: prefs.missing === 'default',
    skipUnchanged: kind === 'insert' && prefs.unchanged === 'skip',
    limited,
    representation: input.representation,
    wantKeys: input.wantKeys,
    sourceIds,
    match,
    staged,
  };
}

/** A plan with the decisions the later stages share: representation, return mode, preferences. */
export interface Planned {
  plan: Plan;
  request: TableRequest;
  prefs: Preferences;
  representation: Representation;
  /** `return=` of a write (`none` is our alias of `minimal`). */
  returnMode: 'minimal' | 'headers-only' | 'representation';
  maxRows?: number;
}

function strictPreferences(prefs: Preferences): void {
  if (prefs.handling === 'strict' && prefs.invalid.length > 0) {
    throw new ApiError(400, 'PGRST122', 'Invalid preferences given with handling=strict', {
      details: `Invalid preferences: ${prefs.invalid.join(', ')}`,
    });
  }
}

/**
 * The planning stage's entry: resolves the request against the schema and settles content
 * negotiation and strict preferences in PostgREST's order (reads: Accept first; writes: Prefer first).
 */
export function planRequest(request: TableRequest, opts: { schema: string; maxRows?: number }): Planned {
  const { value: match, prefs } = takeMatch(request.prefs);
  const returnMode = prefs.return === 'representation' || prefs.return === 'headers-only' ? prefs.return : 'minimal';
  const read = request.method === 'GET' || request.method === 'HEAD';
  const input: PlanInput = {
    method: request.method,
    table: request.table,
    schema: opts.schema,
    query: request.query,
    prefs,
    range: request.range,
    payload: request.payload,
    representation: returnMode === 'representation',
    wantKeys: request.method === 'POST' && returnMode === 'headers-only',
    maxRows: opts.maxRows,
    match,
  };
  const plan = read ? planRead(input) : planWrite(input);
  let representation: Representation;
  if (read) {
    representation = chooseRepresentation(request.accept);
    strictPreferences(prefs);
  } else {
    strictPreferences(prefs);
    representation = chooseRepresentation(request.accept);
  }
  return { plan, request, prefs, representation, returnMode, maxRows: opts.maxRows };
}
