import { SOURCE_IDS, SOURCE_NAME } from './source-ids.js';

/**
 * `Prefer: match=ALT|ALT…` (our extension, docs/service.md "Bulk extensions"): how an upsert's
 * rows find the stored record they are, decided by the service under a lock where the write
 * happens, so concurrent imports never make a record twice (issue 35). Its parser and renderer
 * live here, beside each other, in schema/ so that the service and the import client share them.
 *
 * An alternative is `source_ids.<source>` (the row's own id in that source, compared exactly) or
 * natural-key columns joined by `+` (`isrc_code`, `upc_code`, `catalog_number`, `genre+name`),
 * compared normalised as `catalog check` and the import compare them (src/schema/keys.ts): an ISRC
 * without separators and case, a UPC without spaces and hyphens, any other text by its name key.
 */

/** One alternative: a source's id, or a natural key of one or more columns. */
export type MatchAlternative = { kind: 'source'; source: string } | { kind: 'key'; columns: string[] };

const COLUMN = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The preference's name in `Prefer`. */
export const MATCH_PREFERENCE = 'match';

/**
 * The alternatives of a `match=` value, or what is wrong with it.
 * @example parseMatch('isrc_code|source_ids.legacy') // [{ kind: 'key', columns: ['isrc_code'] }, { kind: 'source', source: 'legacy' }]
 * @example parseMatch('genre+name') // [{ kind: 'key', columns: ['genre', 'name'] }]
 */
export function parseMatch(value: string): MatchAlternative[] | { error: string } {
  if (value.trim() === '') return { error: 'no alternative given' };
  const out: MatchAlternative[] = [];
  for (const raw of value.split('|')) {
    const alt = raw.trim();
    if (alt.startsWith(`${SOURCE_IDS}.`)) {
      const source = alt.slice(SOURCE_IDS.length + 1);
      if (!SOURCE_NAME.test(source)) return { error: `"${alt}": a source is named with letters, digits, _ or - (at most 64)` };
      out.push({ kind: 'source', source });
      continue;
    }
    const columns = alt.split('+').map((c) => c.trim());
    const bad = columns.find((c) => !COLUMN.test(c));
    if (bad !== undefined) return { error: `"${alt}": ${bad === '' ? 'an empty column name' : `"${bad}" is not a column name`} (an alternative is source_ids.<source> or columns joined by +)` };
    out.push({ kind: 'key', columns });
  }
  return out;
}

/**
 * The `match=` value of alternatives (what a client sends, and Preference-Applied echoes).
 * @example renderMatch([{ kind: 'source', source: 'legacy' }, { kind: 'key', columns: ['genre', 'name'] }]) // 'source_ids.legacy|genre+name'
 */
export function renderMatch(alts: readonly MatchAlternative[]): string {
  return alts.map((a) => (a.kind === 'source' ? `${SOURCE_IDS}.${a.source}` : a.columns.join('+'))).join('|');
}

/**
 * The SQL that normalises one key column's value for comparison (the same expression the key
 * indexes of migration 6 are built on, so a lookup is an index scan): `catalog_isrc_key`,
 * `catalog_upc_key` or `catalog_name_key` (nameKey's rule), as src/import/keys.ts's
 * normalizeKeyPart chooses. `expr` is a trusted SQL expression of the column.
 * @example keyPartSql('isrc_code', 'text', 'x."isrc_code"') // 'catalog_isrc_key(x."isrc_code")'
 */
export function keyPartSql(column: string, type: string, expr: string): string {
  const text = type === 'text' ? expr : `(${expr})::text`;
  if (column === 'isrc_code') return `catalog_isrc_key(${text})`;
  if (column === 'upc_code') return `catalog_upc_key(${text})`;
  return `catalog_name_key(${text})`;
}

/**
 * A key's expressions, one per column, as both a lookup and migration 6's key indexes write them
 * (so the lookup is an index scan): a one-column key's normalised value as it is; each part of a
 * longer key with null as '' (a missing part is an empty part, as the client's keyText has it).
 * @example keyExpressions([{ name: 'genre', type: 'text' }, { name: 'name', type: 'text' }], (c) => c.name) // ["coalesce(catalog_name_key(genre), '')", "coalesce(catalog_name_key(name), '')"]
 */
export function keyExpressions<C extends { name: string; type: string }>(columns: readonly C[], ref: (column: C) => string): string[] {
  return columns.map((c) => (columns.length === 1 ? keyPartSql(c.name, c.type, ref(c)) : `coalesce(${keyPartSql(c.name, c.type, ref(c))}, '')`));
}
