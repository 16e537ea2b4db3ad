/**
 * Query string → typed model, following PostgREST 12.2.3's Parsec grammar (ApiRequest/QueryParams)
 * combinator by combinator, so that accepted inputs, quirks (trailing text after a complete
 * `in.(…)` list or logic tree is ignored, as in PostgREST) and error texts match.
 */
import { aggregatesNotAllowed, GrammarError } from './errors.js';
import {
  alt, anyChar, attempt, between, bind, char, digit, eof, hsStrip, isLetter, label, lazy, left, lookAhead, many, many1, map,
  noneOf, notFollowedBy, option, optionMaybe, pure, right, run, sepBy, sepBy1, seq, string, takeWhile, zero,
  type Parser,
} from './parsec.js';
import { splitQuery, type RawParam } from './query-string.js';
import { FTS_OPERATORS, QUANTIFIABLE_OPERATORS, SIMPLE_OPERATORS } from './operators.js';
import type { AggregateFn, Condition, FieldRef, Filter, FilterOp, JsonPathStep, OrderClause, OrderTerm, PageClause, Query, SelectAggregate, SelectEmbed, SelectItem, WhereClause } from './types.js';

// ---------------------------------------------------------------------------------------------
// Lexical pieces

const ws = takeWhile((c) => c === ' ' || c === '\t');
const lexeme = <T>(p: Parser<T>): Parser<T> => left(right(ws, p), ws);
const joinChars = (cs: string[]): string => cs.join('');

const pDelimiter = label(char('.'), 'delimiter (.)');

/** `"…"` with `\x` → `x`: `"a\"b"` → `a"b`. */
const pQuotedValue: Parser<string> = map(
  between(char('"'), char('"'), many(alt(noneOf('\\"'), right(char('\\'), anyChar)))),
  joinChars,
);

const isIdentifierChar = (c: string): boolean => c === '_' || c === ' ' || c === '$' || (c >= '0' && c <= '9') || isLetter(c);
/** `many1 (letter <|> digit <|> oneOf "_ $")`, stripped: ` release title ` → `release title`. */
const pIdentifier: Parser<string> = map(takeWhile(isIdentifierChar, 1, ['letter', 'digit']), hsStrip);

/** A `-` that does not start an arrow `->`. */
const dash = map(attempt(left(char('-'), notFollowedBy(char('>')))), () => '-');
const sepByDash = (p: Parser<string>): Parser<string> => map(sepBy1(p, dash), (parts) => parts.join('-'));

/** Column/embed/alias name: `release_title`, `"information.cpe"`, `Order Items`, `a-b`. */
const pFieldName: Parser<string> = label(alt(pQuotedValue, sepByDash(pIdentifier)), 'field name (* or [a..z0..9_$])');

const pJsonKeyIdentifier: Parser<string> = map(takeWhile((c) => !'(-:.,>)'.includes(c), 1), hsStrip);
/**
 * A key. A quoted one of digits (`->"2020"`) is marked `text`: PostgREST reads it as a key, where
 * `->2020` is an array index. (A quoted negative number stays an index: it is how compile writes
 * one before a `)`, where PostgREST's grammar has no bare index.)
 */
const pJsonKeyName: Parser<{ key: string; text?: true }> = label(
  alt(
    map(pQuotedValue, (key) => (/^\d+$/.test(key) ? { key, text: true as const } : { key })),
    map(sepByDash(pJsonKeyIdentifier), (key) => ({ key })),
  ),
  'any non reserved character different from: .,>()',
);

