import { Command } from 'commander';
import { RULE_NAMES } from '../../check/rules.js';
import { wrapWords } from '../../format/width.js';
import { COLLECTIONS } from '../../schema/catalog.js';
import type { Context } from '../context.js';
import { CHECK_FLAGS, type CheckFlags, DEFAULT_FAIL_ON } from './check-flags.js';
import { addFlags } from './flag-table.js';
import { examples } from './shared.js';

const LONG_HELP = `
Rules (catalog check --list-rules explains each):
${wrapWords(RULE_NAMES.map((n, i) => (i < RULE_NAMES.length - 1 ? `${n},` : n)), 94).map((l) => `  ${l}`).join('\n')}

--fix shows every change (collection, id, field, old → new) and asks first (--yes without a
terminal); a row changed by someone else since the check is left alone. For example:
  catalog check labels artists --rules whitespace --fix

Exit codes: 0 no finding at or above --fail-on (default ${DEFAULT_FAIL_ON}), 5 findings at or above it,
and the usual 1, 2, 4 for service, usage and permission errors.`;

/** `catalog check [collection...]`. */
export function defineCheck(ctx: Context): Command {
  const cmd = addFlags(
    new Command('check')
      .description('Check the data quality of the catalog (ISRC, UPC, duplicates, spaces, consistency, plausibility); --fix repairs what can be repaired')
      .argument('[collection...]', `collections to check (default: all): ${COLLECTIONS.join(', ')}`),
    CHECK_FLAGS,
  )
    .addHelpText('after', LONG_HELP)
    // the command's own code loads when it runs: defining it (for `catalog --help`) stays cheap
    .action(async (collections: string[], opts: CheckFlags) => (await import('./check-run.js')).runCheck(collections, opts, ctx));
  return examples(cmd, [
    'catalog check',
    'catalog check tracks releases --rules isrc-format,isrc-duplicate,upc-format',
    'catalog check --fail-on warning -o ndjson > findings.ndjson   # in CI',
  ]);
}

