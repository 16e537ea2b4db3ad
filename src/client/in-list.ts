import { encodeComponent } from '../grammar/query-string.js';

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