const pJsonArrow: Parser<'->' | '->>'> = alt(
  attempt(map(string('->>'), () => '->>' as const)),
  attempt(map(string('->'), () => '->' as const)),
);
const ahead = (s: string): Parser<null> => attempt(map(lookAhead(string(s)), () => null));
const pJsonIdxEnd: Parser<null> = alt(ahead('->'), ahead('::'), ahead('.'), ahead(','), attempt(eof));
/** An array index: `0`, `-1` (must end the segment). */
const pJsonIdx: Parser<string> = left(
  map(seq(option('+', char('-')), many1(digit)), ([sign, ds]) => (sign === '-' ? '-' : '') + joinChars(ds)),
  pJsonIdxEnd,
);
const pJsonOperand: Parser<{ key: string; text?: true }> = alt(attempt(map(pJsonIdx, (key) => ({ key }))), attempt(pJsonKeyName));
/** `->a->>b`, `->0`, `->-1`, `->"2020"` */
const pJsonPath: Parser<JsonPathStep[]> = many(map(seq(pJsonArrow, pJsonOperand), ([arrow, operand]) => ({ arrow, ...operand })));

/** `name->json->>path` with surrounding blanks. */
const pField: Parser<FieldRef> = lexeme(map(seq(pFieldName, option<JsonPathStep[]>([], pJsonPath)), ([name, jsonPath]) => ({ name, jsonPath })));

// ---------------------------------------------------------------------------------------------
// Filters: `[not.]op[(any|all)|(lang)].value`

interface OpExpr {
  negated: boolean;
  op: FilterOp;
  modifier?: 'any' | 'all';
  language?: string;
  value: string | string[];
}

const notCommaParen = (c: string): boolean => c !== ',' && c !== ')';
const pListElement: Parser<string> = alt(
  attempt(left(pQuotedValue, notFollowedBy(noneOf(',)')))),
  takeWhile(notCommaParen),
);
/** `(a,"b,c")`; PostgREST reads `()` as `[""]` and treats that as the empty set, so the model says `[]`. */
const pListVal: Parser<string[]> = map(
  right(lexeme(char('(')), left(sepBy1(pListElement, char(',')), lexeme(char(')')))),
  (xs) => (xs.length === 1 && xs[0] === '' ? [] : xs),
);

const ciString = (s: string): Parser<string> =>
  Array.from(s).reduce<Parser<string>>(
    (acc, c) => bind(acc, (prefix) => map(alt(char(c), char(c.toUpperCase())), (x) => prefix + x)),
    pure(''),
  );
const pTriVal: Parser<string> = label(
  alt(
    attempt(map(ciString('null'), () => 'null')),
    attempt(map(ciString('unknown'), () => 'unknown')),
    attempt(map(ciString('true'), () => 'true')),
    attempt(map(ciString('false'), () => 'false')),
  ),
  'null or trilean value (unknown, true, false)',
);

const keyword = <T extends string>(...words: T[]): Parser<T> => alt(...words.map((w) => attempt(map(string(w), () => w))));
const simpleOperator = label(keyword(...SIMPLE_OPERATORS), 'unknown single value operator');
const quantOperator = label(keyword(...QUANTIFIABLE_OPERATORS), 'unknown single value operator');

function pOpExpr(pSVal: Parser<string>): Parser<OpExpr> {
  const pNotOp = alt(attempt(map(seq(string('not'), pDelimiter), () => true)), pure(false));
  type Op = Omit<OpExpr, 'negated'>;
  const pIn: Parser<Op> = map(right(attempt(seq(string('in'), pDelimiter)), pListVal), (value) => ({ op: 'in', value }));
  const pIs: Parser<Op> = map(right(attempt(seq(string('is'), pDelimiter)), pTriVal), (value) => ({ op: 'is', value }));
  const pIsDist: Parser<Op> = map(right(attempt(seq(string('isdistinct'), pDelimiter)), pSVal), (value) => ({ op: 'isdistinct', value }));
  const pSimpleOp: Parser<Op> = bind(simpleOperator, (op) => right(pDelimiter, map(pSVal, (value) => ({ op, value }))));
  const pQuant = optionMaybe(attempt(between(char('('), char(')'), alt(attempt(map(string('any'), () => 'any' as const)), map(string('all'), () => 'all' as const)))));
  const pQuantOp: Parser<Op> = bind(quantOperator, (op) => bind(pQuant, (modifier) =>
    right(pDelimiter, map(pSVal, (value) => (modifier === undefined ? { op, value } : { op, modifier, value })))));
  const pFts: Parser<Op> = bind(keyword(...FTS_OPERATORS), (op) =>
    bind(optionMaybe(attempt(between(char('('), char(')'), pIdentifier))), (language) =>
      right(pDelimiter, map(pSVal, (value) => (language === undefined ? { op, value } : { op, language, value })))));
  const pOperation = label(alt(pIn, pIs, pIsDist, attempt(pFts), attempt(pSimpleOp), attempt(pQuantOp)), 'operator (eq, gt, ...)');
  return bind(pNotOp, (negated) => map(pOperation, (o) => ({ negated, ...o })));
}

