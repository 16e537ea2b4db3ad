import { defaultReferencesText } from '../../schema/facts.js';
import type { FlagRow } from './flag-table.js';

// Flag-table rows (flag-table.ts) that several commands take with the same meaning and help.

/** How `update` and `remove` choose rows instead of an id. */
export const TARGET_ROWS = [
  { flag: 'where', short: 'w', value: 'expr', repeatable: true, help: 'choose the rows by filter instead of an id (repeat to AND)' },
  { flag: 'or', value: 'expr', repeatable: true, help: 'alternative filter (one or=() group)' },
] as const satisfies readonly FlagRow[];

/** `--ref`, as `add`, `update` and `import` take it: the references resolved unasked come from the table model. */
export const REF_ROW = {
  flag: 'ref',
  value: 'field=collection.column',
  repeatable: true,
  help: `resolve a text field to its id by name, repeatable (${defaultReferencesText()} unasked)`,
} as const satisfies FlagRow;
