// The glue between two engines: check's per-row rules as an import RowCheck (the CLI composes engines; they never import each other).
import type { RowCheck } from '../import/shape/check.js';
import { isrcKey, RULES, rowFindings, SEVERITY_RANK as RANK, type Severity, type Today, upcKey } from '../check/rules.js';

/** The per-row rules (those that need no other row). */
const ROW_RULES: ReadonlySet<string> = new Set(RULES.filter((r) => !/duplicate|consistency|reference/.test(r.name)).map((r) => r.name));

/** The identifier each collection must not repeat inside one file, in the form rows compare by. */
const IDENTIFIER: Record<string, { field: string; rule: string; key: (v: string) => string }> = {
  tracks: { field: 'isrc_code', rule: 'isrc-duplicate', key: isrcKey },
  releases: { field: 'upc_code', rule: 'upc-duplicate', key: upcKey },
};

/** `import --check`: the RowCheck, and what it let in with warnings (for the summary). */
export interface QualityCheck extends RowCheck {
  /** Rows let in with findings below the level, per rule (each row counted once). */
  readonly warned: ReadonlyMap<string, number>;
}

/**
 * `import --check [level]`: rejects a row that a per-row rule of `catalog check` finds at or above
 * `level` (default error: a malformed ISRC, a UPC with a wrong check digit or in scientific
 * notation, …), and a row whose ISRC (tracks) or UPC (releases) an earlier line of the file already
 * has. Findings below the level let the row in and are counted for the summary.
 *
 * The check is asked about a record once per pass (the duplicate scan, then the load), in file
 * order each time, so it answers the same both times: the first line of an identifier is kept in
 * memory (one entry per distinct identifier), and a row counts as warned only the first time its
 * line is seen.
 */
export function qualityCheck(collection: string, today: Today, level: Severity = 'error'): QualityCheck {
  const firstLine = new Map<string, number>();
  const warned = new Map<string, number>();
  let counted = 0;
  const ident = IDENTIFIER[collection];
  return {
    name: 'check',
    warned,
    check(row, record) {
      const findings = rowFindings(collection, row, ROW_RULES, today);
      const fault = findings.filter((f) => RANK[f.severity] >= RANK[level]).sort((a, b) => RANK[b.severity] - RANK[a.severity])[0];
      if (fault) return { code: 'CHECK', message: `${fault.rule} (${fault.field}): ${fault.message}` };
      const value = ident ? row[ident.field] : undefined;
      if (ident && typeof value === 'string' && value.trim() !== '') {
        const key = ident.key(value);
        const first = firstLine.get(key);
        if (first === undefined) firstLine.set(key, record.line);
        else if (first !== record.line) return { code: 'CHECK', message: `${ident.rule} (${ident.field}): ${JSON.stringify(value)} is already on line ${first} of this file` };
      }
      if (record.line > counted) {
        counted = record.line;
        for (const rule of new Set(findings.map((f) => f.rule))) warned.set(rule, (warned.get(rule) ?? 0) + 1);
      }
      return null;
    },
  };
}