const pSingleVal: Parser<string> = takeWhile(() => true);
const pFilterOpExpr = pOpExpr(pSingleVal);

function toFilter(field: FieldRef, o: OpExpr): Filter {
  const f: Filter = { kind: 'filter', field, negated: o.negated, op: o.op, value: o.value };
  if (o.modifier !== undefined) f.modifier = o.modifier;
  if (o.language !== undefined) f.language = o.language;
  return f;
}

/** `labels.countries.name->x` → path `['labels','countries']`, field `name->x`. */
const pTreePath: Parser<{ path: string[]; field: FieldRef }> = bind(sepBy1(pFieldName, pDelimiter), (names) =>
  map(option<JsonPathStep[]>([], pJsonPath), (jsonPath) => ({ path: names.slice(0, -1), field: { name: names[names.length - 1], jsonPath } })));

// ---------------------------------------------------------------------------------------------
// Logic trees

const pPgArray: Parser<string> = map(seq(string('{'), takeWhile((c) => c !== '{' && c !== '}'), string('}')), ([a, b, c]) => a + b + c);
/** A value inside a tree: `"quoted"`, `{a,b}`, or raw text up to `,`/`)`. */
const pLogicSingleVal: Parser<string> = alt(
  attempt(left(pQuotedValue, notFollowedBy(noneOf(',)')))),
  attempt(pPgArray),
  takeWhile(notCommaParen),
);
const pNot: Parser<boolean> = label(alt(attempt(map(seq(string('not'), pDelimiter), () => true)), pure(false)), 'negation operator (not)');
const pLogicOp: Parser<'and' | 'or'> = label(alt(attempt(map(string('and'), () => 'and' as const)), map(string('or'), () => 'or' as const)), 'logic operator (and, or)');
const pLogicOpExpr = pOpExpr(pLogicSingleVal);
const pLogicFilter: Parser<Condition> = bind(left(pField, pDelimiter), (field) => map(pLogicOpExpr, (o) => toFilter(field, o)));
const pLogicTree: Parser<Condition> = lazy(() => alt(
  attempt(pLogicFilter),
  bind(pNot, (negated) => bind(pLogicOp, (kind) => map(
    right(lexeme(char('(')), left(sepBy1(pLogicTree, lexeme(char(','))), lexeme(char(')')))),
    (conditions): Condition => ({ kind, negated, conditions }),
  ))),
));
/** `labels.not.or` → path `['labels']`, op `not.or`. */
const pLogicPath: Parser<{ path: string[]; op: string }> = map(sepBy1(pFieldName, pDelimiter), (names) => {
  const op = names[names.length - 1];
  return { path: names.slice(0, -1).filter((n) => n !== 'not'), op: names.includes('not') ? `not.${op}` : op };
});

// ---------------------------------------------------------------------------------------------
// select

type RawSelectItem = SelectItem;

const aliasSeparator = left(char(':'), notFollowedBy(char(':')));
const pAlias = optionMaybe(attempt(left(pFieldName, aliasSeparator)));

