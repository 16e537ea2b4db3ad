import { UsageError } from '../errors.js';
import type { ColumnDef, TableDef } from '../../schema/model.js';
import { removedFieldMessage } from '../version-check.js';
import { didYouMean } from '../../format/suggest.js';
import { computedColumn, computedField } from '../../schema/source-ids.js';

/**
 * The field `name` of a collection, or a usage error with a did-you-mean suggestion and the list
 * of fields (and a note when the interface removed that field).
 */
export function requireField(table: TableDef, name: string, removed: readonly string[] = []): ColumnDef {
  const field = table.columns.find((f) => f.name === name);
  if (field) return field;
  // a computed field (source_ids): selectable and filterable like a column, not part of *
  const computed = computedField(table.name, name);
  if (computed) return computedColumn(computed);
  const names = table.columns.map((f) => f.name);
  const list = `fields of ${table.name}: ${names.join(', ')}`;
  if (removed.includes(name)) {
    throw new UsageError(removedFieldMessage(table.name, name) ?? `the field '${name}' was removed from ${table.name}`, list);
  }
  const guess = didYouMean(name, names);
  throw new UsageError(`unknown field '${name}' in ${table.name}${guess ? `; did you mean '${guess}'?` : ''}`, list);
}
