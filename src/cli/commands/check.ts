import { Command, Option } from 'commander';
import { RULE_NAMES } from '../../check/rules.js';
import { wrapWords } from '../../format/width.js';
import { COLLECTIONS } from '../../schema/catalog.js';
import type { Context } from '../context.js';
import type { CheckFlags } from './check-run.js';
import { examples } from './shared.js';

const LONG_HELP = `
Rules (catalog check --list-rules explains each):
${wrapWords(RULE_NAMES.map((n, i) => (i < RULE_NAMES.length - 1 ? `${n},` : n)), 94).map((l) => `  ${l}`).join('\n')}

--fix shows every change (collection, id, field, old → new) and asks first (--yes without a
terminal); a row changed by someone else since the check is left alone. For example:
  catalog check labels artists --rules whitespace --fix

Exit codes: 0 no finding at or above --fail-on (default error), 5 findings at or above it,
and the usual 1, 2, 4 for service, usage and permission errors.`;

/** `catalog check [collection...]`. */
export function defineCheck(ctx: Context): Command {
  const cmd = new Command('check')
    .description('Check the data quality of the catalog (ISRC, UPC, duplicates, spaces, consistency, plausibility); --fix repairs what can be repaired')
    .argument('[collection...]', `collections to check (default: all): ${COLLECTIONS.join(', ')}`)
    .option('-r, --rules <names>', 'only these rules, comma-separated (see --list-rules)')
    .addOption(new Option('--severity <level>', 'report findings at or above this level').choices(['warning', 'error']).default('warning'))
    .addOption(new Option('--fail-on <level>', 'exit 5 when a finding is at or above this level (none: always exit 0)').choices(['warning', 'error', 'none']).default('error'))
    .option('--list-rules', 'list the rules with their severity, scope and why they matter')
    .option('--fix', 'apply the fixable findings (spaces, ISRC separators and case, copied names) after showing them')
    .option('-y, --yes', 'with --fix: do not ask (required when stdin is not a terminal)')
    .option('--page-size <rows>', 'rows per request while reading (default 2000)')
    .option('--limit-examples <n>', 'examples a terminal shows per rule (default 3)')
    .option('--all-findings', 'every finding in the terminal view (-o ndjson for a file of them)')
    .addHelpText('after', LONG_HELP)
    // the command's own code loads when it runs: defining it (for `catalog --help`) stays cheap
    .action(async (collections: string[], opts: CheckFlags) => (await import('./check-run.js')).runCheck(collections, opts, ctx));
  return examples(cmd, [
    'catalog check',
    'catalog check tracks releases --rules isrc-format,isrc-duplicate,upc-format',
    'catalog check --fail-on warning -o ndjson > findings.ndjson   # in CI',
  ]);
}

