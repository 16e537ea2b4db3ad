/**
 * Typed model → query string (the CLI side). Names and values are quoted only where PostgREST's
 * grammar needs it, so that `parseQuery(compileQuery(q))` gives `q` back.
 */
import { hsIsSpace } from './parsec.js';
import { encodeComponent } from './query-string.js';
import type { Condition, FieldRef, Filter, JsonPathStep, OrderTerm, Query, SelectItem, WhereClause } from './types.js';

const quote = (s: string): string => `"${s.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
const stripped = (s: string): boolean => {
  const cps = Array.from(s);
  return cps.length > 0 && !hsIsSpace(cps[0]) && !hsIsSpace(cps[cps.length - 1]);
};

/** Whether a name can be written bare: dash-separated runs of letters, digits, `_`, space, `$`, no outer blanks. */
function isBareName(name: string): boolean {
  return name.split('-').every((part) => /^[\p{L}0-9_ $]+$/u.test(part) && stripped(part));
}

/** A column/embed/alias name, quoted when needed: `release title` stays, `a.b` → `"a.b"`. */
export function compileName(name: string): string {
  return isBareName(name) ? name : quote(name);
}

function isBareKey(key: string): boolean {
  if (key.startsWith('"')) return false;
  return key.split('-').every((part) => part !== '' && !/[(\-:.,>)]/.test(part) && stripped(part));
}

/** A JSON path key: indexes stay bare (a negative one is quoted when a `)` follows, where it would not parse). */
function compileJsonKey(key: string, beforeParen: boolean, text?: true): string {
  if (text) return quote(key);
  if (/^\d+$/.test(key)) return key;
  if (/^-\d+$/.test(key)) return beforeParen ? quote(key) : key;
  return isBareKey(key) ? key : quote(key);
}

function compileJsonPath(path: JsonPathStep[], beforeParen: boolean): string {
  return path.map((s, i) => s.arrow + compileJsonKey(s.key, beforeParen && i === path.length - 1, s.text)).join('');
}

/** `name->a->>b` */
export function compileField(f: FieldRef, beforeParen = false): string {
  return compileName(f.name) + compileJsonPath(f.jsonPath, beforeParen);
}

// ---------------------------------------------------------------------------------------------
// Values

/** An element of an `in` list: quoted when it holds `,` `)`, starts with `"`, or (first) starts with a blank. */
function compileListElement(v: string, first: boolean): string {
  const needs = /[,)]/.test(v) || v.startsWith('"') || (first && /^[ \t]/.test(v));
  return needs ? quote(v) : v;
}

function compileList(values: string[]): string {
  if (values.length === 1 && values[0] === '') return '("")';
  return `(${values.map((v, i) => compileListElement(v, i === 0)).join(',')})`;
}

/** A value inside a logic tree: raw unless it holds `,`/`)` or starts with `"`/`{` (a plain `{…}` literal stays raw). */
function compileTreeValue(v: string): string {
  if (/^\{[^{}]*\}$/.test(v)) return v;
  const needs = /[,)]/.test(v) || v.startsWith('"') || v.startsWith('{');
  return needs ? quote(v) : v;
}

function compileOpExpr(f: Filter, value: (v: string) => string): string {
  let s = f.negated ? 'not.' : '';
  s += f.op;
  if (f.modifier !== undefined) s += `(${f.modifier})`;
  if (f.language !== undefined) s += `(${f.language})`;
  s += '.';
  if (f.op === 'in') s += compileList(Array.isArray(f.value) ? f.value : [f.value]);
  else s += value(Array.isArray(f.value) ? f.value.join(',') : f.value);
  return s;
}

/**
 * A condition in tree (dot) form: `name.not.eq.x`, `or(a.eq.1,b.is.null)`.
 * @example compileCondition({kind:'filter', field:{name:'a',jsonPath:[]}, negated:false, op:'eq', value:'x,y'}) // 'a.eq."x,y"'
 */
export function compileCondition(c: Condition): string {
  if (c.kind === 'filter') return `${compileField(c.field)}.${compileOpExpr(c, compileTreeValue)}`;
  return `${c.negated ? 'not.' : ''}${c.kind}(${c.conditions.map(compileCondition).join(',')})`;
}

// ---------------------------------------------------------------------------------------------
// Parameters

const RESERVED = new Set(['select', 'columns', 'on_conflict']);
const RESERVED_EMBEDDABLE = new Set(['order', 'limit', 'offset', 'and', 'or']);