type EmbedParam = { hint: string } | { join: 'inner' | 'left' };
const pEmbedParam: Parser<EmbedParam> = right(char('!'), alt<EmbedParam>(
  attempt(map(string('left'), () => ({ join: 'left' as const }))),
  attempt(map(string('inner'), () => ({ join: 'inner' as const }))),
  attempt(map(pFieldName, (hint) => ({ hint }))),
));
const pEmbedParams = map(seq(optionMaybe(pEmbedParam), optionMaybe(pEmbedParam)), (ps) => {
  const out: { hint?: string; join?: 'inner' | 'left' } = {};
  for (const p of ps) {
    if (p === undefined) continue;
    if ('hint' in p) out.hint ??= p.hint;
    else out.join ??= p.join;
  }
  return out;
});
const pOpenAhead = attempt(lookAhead(string('(')));

type EmbedHead = Omit<SelectEmbed, 'select'>;
function embedHead(relation: string, alias: string | undefined, spread: boolean, params: { hint?: string; join?: 'inner' | 'left' }): EmbedHead {
  const e: EmbedHead = { type: 'embed', relation, spread };
  if (alias !== undefined) e.alias = alias;
  if (params.hint !== undefined) e.hint = params.hint;
  if (params.join !== undefined) e.join = params.join;
  return e;
}
const pRelationSelect: Parser<EmbedHead> = lexeme(bind(pAlias, (alias) => bind(pFieldName, (name) =>
  name === 'count' ? zero<EmbedHead>() : bind(pEmbedParams, (params) => map(pOpenAhead, () => embedHead(name, alias, false, params))))));
const pSpreadRelationSelect: Parser<EmbedHead> = lexeme(right(string('...'), bind(pFieldName, (name) =>
  bind(pEmbedParams, (params) => map(pOpenAhead, () => embedHead(name, undefined, true, params))))));

const pSelectEnd: Parser<null> = alt(ahead(')'), ahead(','), attempt(eof));
const pCast = right(string('::'), pIdentifier);
const pAggregation = alt(string('sum'), string('avg'), string('count'), attempt(string('max')), attempt(string('min')));
const pFieldSelect: Parser<RawSelectItem> = lexeme(alt<RawSelectItem>(
  attempt(left(map(string('*'), () => ({ type: 'star' as const })), pSelectEnd)),
  attempt(bind(pAlias, (alias) => right(string('count()'), bind(optionMaybe(pCast), (cast) => map(pSelectEnd, () => aggregateItem('count', undefined, alias, undefined, cast)))))),
  bind(pAlias, (alias) => bind(pField, (field) => bind(optionMaybe(pCast), (cast) =>
    bind(optionMaybe(attempt(left(right(char('.'), pAggregation), string('()')))), (agg) =>
      bind(optionMaybe(pCast), (after) => map(pSelectEnd, (): RawSelectItem => {
        if (agg !== undefined) return aggregateItem(agg as AggregateFn, field, alias, cast, after);
        const item: SelectItem = { type: 'field', field };
        if (alias !== undefined) item.alias = alias;
        if (cast !== undefined) item.cast = cast;
        return item;
      })))))),
));

type RawEmbed = EmbedHead & { select: RawSelectItem[] };
const pFieldForest: Parser<RawSelectItem[]> = lazy(() => sepBy(pFieldTree, lexeme(char(','))));
const pEmbedBody = between(char('('), char(')'), pFieldForest);
const pFieldTree: Parser<RawSelectItem> = alt<RawSelectItem>(
  bind(attempt(pSpreadRelationSelect), (head) => map(pEmbedBody, (select) => ({ ...head, select }) as RawEmbed as SelectItem)),
  bind(attempt(pRelationSelect), (head) => map(pEmbedBody, (select) => ({ ...head, select }) as RawEmbed as SelectItem)),
  pFieldSelect,
);

function aggregateItem(fn: AggregateFn, field: FieldRef | undefined, alias: string | undefined, fieldCast: string | undefined, cast: string | undefined): SelectAggregate {
  const item: SelectAggregate = { type: 'aggregate', fn };
  if (field !== undefined) item.field = field;
  if (alias !== undefined) item.alias = alias;
  if (fieldCast !== undefined) item.fieldCast = fieldCast;
  if (cast !== undefined) item.cast = cast;
  return item;
}

