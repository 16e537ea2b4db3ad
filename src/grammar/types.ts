/**
 * The typed model of a PostgREST 12.2.3 request: what the query string and the Range, Prefer and
 * Accept headers say. `compile.ts` turns a model into a query string and headers (the CLI side);
 * `parse.ts` turns a query string and headers back into a model (the server side). The property
 * test holds them together: `parseQuery(compileQuery(q))` deep-equals `q`.
 *
 * Paths (`path: string[]`) address an embed by name or alias from the root: `[]` is the root
 * table, `['labels']` the `labels` embed, `['labels', 'countries']` one level deeper.
 */

/** Every filter operator of PostgREST 12.2.3. */
export type { FilterOp } from './operators.js';
import type { FilterOp } from './operators.js';

/** One step of a JSON path: `->key` (jsonb) or `->>key` (text). Array indexes are keys like `"0"` or `"-1"`. */
export interface JsonPathStep {
  arrow: '->' | '->>';
  key: string;
  /** A quoted operand of digits (`->"2020"`): a key, as PostgREST reads it, where `->2020` is an array index. */
  text?: true;
}

/** A column, possibly followed by a JSON path (`metadata->socials->>x`). */
export interface FieldRef {
  name: string;
  jsonPath: JsonPathStep[];
}

/** `column=[not.]op[(any|all)|(ftsconfig)].value` */
export interface Filter {
  kind: 'filter';
  field: FieldRef;
  negated: boolean;
  op: FilterOp;
  /** `(any)` / `(all)`: only on eq gt gte lt lte like ilike match imatch; the value is a PG array literal. */
  modifier?: 'any' | 'all';
  /** Text search configuration of fts/plfts/phfts/wfts: `fts(english).x`. */
  language?: string;
  /**
   * The value as text. For `in` it is the list of elements (`in.(a,"b,c")` → `['a', 'b,c']`).
   * For `is` it is lower-cased (`null`, `true`, `false`, `unknown`).
   */
  value: string | string[];
}

/** `and=(...)`, `or=(...)`, `not.or=(...)`, nested `and(...)` inside a tree. */
export interface LogicTree {
  kind: 'and' | 'or';
  negated: boolean;
  /** At least one. */
  conditions: Condition[];
}

export type Condition = Filter | LogicTree;

/** A condition and the embed it applies to (`labels.name=eq.x` → path `['labels']`). */
export interface WhereClause {
  path: string[];
  condition: Condition;
}

export interface SelectStar {
  type: 'star';
}

/** `alias:column->json->>path::cast` */
export interface SelectField {
  type: 'field';
  field: FieldRef;
  alias?: string;
  cast?: string;
}

/** `alias:relation!hint!inner(items)`, `...relation(items)` */
export interface SelectEmbed {
  type: 'embed';
  /** Table name, or an FK column name used as the target (`label_id(name)`). */
  relation: string;
  alias?: string;
  /** FK constraint name or FK column name after `!`. */
  hint?: string;
  join?: 'inner' | 'left';
  spread: boolean;
  /** The items inside the parentheses; `[]` for an empty embed `labels()`. */
  select: SelectItem[];
}

/** The aggregate functions of PostgREST 12 (`count()`, `col.sum()`, …; db-aggregates-enabled). */
export type AggregateFn = 'count' | 'sum' | 'avg' | 'max' | 'min';

/**
 * `alias:count()::cast`, `alias:field::fieldCast.sum()::cast`: an aggregate over the rows, grouped
 * by the other fields of the same level. `field` is absent for `count()`.
 */
export interface SelectAggregate {
  type: 'aggregate';
  fn: AggregateFn;
  field?: FieldRef;
  alias?: string;
  /** Cast of the field before aggregating (`col::int.sum()`). */
  fieldCast?: string;
  /** Cast of the result (`col.sum()::int`). */
  cast?: string;
}

export type SelectItem = SelectStar | SelectField | SelectEmbed | SelectAggregate;

/** `field[.asc|.desc][.nullsfirst|.nullslast]` or `relation(field)...` for a to-one embed. */
export interface OrderTerm {
  /** Set for `order=labels(name).desc`: the embed (name or alias) whose column orders the rows. */
  relation?: string;
  field: FieldRef;
  direction?: 'asc' | 'desc';
  nulls?: 'first' | 'last';
}

export interface OrderClause {
  path: string[];
  terms: OrderTerm[];
}

/** `limit=`/`offset=` (also `releases.limit=`). Non-numeric values are dropped by the parser. */
export interface PageClause {
  path: string[];
  limit?: number;
  offset?: number;
}

/** What the query string says. */
export interface Query {
  /** `select=`; undefined when absent (means `*`). An empty `select=` also means `*` and parses to undefined. */
  select?: SelectItem[];
  /** Filters and logic trees, in query-string order. */
  where: WhereClause[];
  /** `order=` per path, in query-string order. */
  order: OrderClause[];
  /** `limit=`/`offset=` per path; one entry per path, merged. */
  page: PageClause[];
  /** `columns=` (writes). */
  columns?: string[];
  /** `on_conflict=` (upserts). */
  onConflict?: string[];
}

/** Every preference PostgREST 12.2.3 knows, plus our `count=none` and `return=none`. */
export interface Preferences {
  return?: 'minimal' | 'headers-only' | 'representation' | 'none';
  resolution?: 'merge-duplicates' | 'ignore-duplicates';
  count?: 'exact' | 'planned' | 'estimated' | 'none';
  missing?: 'default' | 'null';
  handling?: 'strict' | 'lenient';
  tx?: 'commit' | 'rollback';
  params?: 'single-object';
  /** Our extension: a merge-duplicates upsert leaves rows whose values are all equal untouched. */
  unchanged?: 'skip';
  timezone?: string;
  maxAffected?: number;
  /**
   * Our extension: the import run (a lower-case uuid) a write belongs to. The write's transaction
   * sets `catalog.run` to it, and migration 11's write counter tallies the run's own statements
   * (src/server/runs.ts).
   */
  run?: string;
  /** Tokens that are not valid preferences, in the order given (for PGRST122). */
  invalid: string[];
}

/** `Range: from-to` (to omitted for `from-`). Zero-based, inclusive. */
export interface RangeHeader {
  from: number;
  to?: number;
}

/** A media type from Accept / Content-Type, lower-cased, with its parameters. */
export interface MediaType {
  type: string;
  params: Record<string, string>;
  q: number;
}
