import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { DEFAULT_PAGE } from '../../src/client/pages.js';
import { ADD_FLAGS } from '../../src/cli/commands/add.js';
import { CHANGELOG_FLAGS } from '../../src/cli/commands/changelog.js';
import { CHANGES_FLAGS, DEFAULT_LIMIT } from '../../src/cli/commands/changes.js';
import { CHECK_FLAGS, DEFAULT_EXAMPLES, DEFAULT_FAIL_ON, DEFAULT_SEVERITY } from '../../src/cli/commands/check-flags.js';
import { COUNT_FLAGS } from '../../src/cli/commands/count.js';
import { EXPORT_FLAGS } from '../../src/cli/commands/export.js';
import type { FlagRow } from '../../src/cli/commands/flag-table.js';
import { GET_FLAGS } from '../../src/cli/commands/get.js';
import { IMPORT_DIR_FLAGS } from '../../src/cli/commands/import-dir.js';
import { DIRECTORY_FLAGS, IMPORT_FLAGS } from '../../src/cli/commands/import-flags.js';
import { DEFAULT_PAGE as LIST_PAGE, LIST_FLAGS } from '../../src/cli/commands/list.js';
import { REMOVE_FLAGS } from '../../src/cli/commands/remove.js';
import { SCHEMA_FLAGS } from '../../src/cli/commands/schema.js';
import { READ_FLAGS } from '../../src/cli/commands/shared.js';
import { DEFAULT_LIFETIME, TOKEN_CREATE_FLAGS } from '../../src/cli/commands/token.js';
import { UPDATE_FLAGS } from '../../src/cli/commands/update.js';
import { buildProgram } from '../../src/cli/main.js';
import { runCli, testContext } from './support.js';

/**
 * Issue 39 item 2: every command's flags are one table. The command the CLI builds has one option
 * per row, in the table's order and nothing else, and --help shows each row as the table says,
 * its default rendered from the constant the code applies.
 */

/** Each command (its words on the command line) and the tables its flags come from, in order. */
const COMMANDS: Array<[string[], ReadonlyArray<readonly FlagRow[]>]> = [
  [['labels', 'add'], [ADD_FLAGS]],
  [['changelog'], [CHANGELOG_FLAGS]],
  [['changes'], [CHANGES_FLAGS]],
  [['check'], [CHECK_FLAGS]],
  [['labels', 'count'], [COUNT_FLAGS]],
  [['labels', 'export'], [READ_FLAGS, EXPORT_FLAGS]],
  [['labels', 'get'], [GET_FLAGS]],
  [['labels', 'list'], [READ_FLAGS, LIST_FLAGS]],
  [['labels', 'remove'], [REMOVE_FLAGS]],
  [['schema'], [SCHEMA_FLAGS]],
  [['token', 'create'], [TOKEN_CREATE_FLAGS]],
  [['labels', 'update'], [UPDATE_FLAGS]],
  [['import'], [IMPORT_FLAGS, DIRECTORY_FLAGS, IMPORT_DIR_FLAGS]],
  [['labels', 'import'], [IMPORT_FLAGS]],
];

/** The files whose flags come from tables: none of them may declare an option by hand. */
const TABLE_DRIVEN = ['add', 'changelog', 'changes', 'check', 'check-flags', 'count', 'export', 'get', 'import-dir', 'import-flags', 'list', 'remove', 'schema', 'shared', 'token', 'update'];

const camel = (flag: string) => flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
const flat = (text: string) => text.replace(/\s+/g, ' ');

/** The command the CLI builds for these words (the whole tree, as `catalog help` builds it). */
async function commandAt(words: string[]): Promise<Command> {
  let cmd = await buildProgram(testContext().ctx);
  for (const w of words) cmd = cmd.commands.find((c) => c.name() === w)!;
  expect(cmd, words.join(' ')).toBeDefined();
  return cmd;
}