/** The select items, and whether any of them (at any level) is an aggregate. */
function cleanSelect(items: RawSelectItem[]): { items: SelectItem[]; aggregates: boolean } {
  let aggregates = false;
  const walk = (xs: SelectItem[]): void => {
    for (const x of xs) {
      if (x.type === 'aggregate') aggregates = true;
      else if (x.type === 'embed') walk(x.select);
    }
  };
  walk(items);
  return { items, aggregates };
}

// ---------------------------------------------------------------------------------------------
// order

const pOrdDir = alt(
  attempt(right(pDelimiter, map(string('asc'), () => 'asc' as const))),
  attempt(right(pDelimiter, map(string('desc'), () => 'desc' as const))),
);
const pNulls = alt(
  attempt(right(pDelimiter, map(string('nullsfirst'), () => 'first' as const))),
  attempt(right(pDelimiter, map(string('nullslast'), () => 'last' as const))),
);
const pOrderEnd: Parser<null> = alt(attempt(map(lookAhead(char(',')), () => null)), attempt(eof));
const pNullsThenEnd = alt(left(optionMaybe(pNulls), pOrderEnd), map(pOrderEnd, () => undefined));

function orderTerm(relation: string | undefined, field: FieldRef, direction?: 'asc' | 'desc', nulls?: 'first' | 'last'): OrderTerm {
  const t: OrderTerm = { field };
  if (relation !== undefined) t.relation = relation;
  if (direction !== undefined) t.direction = direction;
  if (nulls !== undefined) t.nulls = nulls;
  return t;
}
const pOrderTerm: Parser<OrderTerm> = bind(pField, (field) => bind(optionMaybe(pOrdDir), (dir) =>
  map(pNullsThenEnd, (nulls) => orderTerm(undefined, field, dir, nulls))));
const pOrderRelationTerm: Parser<OrderTerm> = bind(pFieldName, (rel) => bind(between(char('('), char(')'), pField), (field) =>
  bind(optionMaybe(pOrdDir), (dir) => map(pNullsThenEnd, (nulls) => orderTerm(rel, field, dir, nulls)))));
const pOrder: Parser<OrderTerm[]> = sepBy1(lexeme(alt(attempt(pOrderRelationTerm), pOrderTerm)), char(','));

const pColumns: Parser<string[]> = sepBy1(pFieldName, lexeme(char(',')));

// ---------------------------------------------------------------------------------------------
// Entry points

/**
 * The deepest nesting of parentheses an and/or tree may have. PostgREST sets none, but a tree
 * hundreds deep overflows a recursive parser's stack, and PGlite's stack with the statement it
 * would build; a person's filter is a few levels deep. Over it, the request is one PGRST100 error.
 */
export const MAX_NESTING = 64;

/**
 * The deepest nesting a `select` may have (embeds, and an aggregate's `()` inside the deepest).
 * Each level of embedding can multiply the rows the database builds JSON for: on the sample
 * catalog, labels and releases alternating 12 deep take 1.6 s and 16 deep run out of memory.
 */
export const MAX_SELECT_NESTING = 10;

/** Throws PGRST100 when `text` nests parentheses (outside double-quoted strings) deeper than `limit`. */
function checkNesting(what: string, text: string, limit = MAX_NESTING): void {
  const shown = text;
  let depth = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (quoted) {
      if (c === 0x5c) i++;
      else if (c === 0x22) quoted = false;
    } else if (c === 0x22) quoted = true;
    else if (c === 0x28 && ++depth > limit) {
      const head = shown.length > 80 ? `${shown.slice(0, 80)}…` : shown;
      throw new GrammarError(`failed to parse ${what} (${head})`, `nested more than ${limit} levels deep at character ${i + 1}`);
    } else if (c === 0x29) depth--;
  }
}

