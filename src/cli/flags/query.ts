import { isFilterOp, OPERATORS, operatorsOf } from '../../grammar/operators.js';
import { parseFilter, parseOrder, parseSelect } from '../../grammar/parse.js';
import { parseWhereExpr, SHORT_FORM } from '../../grammar/expr.js';
import type { Condition, Filter, OrderClause, PageClause, Query, SelectItem, WhereClause } from '../../grammar/types.js';
import { UsageError } from '../errors.js';
import { type ColumnDef, relationsOf, type SchemaModel, type TableDef, typeKind } from '../../schema/model.js';
import { requireField } from './fields.js';
import { accentPattern } from './accents.js';
import { resolveRelativeDate } from './relative-date.js';
import { editDistance } from '../../format/suggest.js';
import { checkText } from './values.js';

import type { ReadFlags } from '../commands/shared.js';

/** The read flags of list/export: one key per READ_FLAGS row (src/cli/commands/shared.ts). */
export type { ReadFlags };

/** Runs a grammar parser on one flag's value, turning its error into a usage error that names the flag. */
export function parseFlag<T>(flag: string, text: string, parse: (t: string) => T): T {
  try {
    return parse(text);
  } catch (err) {
    if (err instanceof UsageError) throw err;
    const e = err as Error & { details?: string | null };
    throw new UsageError(`${flag} '${text}': ${e.message}${e.details ? ` (${e.details})` : ''}`, hintFor(flag));
  }
}

function hintFor(flag: string): string {
  switch (flag) {
    case '--where':
    case '--or':
      return "write field=op.value (release_date=gte.2024-01-01, genre=in.(House,Techno)) or field OP value with OP one of = != < <= > >= ~ !~ (release_date>=2024-01-01, stage_name~*dj*)";
    case '--select':
      return 'for example --select id,name or --select "release_title,labels(name)"';
    case '--order':
      return 'for example --order release_date.desc,release_title';
    default:
      return '';
  }
}

/**
 * A non-negative whole number from a flag.
 * @example count('--limit', '20') // 20
 */
export function count(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text.trim())) throw new UsageError(`${flag} needs a whole number ≥ 0, not '${text}'`);
  return Number(text);
}

/** `id=eq.<id>` on the collection's primary key, the id checked against its type. */
export function byId(table: TableDef, id: string): WhereClause {
  const pk = table.primaryKey[0] ?? 'id';
  const value = checkText(requireField(table, pk), id);
  return { path: [], condition: { kind: 'filter', field: { name: pk, jsonPath: [] }, negated: false, op: 'eq', value } };
}

/** The filter operators closest to a mistyped one (ties all), when one or two edits away. */
function nearestOperators(word: string): string[] {
  const scored = OPERATORS.map(({ op }) => ({ op, score: editDistance(word, op) }));
  const best = Math.min(...scored.map((s) => s.score));
  return best <= (word.length <= 3 ? 1 : 2) ? scored.filter((s) => s.score === best).map((s) => s.op) : [];
}

/**
 * A `field=op.value` expression whose operator is mistyped (`genre=eqq.House`, `ilke`), whose
 * known operator's value does not parse (`in.(House,Techno`), or `==`: each would otherwise fall
 * back to the short form and be sent as `eq.<the whole text>`, an empty answer that looks like
 * one. Values that merely contain dots (`title=Mr. Brown`, `version=1.2`) are not operators.
 */
function operatorMistake(flag: string, text: string): UsageError | null {
  const eq = text.indexOf('=');
  if (eq <= 0) return null;
  const key = text.slice(0, eq).trim();
  if (/[!<>~]$/.test(key) || /^(and|or|not\.(and|or))$/.test(key) || /\.(and|or)$/.test(key)) return null;
  const value = text.slice(eq + 1);
  if (value.startsWith('=')) {
    return new UsageError(`${flag} '${text}': '==' is not an operator`, `write ${key}=${value.slice(1)} (or ${key}=eq.${value.slice(1)})`);
  }
  const m = /^(not\.)?([a-z]+)((?:\([^)]*\))?\.)([\s\S]*)$/.exec(value);
  if (!m) return null;
  const [, not = '', word, dot, rest] = m;
  if (isFilterOp(word)) {
    try {
      parseFilter(key, value);
      return null;
    } catch (err) {
      const e = err as Error & { details?: string | null };
      return new UsageError(`${flag} '${text}': the ${word} operator's value does not parse${e.details ? ` (${e.details})` : ''}`, hintFor(flag));
    }
  }
  const near = nearestOperators(word);
  if (near.length === 0) return null;
  const meant = near.map((op) => `${key}=${not}${op}${dot}${rest}`).join(' or ');
  return new UsageError(`${flag} '${text}': unknown operator '${word}'`, `did you mean ${meant}? To match the text itself, write ${key}=eq.${value}`);
}

/** One --where/--or expression as a where clause, its operator checked first. */
function whereExpr(flag: string, text: string): WhereClause {
  const mistake = operatorMistake(flag, text);
  if (mistake) throw mistake;
  return parseFlag(flag, text, parseWhereExpr);
}

