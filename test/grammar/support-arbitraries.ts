/** fast-check generators of representable grammar models (shared by the property tests). */
import fc from 'fast-check';
import { OPERATORS, IS_VALUES } from '../../src/grammar/operators.js';
import type {
  Condition, FieldRef, Filter, FilterOp, JsonPathStep, LogicTree, OrderClause, OrderTerm, PageClause, Query, SelectItem, WhereClause,
} from '../../src/grammar/types.js';

/** Characters that stress quoting and percent-encoding. */
const TRICKY = [',', '.', ':', '(', ')', '"', "'", '\\', '*', '+', '%', '&', ';', '=', '#', '?', '/', ' ', '-', '>', '{', '}', '!', '\t', 'é', 'ß', 'Ж', '日', '🎵'];
const PLAIN = ['a', 'b', 'c', 'x', 'y', 'z', '0', '1', '9', '_'];

const charOf = (chars: string[]) => fc.constantFrom(...chars);
const stringOf = (chars: string[], maxLength: number, minLength = 0) =>
  fc.array(charOf(chars), { minLength, maxLength }).map((cs) => cs.join(''));

/** Values: anything from the tricky alphabet (plus plain letters so both halves mix). */
export const valueArb = stringOf([...PLAIN, ...TRICKY], 12);

// Names that are never valid as an embed (`count`) or in a logic path (`not`) are left out;
// reserved words are in, to exercise the quoting of `"order"`, `"select"`, …
const RESERVED_WORDS = ['order', 'limit', 'offset', 'and', 'or', 'select', 'columns', 'on_conflict', 'left', 'inner'];
const bareNameArb = fc.tuple(charOf(['a', 'b', 'r', 'l', 'é', '_', '$']), stringOf([...PLAIN, 'é', '$', '_'], 6))
  .map(([a, b]) => a + b);
const spacedNameArb = fc.tuple(bareNameArb, fc.constantFrom(' ', '-', '  '), bareNameArb).map(([a, s, b]) => a + s + b);
const weirdNameArb = stringOf([...PLAIN, ...TRICKY], 8, 1);
export const nameArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 5, arbitrary: bareNameArb },
  { weight: 1, arbitrary: spacedNameArb },
  { weight: 1, arbitrary: fc.constantFrom(...RESERVED_WORDS) },
  { weight: 2, arbitrary: weirdNameArb },
).filter((n) => n !== 'not' && n !== 'count');

const jsonKeyArb: fc.Arbitrary<string> = fc.oneof(
  bareNameArb,
  fc.integer({ min: -20, max: 200 }).map(String),
  stringOf([...PLAIN, ...TRICKY], 6),
);
const jsonPathArb: fc.Arbitrary<JsonPathStep[]> = fc.array(
  fc.record({ arrow: fc.constantFrom<'->' | '->>'>('->', '->>'), key: jsonKeyArb }),
  { maxLength: 3 },
);
export const fieldArb: fc.Arbitrary<FieldRef> = fc.record({
  name: nameArb,
  jsonPath: fc.oneof({ weight: 3, arbitrary: fc.constant<JsonPathStep[]>([]) }, { weight: 2, arbitrary: jsonPathArb }),
});

const listArb = fc.array(valueArb, { maxLength: 4 }).filter((xs) => !(xs.length === 1 && xs[0] === ''));

export const filterArb: fc.Arbitrary<Filter> = fc.constantFrom(...OPERATORS).chain((info) => {
  const op: FilterOp = info.op;
  const value: fc.Arbitrary<string | string[]> =
    info.value === 'list' ? listArb : info.value === 'is' ? fc.constantFrom(...IS_VALUES) : valueArb;
  return fc.record({
    field: fieldArb,
    negated: fc.boolean(),
    value,
    modifier: info.allowsModifier ? fc.option(fc.constantFrom<'any' | 'all'>('any', 'all'), { nil: undefined }) : fc.constant(undefined),
    language: info.value === 'fts' ? fc.option(fc.constantFrom('english', 'simple', 'french'), { nil: undefined }) : fc.constant(undefined),
  }).map(({ field, negated, value: v, modifier, language }) => {
    const f: Filter = { kind: 'filter', field, negated, op, value: v };
    if (modifier !== undefined) f.modifier = modifier;
    if (language !== undefined) f.language = language;
    return f;
  });
});