function parseWith<T>(p: Parser<T>, what: string, text: string): T {
  checkNesting(what, text, what === 'select parameter' ? MAX_SELECT_NESTING : MAX_NESTING);
  const r = run(p, `failed to parse ${what} (${text})`, text);
  if (!r.ok) throw new GrammarError(r.message, r.details);
  return r.value;
}

/** Parse a `select` value, keeping aggregate markers (for the caller to decide when to complain). */
function parseSelectRaw(text: string): { items: SelectItem[]; aggregates: boolean } {
  return cleanSelect(parseWith(pFieldForest, 'select parameter', text));
}

/**
 * Parse a `select` value.
 * @example parseSelect('id,label:labels!inner(name)') // [{type:'field',…}, {type:'embed', relation:'labels', alias:'label', join:'inner', …}]
 */
export function parseSelect(text: string, opts: { aggregates?: boolean } = {}): SelectItem[] {
  const { items, aggregates } = parseSelectRaw(text);
  if (aggregates && !opts.aggregates) throw aggregatesNotAllowed();
  return items;
}

/**
 * Parse an `order` value.
 * @example parseOrder('labels(name).desc.nullslast,id') // [{relation:'labels', field:{name:'name',…}, direction:'desc', nulls:'last'}, {field:{name:'id',…}}]
 */
export function parseOrder(text: string): OrderTerm[] {
  return parseWith(pOrder, 'order', text);
}

/**
 * Parse a filter parameter.
 * @example parseFilter('labels.name', 'not.in.(a,"b,c")') // {path:['labels'], condition:{kind:'filter', op:'in', negated:true, value:['a','b,c'], …}}
 */
export function parseFilter(key: string, value: string): WhereClause {
  const { path, field } = parseWith(pTreePath, 'tree path', key);
  const o = parseWith(pFilterOpExpr, 'filter', value);
  return { path, condition: toFilter(field, o) };
}

/**
 * Parse an `and`/`or` parameter (key ends in `and`/`or`, possibly `not.`-prefixed and embed-prefixed).
 * @example parseLogicTree('not.or', '(id.eq.1,and(a.gt.2,a.lt.5))') // {path:[], condition:{kind:'or', negated:true, conditions:[…]}}
 */
export function parseLogicTree(key: string, value: string): WhereClause {
  const { path, op } = parseWith(pLogicPath, 'logic path', key);
  checkNesting('logic tree', value);
  const r = run(pLogicTree, `failed to parse logic tree (${value})`, op + value);
  if (!r.ok) throw new GrammarError(r.message, r.details);
  return { path, condition: r.value };
}

/**
 * Parse a `columns` value.
 * @example parseColumns('id,"release title"') // ['id', 'release title']
 */
export function parseColumns(text: string): string[] {
  return parseWith(pColumns, 'columns parameter', text);
}

/**
 * Parse an `on_conflict` value.
 * @example parseOnConflict('name,country_id') // ['name', 'country_id']
 */
export function parseOnConflict(text: string): string[] {
  return parseWith(pColumns, 'on_conflict parameter', text);
}

/**
 * A complete `[embed.]…column[json path]` (unlike filter keys, nothing may follow).
 * @example parseFieldPath('labels.name') // { path: ['labels'], field: { name: 'name', jsonPath: [] } }
 */
export function parseFieldPath(text: string): { path: string[]; field: FieldRef } {
  return parseWith(left(pTreePath, eof), 'field', text);
}

/** The embed path of a reserved key (`releases.limit` → `['releases']`). */
function keyPath(key: string): string[] {
  return parseWith(pTreePath, 'tree path', key).path;
}

/**
 * Haskell `readMaybe :: Integer`: optional surrounding blanks, optional `-`, decimal (or 0x/0o).
 * @example readInteger(' 10 ') // 10
 */
