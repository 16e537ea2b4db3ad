import { DEFAULT_PAGE } from '../../client/pages.js';
import type { Severity } from '../../check/rules.js';
import type { FlagRow, FlagsOf } from './flag-table.js';

// Apart from check.ts (the command) and check-run.ts (the run, loaded when the command runs): both
// take the flags and their defaults from here, and an import of check-run.ts from check.ts, even
// for a type, would load the run at start-up (and close an import circle).

/** The level findings are reported from unless --severity says otherwise. */
export const DEFAULT_SEVERITY: Severity = 'warning';

/** The level that fails the run (exit 5) unless --fail-on says otherwise. */
export const DEFAULT_FAIL_ON: Severity | 'none' = 'error';

/** Examples per rule on a terminal unless --limit-examples / --all-findings say otherwise. */
export const DEFAULT_EXAMPLES = 3;

const SEVERITIES = ['warning', 'error'] as const satisfies readonly Severity[];

/** Every flag of `catalog check`, one row each: its commander chain and CheckFlags come from it. */
export const CHECK_FLAGS = [
  { flag: 'rules', short: 'r', value: 'names', help: 'only these rules, comma-separated (see --list-rules)' },
  { flag: 'severity', value: 'level', choices: SEVERITIES, preset: DEFAULT_SEVERITY, help: 'report findings at or above this level' },
  { flag: 'fail-on', value: 'level', choices: [...SEVERITIES, 'none'], preset: DEFAULT_FAIL_ON, help: 'exit 5 when a finding is at or above this level (none: always exit 0)' },
  { flag: 'list-rules', help: 'list the rules with their severity, scope and why they matter' },
  { flag: 'fix', help: 'apply the fixable findings (spaces, ISRC separators and case, copied names) after showing them' },
  { flag: 'yes', short: 'y', help: 'with --fix: do not ask (required when stdin is not a terminal)' },
  // without --page-size the reads go in pages of the client's own size (client/pages.ts)
  { flag: 'page-size', value: 'rows', help: 'rows per request while reading', fallback: String(DEFAULT_PAGE) },
  { flag: 'limit-examples', value: 'n', help: 'examples a terminal shows per rule', fallback: String(DEFAULT_EXAMPLES) },
  { flag: 'all-findings', help: 'every finding in the terminal view (-o ndjson for a file of them)' },
] as const satisfies readonly FlagRow[];

/** The flags of `catalog check`, as commander parses them: one key per CHECK_FLAGS row. */
export type CheckFlags = FlagsOf<typeof CHECK_FLAGS>;