/** How --help shows a row: its flags and value name, its help with the default it names, then choices and preset. */
function shown(row: FlagRow): { flags: string; text: string } {
  const value = row.value === undefined ? '' : row.optional ? ` [${row.value}]` : ` <${row.value}>`;
  const flags = `${row.short ? `-${row.short}, ` : ''}--${row.negate ? 'no-' : ''}${row.flag}${value}`;
  const extra = [...(row.choices ? [`choices: ${row.choices.map((c) => `"${c}"`).join(', ')}`] : []), ...(row.preset !== undefined ? [`default: "${row.preset}"`] : [])];
  const text = `${row.help}${row.fallback !== undefined ? ` (default: ${row.fallback})` : ''}${extra.length ? ` (${extra.join(', ')})` : ''}`;
  return { flags, text: flat(text) };
}

describe('command flags: one table per command', () => {
  it.each(COMMANDS)('%j has one option per row of its tables, named as the rows say', async (words, tables) => {
    const cmd = await commandAt(words);
    const rows = tables.flat();
    expect(cmd.options.map((o) => o.flags)).toEqual(rows.map((r) => shown(r).flags));
    expect(cmd.options.map((o) => o.attributeName())).toEqual(rows.map((r) => camel(r.flag)));
    expect(cmd.options.map((o) => o.mandatory)).toEqual(rows.map((r) => Boolean(r.required)));
    // a repeatable row keeps every value given, in order
    cmd.options.forEach((o, i) => {
      if (rows[i].repeatable) expect(o.parseArg?.('b', ['a'] as never), o.flags).toEqual(['a', 'b']);
    });
  });

  it.each(COMMANDS)('%j --help lists every row with its value name, choices and default', async (words, tables) => {
    const help = flat((await commandAt(words)).helpInformation());
    for (const row of tables.flat()) {
      const { flags, text } = shown(row);
      expect(help, `${words.join(' ')} ${flags}`).toContain(`${flags} ${text}`);
    }
  });

  it("--help shows the defaults the code applies, from the code's own constants", async () => {
    const help = async (...words: string[]) => flat((await commandAt(words)).helpInformation());
    const check = await help('check');
    expect(check).toContain(`rows per request while reading (default: ${DEFAULT_PAGE})`);
    expect(check).toContain(`examples a terminal shows per rule (default: ${DEFAULT_EXAMPLES})`);
    expect(check).toContain(`(choices: "warning", "error", default: "${DEFAULT_SEVERITY}")`);
    expect(check).toContain(`(choices: "warning", "error", "none", default: "${DEFAULT_FAIL_ON}")`);
    // the exit codes below the options (help text after them) name the same default
    expect(flat((await runCli(['check', '--help'])).out)).toContain(`no finding at or above --fail-on (default ${DEFAULT_FAIL_ON})`);
    expect(await help('labels', 'export')).toContain(`--page-size <n> rows per request (default: ${DEFAULT_PAGE})`);
    expect(await help('labels', 'list')).toContain(`--page-size <n> rows per request with --all (default: ${LIST_PAGE})`);
    expect(await help('changes')).toContain(`the oldest first (default: ${DEFAULT_LIMIT})`);
    expect(await help('token', 'create')).toContain(`or never (default: "${DEFAULT_LIFETIME}")`);
    // no default is restated as a literal: every "(default N)" without a colon is gone
    for (const [words] of COMMANDS) expect(await help(...words), words.join(' ')).not.toMatch(/\(default \d/);
  });

  it('leaves no hand-written option chain in a table-driven command file', () => {
    // flag-table.ts is the one exception: addFlags is where the rows become options
    const offenders = TABLE_DRIVEN.flatMap((name) => {
      const text = readFileSync(new URL(`../../src/cli/commands/${name}.ts`, import.meta.url), 'utf8');
      return [...text.matchAll(/\.(option|addOption|requiredOption)\(/g)].map((m) => `${name}.ts: .${m[1]}(`);
    });
    expect(offenders).toEqual([]);
  });
});
