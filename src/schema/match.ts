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
 * `catalog_upc_key` or `catalog_name_key` (nameKey's rule), as src/import/match/keys.ts's
 * normalizeKeyPart chooses. `expr` is a trusted SQL expression of the column.
 * @example keyPartSql('isrc_code', 'text', 'x."isrc_code"') // 'catalog_isrc_key(x."isrc_code")'
 */
export function keyPartSql(column: string, type: string, expr: string): string {
  const text = type === 'text' ? expr : `(${expr})::text`;
  if (column === 'isrc_code') return `catalog_isrc_key(${text})`;
  if (column === 'upc_code') return `catalog_upc_key(${text})`;
  return `catalog_name_key(${text})`;
}

/** White space as JavaScript's `\s` and `trim()` read it (the client's keys.ts), as a regex class body. */
export const WS = String.raw`\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff`;

/** A valid ISRC, as src/schema/keys.ts tests it. */
export const ISRC_PATTERN = String.raw`^[A-Z]{2}[A-Z0-9]{3}[0-9]{7}$`;

/**
 * For the ISRC and the UPC: the test a stored value passes when it is its own key (a valid ISRC;
 * a UPC without white space and hyphens), as SQL of `ref`, negated. Nearly every stored value is,
 * so migration 6 indexes the keys of the others only (a partial index: an insert of a clean value
 * costs one pattern test, not a key and an index entry), and a lookup reads the column's plain
 * index (migration 2) for the clean ones. Null for other columns.
 * @example notOwnKey('isrc_code', 'x."isrc_code"') // `x."isrc_code" !~ '^[A-Z]{2}[A-Z0-9]{3}[0-9]{7}$'`
 */
export function notOwnKey(column: string, ref: string): string | null {
  if (column === 'isrc_code') return `${ref} !~ '${ISRC_PATTERN}'`;
  if (column === 'upc_code') return `${ref} ~ '[${WS}-]'`;
  return null;
}

/**
 * The condition that a stored row (columns of `ref`) has the key `key` (an expression of the
 * normalised key, never empty), as migration 6's indexes can answer it: for a one-column ISRC or
 * UPC key, its value as it is (the column's plain index) or, when it is not its own key, its key
 * (the partial index); for any other key each part's normalised value.
 */
export function keyMatchSql<C extends { name: string; type: string }>(columns: readonly C[], ref: (column: C) => string, keys: readonly string[]): string {
  const c = columns[0];
  const dirty = columns.length === 1 && c.type === 'text' ? notOwnKey(c.name, ref(c)) : null;
  const stored = keyExpressions(columns, ref);
  if (dirty !== null) return `(${ref(c)} = ${keys[0]} OR (${dirty} AND ${stored[0]} = ${keys[0]}))`;
  return stored.map((e, j) => `${e} = ${keys[j]}`).join(' AND ');
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
