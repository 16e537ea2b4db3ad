/**
 * Every PostgREST 12.2.3 filter operator's name: the one list of them (types.ts re-exports it).
 */
export type FilterOp =
  | 'eq' | 'neq' | 'gt' | 'gte' | 'lt' | 'lte'
  | 'like' | 'ilike' | 'match' | 'imatch'
  | 'in' | 'is' | 'isdistinct'
  | 'fts' | 'plfts' | 'phfts' | 'wfts'
  | 'cs' | 'cd' | 'ov' | 'sl' | 'sr' | 'nxr' | 'nxl' | 'adj';

/** How an operator's value is written. */
export type OperatorValueKind = 'single' | 'list' | 'is' | 'fts';

/**
 * What kind of value an operator compares: `compare` orders or equates a value of the field's own
 * type; `text` matches text; `contain` and `range` need json/array/range fields; `list`, `is` and
 * `fts` have their own value forms. The CLI checks a filter's field type by it.
 */
export type OperatorClass = 'compare' | 'text' | 'contain' | 'range' | 'list' | 'is' | 'fts';

export interface OperatorInfo {
  op: FilterOp;
  /** The SQL PostgREST emits: the binary operator, or for `fts` operators the tsquery function. */
  sql: string;
  class: OperatorClass;
  /** Whether `*` in the value is a wildcard (sent to SQL as `%`). */
  stars?: true;
  /** The CLI's short form (`field OP value`), when it has one; `negated` for `!~`. */
  short?: readonly { token: string; negated: boolean }[];
  /** Whether `(any)`/`(all)` may follow the operator. */
  allowsModifier: boolean;
  /** How the value is written (`in` takes a list, `is` a keyword, fts ops an optional language). */
  value: OperatorValueKind;
  summary: string;
  example: string;
}

/** Every PostgREST 12.2.3 filter operator; drives parse, compile and help. */
export const OPERATORS: readonly OperatorInfo[] = [
  { op: 'eq', sql: '=', class: 'compare', short: [{ token: '=', negated: false }], allowsModifier: true, value: 'single', summary: 'equals', example: 'release_title=eq.Kind of Blue' },
  { op: 'neq', sql: '<>', class: 'compare', short: [{ token: '!=', negated: false }], allowsModifier: false, value: 'single', summary: 'not equal', example: 'label_id=neq.<uuid>' },
  { op: 'gt', sql: '>', class: 'compare', short: [{ token: '>', negated: false }], allowsModifier: true, value: 'single', summary: 'greater than', example: 'release_date=gt.1990-01-01' },
  { op: 'gte', sql: '>=', class: 'compare', short: [{ token: '>=', negated: false }], allowsModifier: true, value: 'single', summary: 'greater than or equal', example: 'release_date=gte.2000-01-01' },
  { op: 'lt', sql: '<', class: 'compare', short: [{ token: '<', negated: false }], allowsModifier: true, value: 'single', summary: 'less than', example: 'release_date=lt.2010-01-01' },
  { op: 'lte', sql: '<=', class: 'compare', short: [{ token: '<=', negated: false }], allowsModifier: true, value: 'single', summary: 'less than or equal', example: 'release_date=lte.2010-12-31' },
  { op: 'like', sql: 'LIKE', class: 'text', stars: true, allowsModifier: true, value: 'single', summary: 'pattern match, * is a wildcard', example: 'release_title=like.*Blue*' },
  { op: 'ilike', sql: 'ILIKE', class: 'text', stars: true, short: [{ token: '~', negated: false }, { token: '!~', negated: true }], allowsModifier: true, value: 'single', summary: 'case-insensitive pattern match, * is a wildcard', example: 'stage_name=ilike.*dj*' },
  { op: 'match', sql: '~', class: 'text', allowsModifier: true, value: 'single', summary: 'POSIX regular expression', example: 'release_title=match.^Kind' },
  { op: 'imatch', sql: '~*', class: 'text', allowsModifier: true, value: 'single', summary: 'case-insensitive POSIX regular expression', example: 'release_title=imatch.^kind' },
  { op: 'in', sql: '= ANY', class: 'list', allowsModifier: false, value: 'list', summary: 'one of a list', example: 'genre=in.(House,Techno)' },
  { op: 'is', sql: 'IS', class: 'is', allowsModifier: false, value: 'is', summary: 'is null, true, false or unknown', example: 'label_id=is.null' },
  { op: 'isdistinct', sql: 'IS DISTINCT FROM', class: 'compare', allowsModifier: false, value: 'single', summary: 'not equal, treating null as a value', example: 'label_id=isdistinct.<uuid>' },
  { op: 'fts', sql: 'to_tsquery', class: 'fts', allowsModifier: false, value: 'fts', summary: 'full-text search (to_tsquery)', example: 'release_title=fts(english).blue' },
  { op: 'plfts', sql: 'plainto_tsquery', class: 'fts', allowsModifier: false, value: 'fts', summary: 'full-text search (plainto_tsquery)', example: 'release_title=plfts.blue note' },
  { op: 'phfts', sql: 'phraseto_tsquery', class: 'fts', allowsModifier: false, value: 'fts', summary: 'full-text phrase search (phraseto_tsquery)', example: 'release_title=phfts(english).kind of blue' },
  { op: 'wfts', sql: 'websearch_to_tsquery', class: 'fts', allowsModifier: false, value: 'fts', summary: 'full-text web search (websearch_to_tsquery)', example: 'release_title=wfts.blue or green' },
  { op: 'cs', sql: '@>', class: 'contain', allowsModifier: false, value: 'single', summary: 'contains (arrays, ranges, jsonb)', example: 'tags=cs.{jazz,live}' },
  { op: 'cd', sql: '<@', class: 'contain', allowsModifier: false, value: 'single', summary: 'is contained in (arrays, ranges, jsonb)', example: 'tags=cd.{jazz,live,bop}' },
  { op: 'ov', sql: '&&', class: 'contain', allowsModifier: false, value: 'single', summary: 'overlaps (arrays, ranges)', example: 'tags=ov.{jazz,soul}' },
  { op: 'sl', sql: '<<', class: 'range', allowsModifier: false, value: 'single', summary: 'strictly left of (ranges)', example: 'period=sl.(1,10)' },
  { op: 'sr', sql: '>>', class: 'range', allowsModifier: false, value: 'single', summary: 'strictly right of (ranges)', example: 'period=sr.(1,10)' },
  { op: 'nxr', sql: '&<', class: 'range', allowsModifier: false, value: 'single', summary: 'does not extend to the right of (ranges)', example: 'period=nxr.(1,10)' },
  { op: 'nxl', sql: '&>', class: 'range', allowsModifier: false, value: 'single', summary: 'does not extend to the left of (ranges)', example: 'period=nxl.(1,10)' },
  { op: 'adj', sql: '-|-', class: 'range', allowsModifier: false, value: 'single', summary: 'is adjacent to (ranges)', example: 'period=adj.(3,10]' },
];