/** --where and --or flags as where clauses (the --or expressions form one or=() group). */
export function parseFilters(where: readonly string[] = [], or: readonly string[] = []): WhereClause[] {
  const clauses = where.map((w) => whereExpr('--where', w));
  if (or.length > 0) {
    const parts = or.map((o) => whereExpr('--or', o));
    const path = parts[0].path;
    if (parts.some((p) => p.path.join('.') !== path.join('.'))) {
      throw new UsageError('all --or expressions must address the same collection or embed', 'for example --or genre=House --or genre=Techno');
    }
    clauses.push({ path, condition: { kind: 'or', negated: false, conditions: parts.map((p) => p.condition) } });
  }
  return clauses;
}

const ORDER_WORDS = new Set(['asc', 'desc', 'nullsfirst', 'nullslast']);

/**
 * `--order` written as `--where` writes an embedded field (`labels.name.desc`) in PostgREST's
 * form for it (`labels(name).desc`); every other term as it is.
 * @example embedOrder('labels.name.desc,release_title', releases) // 'labels(name).desc,release_title'
 */
export function embedOrder(spec: string, table: TableDef): string {
  return spec
    .split(',')
    .map((term) => {
      const [first, second, ...rest] = term.trim().split('.');
      const isField = table.columns.some((f) => f.name === first);
      if (isField || second === undefined || ORDER_WORDS.has(second) || !/^[A-Za-z_]\w*$/.test(first) || !/^[A-Za-z_]\w*$/.test(second)) return term;
      return [`${first}(${second})`, ...rest].join('.');
    })
    .join(',');
}

/** The flags of list/export as a checked query model. */
export function buildReadQuery(flags: ReadFlags, table: TableDef, schema: SchemaModel, removed: readonly string[] = [], now = Date.now()): Query {
  // aggregates (`genre,count()`) are PostgREST 12's; a service without them answers PGRST123
  const select = flags.select !== undefined && flags.select.trim() !== '' ? parseFlag('--select', flags.select, (s) => parseSelect(s, { aggregates: true })) : undefined;
  const order: OrderClause[] = flags.order ? [{ path: [], terms: parseFlag('--order', embedOrder(flags.order, table), parseOrder) }] : [];
  const limit = count('--limit', flags.limit);
  const offset = count('--offset', flags.offset);
  const page: PageClause[] = limit !== undefined || offset !== undefined ? [{ path: [], ...(limit !== undefined ? { limit } : {}), ...(offset !== undefined ? { offset } : {}) }] : [];
  const query: Query = { ...(select ? { select } : {}), where: parseFilters(flags.where, flags.or), order, page };
  return checkQuery(query, table, schema, removed, now);
}

/** What a select makes visible: the table, and its embeds by name or alias. */
export interface Scope {
  table: TableDef;
  embeds: Map<string, Scope>;
}

/** Checks select items against the schema and returns the scope they build. */
export function checkSelect(items: SelectItem[] | undefined, table: TableDef, schema: SchemaModel, removed: readonly string[] = []): Scope {
  const scope: Scope = { table, embeds: new Map() };
  for (const item of items ?? []) {
    if (item.type === 'field') {
      const f = requireField(table, item.field.name, removed);
      if (item.field.jsonPath.length > 0 && typeKind(f.type) !== 'json') {
        throw new UsageError(`'${f.name}' is ${f.type}, not JSON: a path (->) only works on json/jsonb fields`);
      }
    } else if (item.type === 'aggregate') {
      if (item.field) requireField(table, item.field.name, removed);
    } else if (item.type === 'embed') {
      const target = embedTarget(item.relation, table, schema);
      const inner = checkSelect(item.select, target, schema);
      scope.embeds.set(item.alias ?? item.relation, inner);
      if (item.alias) scope.embeds.set(item.relation, inner);
    }
  }
  return scope;
}

function embedTarget(relation: string, table: TableDef, schema: SchemaModel): TableDef {
  const related = relationsOf(schema, table.name);
  const byFk = table.columns.find((f) => f.name === relation && f.foreignKey);
  const name = byFk ? byFk.foreignKey!.table : related.some((r) => r.table === relation) ? relation : undefined;
  const target = name ? schema.tables.get(name) : undefined;
  if (!target) {
    const can = [...new Set(related.map((r) => r.table))];
    throw new UsageError(
      `${table.name} has no relationship to '${relation}'`,
      can.length ? `${table.name} can embed: ${can.join(', ')}` : `${table.name} has no foreign keys to embed through`,
    );
  }
  return target;
}

function scopeAt(root: Scope, path: string[]): Scope {
  let s = root;
  for (const step of path) {
    const next = s.embeds.get(step);
    if (!next) {
      throw new UsageError(`'${path.join('.')}' is not embedded in this request`, `add it to --select, for example --select '*,${step}(*)'`);
    }
    s = next;
  }
  return s;
}

const TEXT_OPS = new Set(operatorsOf('text', 'fts'));
const COMPARE_OPS = new Set(operatorsOf('compare'));
const CONTAIN_OPS = new Set(operatorsOf('contain'));

