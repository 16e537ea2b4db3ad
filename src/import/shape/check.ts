import type { SourceRecord } from '../types.js';

/** Why a row cannot go in: a SQLSTATE-like code (PostgreSQL's where one fits) and a message. */
export interface RowFault {
  code: string;
  message: string;
}

/**
 * A per-row check: the extension point for data-quality rules (`--check`). It sees every row that
 * shaped well (`row`: column → value, as the body will carry it) with its source record, and
 * answers null (the row goes on) or a fault (the row is rejected with it, like a bad value).
 *
 * Rules a check must keep: it is pure per row (it may be asked twice about one record: by the
 * duplicate scan, so a row it rejects never wins a dedupe, and by the load), and it must not
 * change `row`. Checks run in the order given, and the first fault wins.
 */
export interface RowCheck {
  /** A short name for messages and the summary (`--check name`). */
  readonly name: string;
  check(row: Readonly<Record<string, unknown>>, record: SourceRecord): RowFault | null;
}

/**
 * The check stage: the first fault any check finds for a row, or null.
 * @example runChecks([{ name: 'title', check: (r) => (r.title ? null : { code: 'CHECK', message: 'no title' }) }], {}, rec) // { code: 'CHECK', … }
 */
export function runChecks(checks: readonly RowCheck[], row: Readonly<Record<string, unknown>>, record: SourceRecord): RowFault | null {
  for (const c of checks) {
    const fault = c.check(row, record);
    if (fault) return fault;
  }
  return null;
}