export const conditionArb: fc.Arbitrary<Condition> = fc.letrec<{ cond: Condition; tree: LogicTree }>((tie) => ({
  cond: fc.oneof({ depthSize: 'small', withCrossShrink: true }, filterArb, tie('tree')),
  tree: fc.record({
    kind: fc.constantFrom<'and' | 'or'>('and', 'or'),
    negated: fc.boolean(),
    conditions: fc.array(tie('cond'), { minLength: 1, maxLength: 3 }),
  }),
})).cond;

const pathArb = fc.array(nameArb, { maxLength: 2 });
export const whereArb: fc.Arbitrary<WhereClause> = fc.record({ path: pathArb, condition: conditionArb });

export const selectArb: fc.Arbitrary<SelectItem[]> = fc.letrec<{ items: SelectItem[]; item: SelectItem }>((tie) => ({
  items: fc.array(tie('item'), { maxLength: 4 }),
  item: fc.oneof(
    { depthSize: 'small' },
    fc.constant<SelectItem>({ type: 'star' }),
    fc.record({
      field: fieldArb,
      alias: fc.option(nameArb, { nil: undefined }),
      cast: fc.option(fc.constantFrom('text', 'int', 'double precision', 'jsonb', 'numeric'), { nil: undefined }),
    }).map(({ field, alias, cast }): SelectItem => {
      const s: SelectItem = { type: 'field', field };
      if (alias !== undefined) s.alias = alias;
      if (cast !== undefined) s.cast = cast;
      return s;
    }),
    fc.record({
      relation: nameArb,
      alias: fc.option(nameArb, { nil: undefined }),
      hint: fc.option(fc.oneof(nameArb, fc.constantFrom('left_label', 'inner_fk', 'releases_label_id_fkey')), { nil: undefined }),
      join: fc.option(fc.constantFrom<'inner' | 'left'>('inner', 'left'), { nil: undefined }),
      spread: fc.boolean(),
      select: tie('items'),
    }).map(({ relation, alias, hint, join, spread, select }): SelectItem => {
      const e: SelectItem = { type: 'embed', relation, spread, select };
      if (alias !== undefined && !spread) e.alias = alias;
      if (hint !== undefined) e.hint = hint;
      if (join !== undefined) e.join = join;
      return e;
    }),
  ),
})).items;

const orderTermArb: fc.Arbitrary<OrderTerm> = fc.record({
  relation: fc.option(nameArb, { nil: undefined }),
  field: fieldArb,
  direction: fc.option(fc.constantFrom<'asc' | 'desc'>('asc', 'desc'), { nil: undefined }),
  nulls: fc.option(fc.constantFrom<'first' | 'last'>('first', 'last'), { nil: undefined }),
}).map(({ relation, field, direction, nulls }) => {
  const t: OrderTerm = { field };
  if (relation !== undefined) t.relation = relation;
  if (direction !== undefined) t.direction = direction;
  if (nulls !== undefined) t.nulls = nulls;
  return t;
});
export const orderArb: fc.Arbitrary<OrderClause> = fc.record({ path: pathArb, terms: fc.array(orderTermArb, { minLength: 1, maxLength: 3 }) });

const pageArb: fc.Arbitrary<PageClause[]> = fc.uniqueArray(
  fc.record({
    path: pathArb,
    limit: fc.option(fc.integer({ min: -5, max: 10_000 }), { nil: undefined }),
    offset: fc.option(fc.integer({ min: -5, max: 10_000 }), { nil: undefined }),
  }),
  { maxLength: 3, selector: (p) => JSON.stringify(p.path) },
).map((ps) => ps.flatMap((p): PageClause[] => {
  if (p.limit === undefined && p.offset === undefined) return [];
  const c: PageClause = { path: p.path };
  if (p.limit !== undefined) c.limit = p.limit;
  if (p.offset !== undefined) c.offset = p.offset;
  return [c];
}));

const columnsArb = fc.array(nameArb, { minLength: 1, maxLength: 3 });

export const queryArb: fc.Arbitrary<Query> = fc.record({
  select: fc.option(selectArb.filter((s) => s.length > 0), { nil: undefined }),
  where: fc.array(whereArb, { maxLength: 4 }),
  order: fc.array(orderArb, { maxLength: 2 }),
  page: pageArb,
  columns: fc.option(columnsArb, { nil: undefined }),
  onConflict: fc.option(columnsArb, { nil: undefined }),
}).map(({ select, where, order, page, columns, onConflict }) => {
  const q: Query = { where, order, page };
  if (select !== undefined) q.select = select;
  if (columns !== undefined) q.columns = columns;
  if (onConflict !== undefined) q.onConflict = onConflict;
  return q;
});
