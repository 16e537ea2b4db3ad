import type { RowCheck } from '../import/stages/check.js';
import { RULES, rowFindings, type Today } from './rules.js';

/** The per-row rules (those that need no other row). */
const ROW_RULES: ReadonlySet<string> = new Set(RULES.filter((r) => !/duplicate|consistency|reference/.test(r.name)).map((r) => r.name));

/**
 * `import --check`: rejects a row that a per-row rule of `catalog check` calls an error (a
 * malformed ISRC, a UPC with a wrong check digit or in scientific notation, …). Warnings (spaces,
 * fixable separators, plausibility) let the row in: `catalog check` reports them afterwards.
 */
export function qualityCheck(collection: string, today: Today): RowCheck {
  return {
    name: 'check',
    check(row) {
      const error = rowFindings(collection, row, ROW_RULES, today).find((f) => f.severity === 'error');
      return error ? { code: 'CHECK', message: `${error.rule} (${error.field}): ${error.message}` } : null;
    },
  };
}