export function readInteger(text: string): number | undefined {
  const t = hsStrip(text);
  const m = /^(-?)(?:(\d+)|0[xX]([0-9a-fA-F]+)|0[oO]([0-7]+))$/.exec(t);
  if (m === null) return undefined;
  const n = m[2] !== undefined ? Number(m[2]) : m[3] !== undefined ? parseInt(m[3], 16) : parseInt(m[4], 8);
  return m[1] === '-' ? -n : n;
}

const RESERVED = new Set(['select', 'columns', 'on_conflict']);
const RESERVED_EMBEDDABLE = new Set(['order', 'limit', 'offset', 'and', 'or']);

/** The last dot-separated word of a key, which decides whether it is a control parameter. */
export function lastWord(key: string): string {
  const parts = key.split('.');
  return parts[parts.length - 1];
}

/** Whether a (decoded) parameter name is a control parameter rather than a filter. */
export function isReservedKey(key: string): boolean {
  return RESERVED.has(key) || RESERVED_EMBEDDABLE.has(lastWord(key));
}

/**
 * Parse a raw query string (without `?`; percent-decoding and `+` → space happen here).
 * Errors are thrown in PostgREST's order: order, logic trees, columns, select, filters, on_conflict.
 * @example parseQuery('select=id&release_date=gte.2000-01-01&order=id.desc&limit=10')
 */
export function parseQuery(search: string, opts: { aggregates?: boolean } = {}): Query {
  const params = splitQuery(search);
  const lookup = (name: string): string | undefined => {
    const p = params.find((x) => x.key === name);
    return p?.value ?? undefined;
  };
  const withValue = params
    .map((p, index) => ({ ...p, index }))
    .filter((p): p is RawParam & { value: string; index: number } => p.value !== null);
  const ending = (...words: string[]) => withValue.filter((p) => words.includes(lastWord(p.key)));

  const order: OrderClause[] = ending('order').map((p) => {
    const path = keyPath(p.key);
    return { path, terms: parseOrder(p.value) };
  });
  const where: { index: number; clause: WhereClause }[] = ending('and', 'or').map((p) => ({ index: p.index, clause: parseLogicTree(p.key, p.value) }));

  const columnsText = lookup('columns');
  const columns = columnsText === undefined ? undefined : parseColumns(columnsText);
  const selectText = lookup('select');
  const select = selectText === undefined ? undefined : parseSelectRaw(selectText);

  for (const p of withValue) {
    if (isReservedKey(p.key)) continue;
    where.push({ index: p.index, clause: parseFilter(p.key, p.value) });
  }
  const onConflictText = lookup('on_conflict');
  const onConflict = onConflictText === undefined ? undefined : parseOnConflict(onConflictText);

  const page = parsePages(ending('limit', 'offset'));
  if (select?.aggregates && !opts.aggregates) throw aggregatesNotAllowed();

  const q: Query = {
    where: where.sort((a, b) => a.index - b.index).map((w) => w.clause),
    order,
    page,
  };
  if (select !== undefined && select.items.length > 0) q.select = select.items;
  if (columns !== undefined) q.columns = columns;
  if (onConflict !== undefined) q.onConflict = onConflict;
  return q;
}

/** limit/offset per embed path: the last value of each wins; non-numeric values unset it. */
function parsePages(params: (RawParam & { value: string })[]): PageClause[] {
  const byPath = new Map<string, { path: string[]; limit?: number; offset?: number }>();
  for (const p of params) {
    const path = keyPath(p.key);
    const id = JSON.stringify(path);
    const entry = byPath.get(id) ?? { path };
    byPath.set(id, entry);
    const n = readInteger(p.value);
    if (lastWord(p.key) === 'limit') entry.limit = n;
    else entry.offset = n;
  }
  const out: PageClause[] = [];
  for (const e of byPath.values()) {
    if (e.limit === undefined && e.offset === undefined) continue;
    const c: PageClause = { path: e.path };
    if (e.limit !== undefined) c.limit = e.limit;
    if (e.offset !== undefined) c.offset = e.offset;
    out.push(c);
  }
  return out;
}
