import { encodeComponent } from '../grammar/query-string.js';
import type { Filter, Query } from '../grammar/types.js';

/**
 * Long `in.(…)` lists cut to fit a URL. Proxies and node:http refuse request lines near 8–16 KB
 * (414/431); every request that carries a list of ids or keys is cut here under 6,000 characters
 * of query, and at most 200 values (a server's max-rows cap then cannot truncate an answer).
 */

/** Longest query string a list request builds. */
export const MAX_QUERY_CHARS = 6000;
/** Most values per list. */
export const MAX_LIST_VALUES = 200;

/** At most the characters a value takes in an encoded `in.(…)` list (quoted, escaped, percent-encoded). */
export const listCost = (value: string): number => encodeComponent(value.replace(/[\\"]/g, '\\$&')).length + 7;

/**
 * The values in consecutive parts whose lists each fit `MAX_QUERY_CHARS` beside `fixed`
 * characters of the rest of the query.
 * @example [...inListChunks(['a', 'b', 'c'], 0, 2)] // [['a', 'b'], ['c']]
 */
export function* inListChunks(values: readonly string[], fixed: number, maxValues = MAX_LIST_VALUES, maxChars = MAX_QUERY_CHARS): Generator<string[]> {
  let i = 0;
  while (i < values.length) {
    const part: string[] = [];
    let len = fixed;
    while (i < values.length && part.length < maxValues) {
      const cost = listCost(values[i]);
      if (part.length > 0 && len + cost > maxChars) break;
      part.push(values[i]);
      len += cost;
      i++;
    }
    yield part;
  }
}

/**
 * A query whose URL would be too long, as several that each fit: its one top-level `in.(…)`
 * list (not negated), each value once, cut in parts; the rows they select together are the rows
 * it selects, each once. Any other query comes back as it is (a 414 from the service then says
 * what is wrong).
 * @example splitLongQuery(q, compileQuery).length // 3 for a query of 600 uuids in one in.()
 */
export function splitLongQuery(q: Query, compile: (q: Query) => string, maxChars = MAX_QUERY_CHARS): Query[] {
  if (compile(q).length <= maxChars) return [q];
  const lists = q.where.filter((w) => w.path.length === 0 && w.condition.kind === 'filter' && w.condition.op === 'in' && !w.condition.negated);
  if (lists.length !== 1) return [q];
  const clause = lists[0];
  const filter = clause.condition as Filter;
  const rest = { ...q, where: q.where.filter((w) => w !== clause) };
  const fixed = compile(rest).length + filter.field.name.length + 12;
  const parts: Query[] = [];
  // each value once: a value repeated in two parts would select (count, update) its rows twice
  for (const values of inListChunks([...new Set(filter.value as string[])], fixed, Number.MAX_SAFE_INTEGER, maxChars)) {
    parts.push({ ...q, where: q.where.map((w) => (w === clause ? { ...w, condition: { ...filter, value: values } } : w)) });
  }
  return parts;
}
