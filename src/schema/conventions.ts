import type { ColumnDef } from './catalog.js';

/**
 * Conventions import and export share about cells, so that an export imports back to identical
 * rows: the null marker, and which column defaults are known without asking the database.
 */

/** The null marker both import and export use by default (PostgreSQL COPY's). */
export const DEFAULT_NULL_TOKEN = '\\N';

/**
 * The value a column takes when a row leaves it out (`missing=default`), when it is known
 * without asking the database; `undefined` for volatile defaults such as now().
 * @example knownDefault({ name: 'is_signed', type: 'boolean', default: 'false', … }) // false
 */
export function knownDefault(col: ColumnDef): unknown {
  if (col.default === undefined) return null;
  if (col.default === "''::text") return '';
  if (col.default === 'false') return false;
  if (col.default === 'true') return true;
  return undefined;
}
