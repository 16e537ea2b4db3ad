import type { FilterOp } from './types.js';

/** How an operator's value is written. */
export type OperatorValueKind = 'single' | 'list' | 'is' | 'fts';

export interface OperatorInfo {
  op: FilterOp;
  /** The SQL operator PostgREST emits. */
  sql: string;
  /** Whether `(any)`/`(all)` may follow the operator. */
  allowsModifier: boolean;
  /** How the value is written (`in` takes a list, `is` a keyword, fts ops an optional language). */
  value: OperatorValueKind;
  summary: string;
  example: string;
}

/** Every PostgREST 12.2.3 filter operator; drives parse, compile and help. */
export const OPERATORS: readonly OperatorInfo[] = [
  { op: 'eq', sql: '=', allowsModifier: true, value: 'single', summary: 'equals', example: 'release_title=eq.Kind of Blue' },
  { op: 'neq', sql: '<>', allowsModifier: false, value: 'single', summary: 'not equal', example: 'label_id=neq.<uuid>' },
  { op: 'gt', sql: '>', allowsModifier: true, value: 'single', summary: 'greater than', example: 'release_date=gt.1990-01-01' },
  { op: 'gte', sql: '>=', allowsModifier: true, value: 'single', summary: 'greater than or equal', example: 'release_date=gte.2000-01-01' },
  { op: 'lt', sql: '<', allowsModifier: true, value: 'single', summary: 'less than', example: 'release_date=lt.2010-01-01' },
  { op: 'lte', sql: '<=', allowsModifier: true, value: 'single', summary: 'less than or equal', example: 'release_date=lte.2010-12-31' },
  { op: 'like', sql: 'LIKE', allowsModifier: true, value: 'single', summary: 'pattern match, * is a wildcard', example: 'release_title=like.*Blue*' },
  { op: 'ilike', sql: 'ILIKE', allowsModifier: true, value: 'single', summary: 'case-insensitive pattern match, * is a wildcard', example: 'stage_name=ilike.*dj*' },
  { op: 'match', sql: '~', allowsModifier: true, value: 'single', summary: 'POSIX regular expression', example: 'release_title=match.^Kind' },
  { op: 'imatch', sql: '~*', allowsModifier: true, value: 'single', summary: 'case-insensitive POSIX regular expression', example: 'release_title=imatch.^kind' },
  { op: 'in', sql: '= ANY', allowsModifier: false, value: 'list', summary: 'one of a list', example: 'genre=in.(House,Techno)' },
  { op: 'is', sql: 'IS', allowsModifier: false, value: 'is', summary: 'is null, true, false or unknown', example: 'label_id=is.null' },
  { op: 'isdistinct', sql: 'IS DISTINCT FROM', allowsModifier: false, value: 'single', summary: 'not equal, treating null as a value', example: 'label_id=isdistinct.<uuid>' },
  { op: 'fts', sql: '@@ to_tsquery', allowsModifier: false, value: 'fts', summary: 'full-text search (to_tsquery)', example: 'release_title=fts(english).blue' },
  { op: 'plfts', sql: '@@ plainto_tsquery', allowsModifier: false, value: 'fts', summary: 'full-text search (plainto_tsquery)', example: 'release_title=plfts.blue note' },
  { op: 'phfts', sql: '@@ phraseto_tsquery', allowsModifier: false, value: 'fts', summary: 'full-text phrase search (phraseto_tsquery)', example: 'release_title=phfts(english).kind of blue' },
  { op: 'wfts', sql: '@@ websearch_to_tsquery', allowsModifier: false, value: 'fts', summary: 'full-text web search (websearch_to_tsquery)', example: 'release_title=wfts.blue or green' },
  { op: 'cs', sql: '@>', allowsModifier: false, value: 'single', summary: 'contains (arrays, ranges, jsonb)', example: 'tags=cs.{jazz,live}' },
  { op: 'cd', sql: '<@', allowsModifier: false, value: 'single', summary: 'is contained in (arrays, ranges, jsonb)', example: 'tags=cd.{jazz,live,bop}' },
  { op: 'ov', sql: '&&', allowsModifier: false, value: 'single', summary: 'overlaps (arrays, ranges)', example: 'tags=ov.{jazz,soul}' },
  { op: 'sl', sql: '<<', allowsModifier: false, value: 'single', summary: 'strictly left of (ranges)', example: 'period=sl.(1,10)' },
  { op: 'sr', sql: '>>', allowsModifier: false, value: 'single', summary: 'strictly right of (ranges)', example: 'period=sr.(1,10)' },
  { op: 'nxr', sql: '&<', allowsModifier: false, value: 'single', summary: 'does not extend to the right of (ranges)', example: 'period=nxr.(1,10)' },
  { op: 'nxl', sql: '&>', allowsModifier: false, value: 'single', summary: 'does not extend to the left of (ranges)', example: 'period=nxl.(1,10)' },
  { op: 'adj', sql: '-|-', allowsModifier: false, value: 'single', summary: 'is adjacent to (ranges)', example: 'period=adj.(3,10]' },
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

/** The values `is` accepts (lower-cased). */
export const IS_VALUES = ['null', 'true', 'false', 'unknown'] as const;