const BY_OP = new Map(OPERATORS.map((o) => [o.op, o]));

/** The table row of an operator. */
export function operatorInfo(op: FilterOp): OperatorInfo {
  const info = BY_OP.get(op);
  if (info === undefined) throw new Error(`unknown operator ${op}`);
  return info;
}

/** Whether a string names a filter operator. */
export function isFilterOp(s: string): s is FilterOp {
  return BY_OP.has(s as FilterOp);
}

/** The operators of a class, e.g. every `text` operator. */
export function operatorsOf(...classes: OperatorClass[]): FilterOp[] {
  return OPERATORS.filter((o) => classes.includes(o.class)).map((o) => o.op);
}

/**
 * The operators written `op.value` with one value and no modifier, and those that take
 * `(any)`/`(all)`: the parser's two keyword lists, longest first so `gte` is tried before `gt`.
 * `isdistinct` has its own rule (it starts like `is`).
 */
export const SIMPLE_OPERATORS = byLength(OPERATORS.filter((o) => o.value === 'single' && !o.allowsModifier && o.op !== 'isdistinct'));
export const QUANTIFIABLE_OPERATORS = byLength(OPERATORS.filter((o) => o.value === 'single' && o.allowsModifier));
export const FTS_OPERATORS = byLength(OPERATORS.filter((o) => o.value === 'fts'));

function byLength(ops: OperatorInfo[]): FilterOp[] {
  return ops.map((o) => o.op).sort((a, b) => b.length - a.length);
}

/** The CLI's short forms (`!=`, `<=`, `~`, …), two-character tokens first. */
export const SHORT_OPERATORS: readonly { token: string; op: FilterOp; negated: boolean }[] = OPERATORS.flatMap((o) =>
  (o.short ?? []).map((s) => ({ token: s.token, op: o.op, negated: s.negated })),
).sort((a, b) => b.token.length - a.token.length);

/** The values `is` accepts (lower-cased). */
export const IS_VALUES = ['null', 'true', 'false', 'unknown'] as const;