function pathPrefix(path: string[]): string {
  return path.map((p) => `${compileName(p)}.`).join('');
}

/** A filter key; the column is quoted when it would otherwise read as a control parameter (`"order"`). */
function filterKey(path: string[], field: FieldRef): string {
  let key = pathPrefix(path) + compileField(field);
  const last = key.split('.').pop()!;
  if ((path.length === 0 && RESERVED.has(key)) || RESERVED_EMBEDDABLE.has(last)) {
    key = pathPrefix(path) + quote(field.name) + compileJsonPath(field.jsonPath, false);
  }
  return key;
}

/** One `where` entry as a `[key, value]` pair (not yet percent-encoded). */
export function compileWhere(w: WhereClause): [string, string] {
  const c = w.condition;
  if (c.kind === 'filter') return [filterKey(w.path, c.field), compileOpExpr(c, (v) => v)];
  return [`${pathPrefix(w.path)}${c.negated ? 'not.' : ''}${c.kind}`, `(${c.conditions.map(compileCondition).join(',')})`];
}

function compileSelectItem(item: SelectItem): string {
  if (item.type === 'star') return '*';
  if (item.type === 'field') {
    const alias = item.alias === undefined ? '' : `${compileName(item.alias)}:`;
    return alias + compileField(item.field, true) + (item.cast === undefined ? '' : `::${item.cast}`);
  }
  if (item.type === 'aggregate') {
    const alias = item.alias === undefined ? '' : `${compileName(item.alias)}:`;
    const target = item.field === undefined ? '' : `${compileField(item.field, true)}${item.fieldCast === undefined ? '' : `::${item.fieldCast}`}.`;
    return `${alias}${target}${item.fn}()${item.cast === undefined ? '' : `::${item.cast}`}`;
  }
  let s = item.spread ? '...' : item.alias === undefined ? '' : `${compileName(item.alias)}:`;
  s += compileName(item.relation);
  if (item.hint !== undefined) s += `!${/^(left|inner)/.test(item.hint) ? quote(item.hint) : compileName(item.hint)}`;
  if (item.join !== undefined) s += `!${item.join}`;
  return `${s}(${compileSelect(item.select)})`;
}

/**
 * A `select` value.
 * @example compileSelect([{type:'star'}, {type:'embed', relation:'labels', spread:false, select:[]}]) // '*,labels()'
 */
export function compileSelect(items: SelectItem[]): string {
  return items.map(compileSelectItem).join(',');
}

/**
 * An `order` value.
 * @example compileOrder([{field:{name:'id',jsonPath:[]}, direction:'desc', nulls:'last'}]) // 'id.desc.nullslast'
 */
export function compileOrder(terms: OrderTerm[]): string {
  return terms.map((t) => {
    let s = t.relation === undefined ? compileField(t.field) : `${compileName(t.relation)}(${compileField(t.field, true)})`;
    if (t.direction !== undefined) s += `.${t.direction}`;
    if (t.nulls !== undefined) s += `.nulls${t.nulls}`;
    return s;
  }).join(',');
}

/** A `columns`/`on_conflict` value. */
export function compileColumns(names: string[]): string {
  return names.map(compileName).join(',');
}

/** The model as `[key, value]` pairs, in the order compileQuery writes them (not percent-encoded). */
export function compilePairs(q: Query): [string, string][] {
  const pairs: [string, string][] = [];
  if (q.select !== undefined && q.select.length > 0) pairs.push(['select', compileSelect(q.select)]);
  for (const w of q.where) pairs.push(compileWhere(w));
  for (const o of q.order) pairs.push([`${pathPrefix(o.path)}order`, compileOrder(o.terms)]);
  for (const p of q.page) {
    if (p.limit !== undefined) pairs.push([`${pathPrefix(p.path)}limit`, String(p.limit)]);
    if (p.offset !== undefined) pairs.push([`${pathPrefix(p.path)}offset`, String(p.offset)]);
  }
  if (q.columns !== undefined) pairs.push(['columns', compileColumns(q.columns)]);
  if (q.onConflict !== undefined) pairs.push(['on_conflict', compileColumns(q.onConflict)]);
  return pairs;
}

/**
 * The model as a percent-encoded query string without the leading `?`.
 * @example compileQuery({ where: [], order: [], page: [{ path: [], limit: 5 }] }) // 'limit=5'
 */
export function compileQuery(q: Query): string {
  return compilePairs(q).map(([k, v]) => `${encodeComponent(k)}=${encodeComponent(v)}`).join('&');
}