/** A filter value as sent: a relative date (`today`, `-30d`, `now-6h`) on a date or timestamp field made absolute, then checked by type. */
function filterValue(field: ColumnDef, raw: string, now: number): string {
  const kind = typeKind(field.type);
  // the short form keeps a value's trailing spaces (text may hold them); other types have none
  const value = kind === 'text' ? raw : raw.trimEnd();
  const absolute = kind === 'date' || kind === 'timestamp' ? resolveRelativeDate(value, kind, now) : null;
  return checkText(field, absolute ?? value);
}

function checkFilter(f: Filter, scope: Scope, removed: readonly string[], now: number): Filter {
  // `labels=is.null` / `labels=not.is.null` test whether an embed matched.
  if (f.op === 'is' && f.field.jsonPath.length === 0 && scope.embeds.has(f.field.name)) return f;
  const field = requireField(scope.table, f.field.name, removed);
  const kind = typeKind(field.type);
  if (f.field.jsonPath.length > 0) {
    if (kind !== 'json') throw new UsageError(`'${field.name}' is ${field.type}, not JSON: a path (->) only works on json/jsonb fields`);
    // `~` on a path read as text (->>) ignores accents too, as on a text field
    const asText = f.field.jsonPath[f.field.jsonPath.length - 1].arrow === '->>';
    if (asText && SHORT_FORM.has(f) && f.op === 'ilike' && typeof f.value === 'string' && !f.modifier) return { ...f, op: 'imatch', value: accentPattern(f.value) };
    return f;
  }
  if (TEXT_OPS.has(f.op) && kind !== 'text' && kind !== 'other') {
    throw new UsageError(
      `'${f.op}' matches text, but ${field.name} is ${field.type}`,
      kind === 'date' || kind === 'timestamp' ? `compare dates instead: --where '${field.name}>=2024-01-01' --where '${field.name}<2025-01-01'` : `use = or in.(…) on ${field.name}`,
    );
  }
  if (CONTAIN_OPS.has(f.op) && kind !== 'json' && kind !== 'other') {
    throw new UsageError(`'${f.op}' needs a json or array field, but ${field.name} is ${field.type}`);
  }
  if (f.modifier) return f;
  // `~` on a text field ignores accents as well as case: the same match as a regex any PostgREST takes.
  if (SHORT_FORM.has(f) && f.op === 'ilike' && typeof f.value === 'string' && kind === 'text') return { ...f, op: 'imatch', value: accentPattern(f.value) };
  if (f.op === 'in' && Array.isArray(f.value)) return { ...f, value: f.value.map((v) => filterValue(field, v, now)) };
  if (COMPARE_OPS.has(f.op) && typeof f.value === 'string') return { ...f, value: filterValue(field, f.value, now) };
  return f;
}

function checkCondition(c: Condition, scope: Scope, removed: readonly string[], now: number): Condition {
  if (c.kind === 'filter') return checkFilter(c, scope, removed, now);
  return { ...c, conditions: c.conditions.map((x) => checkCondition(x, scope, removed, now)) };
}

/** Checks every field, embed, operator and value of a query against the schema; returns it with values normalised. */
export function checkQuery(q: Query, table: TableDef, schema: SchemaModel, removed: readonly string[] = [], now = Date.now()): Query {
  const root = checkSelect(q.select, table, schema, removed);
  const where = q.where.map((w) => {
    const scope = scopeAt(root, w.path);
    return { ...w, condition: checkCondition(w.condition, scope, w.path.length === 0 ? removed : [], now) };
  });
  const select = q.select && where.some((w) => w.path.length > 0) ? innerForShortFilters(q.select, q.where) : q.select;
  for (const o of q.order) {
    const scope = scopeAt(root, o.path);
    for (const t of o.terms) {
      const s = t.relation ? scopeAt(scope, [t.relation]) : scope;
      requireField(s.table, t.field.name, s === root ? removed : []);
    }
  }
  return { ...q, ...(select ? { select } : {}), where };
}

/**
 * A short-form filter on an embedded field (`labels.name=Bass Culture`) means "the parent rows
 * whose embed matches": its embed becomes `!inner` (PostgREST would otherwise list every parent,
 * with the embed empty where it does not match). The raw form (`labels.name=eq.Bass Culture`)
 * and an embed written `!left` keep the unmatched parents.
 */
function innerForShortFilters(items: SelectItem[], where: WhereClause[]): SelectItem[] {
  const paths = where.filter((w) => w.path.length > 0 && w.condition.kind === 'filter' && SHORT_FORM.has(w.condition)).map((w) => w.path);
  const mark = (list: SelectItem[], depth: number, live: string[][]): SelectItem[] =>
    list.map((item) => {
      if (item.type !== 'embed') return item;
      const here = live.filter((p) => p[depth] === (item.alias ?? item.relation) || p[depth] === item.relation);
      if (here.length === 0) return item;
      const select = mark(item.select, depth + 1, here.filter((p) => p.length > depth + 1));
      return { ...item, select, ...(item.join === undefined ? { join: 'inner' as const } : {}) };
    });
  return mark(items, 0, paths);
}
