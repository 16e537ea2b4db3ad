import type { Command } from 'commander';
import { type TableDef, titleOf } from '../../schema/model.js';
import { addFlags, type FlagRow, type FlagsOf } from './flag-table.js';

/** Thrown by a placeholder command when commander picked it: the caller rebuilds the whole tree. */
export class NeedsWholeTree extends Error {}

const PLACEHOLDERS = new WeakSet<Command>();

/**
 * Marks a command as a placeholder: it stands in a tree built for one command line (so the root
 * help still lists it) and, should commander pick it after all, asks for the whole tree.
 * See settlePlaceholders for the settings it gets.
 */
export function placeholder(cmd: Command): Command {
  PLACEHOLDERS.add(cmd);
  return cmd;
}

/**
 * Gives every placeholder under `root` its settings: any words, no help of its own, an action
 * that throws NeedsWholeTree. Call after copying the inherited settings, which would reset them.
 */
export function settlePlaceholders(root: Command): void {
  for (const sub of root.commands) {
    if (PLACEHOLDERS.has(sub)) {
      sub.helpOption(false).allowUnknownOption().allowExcessArguments().action(() => {
        throw new NeedsWholeTree();
      });
    } else settlePlaceholders(sub);
  }
}

// a repeatable flag's parser lives beside the flag tables; globals.ts takes it from here
export { collect } from './flag-table.js';

/**
 * The read flags shared by list and export, one row each: their commander chain (addReadFlags) and
 * their type (ReadFlags) come from it.
 */
export const READ_FLAGS = [
  {
    flag: 'where',
    short: 'w',
    value: 'expr',
    repeatable: true,
    help: "filter: field=op.value or field OP value (OP: = != < <= > >= ~ !~; ~ ignores case and accents, * is a wildcard; dates may be today, -30d, now-6h); repeat to AND. A short-form filter on an embed (labels.name=Verve) keeps only the rows whose embed matches; the raw form labels.name=eq.Verve keeps the others with the embed empty",
  },
  { flag: 'or', value: 'expr', repeatable: true, help: 'alternative filter; every --or joins one or=() group' },
  { flag: 'select', short: 's', value: 'cols', help: 'fields and embeds, PostgREST select syntax: id,name,labels(name)' },
  { flag: 'order', value: 'spec', help: 'sort: field[.asc|.desc][.nullsfirst|.nullslast], comma-separated' },
  { flag: 'limit', short: 'l', value: 'n', help: 'at most N rows' },
  { flag: 'offset', value: 'n', help: 'skip N rows' },
] as const satisfies readonly FlagRow[];

/** The read flags of list and export, as commander parses them: one key per READ_FLAGS row. */
export type ReadFlags = FlagsOf<typeof READ_FLAGS>;

/** Adds the read flags shared by list and export (--where, --or, --select, --order, --limit, --offset): every row of READ_FLAGS. */
export function addReadFlags(cmd: Command): Command {
  return addFlags(cmd, READ_FLAGS);
}

/** Appends a command's examples (and where they run) to its --help. */
export function examples(cmd: Command, lines: string[]): Command {
  return cmd.addHelpText('after', `\nExamples:\n${lines.map((l) => `  ${l}`).join('\n')}\n`);
}

/** What `catalog --help` says of a collection. */
export function collectionDescription(table: { name: string }): string {
  return `${table.name[0].toUpperCase()}${table.name.slice(1)}: list, get, add, update, remove, describe, import, export, count`;
}

/** The `/collection` path of a table. */
export const pathOf = (table: { name: string }) => `/${table.name}`;

/** A readable title field for examples of each collection: its title (TableDef.title), else `id`. */
export function titleField(table: TableDef): string {
  return titleOf(table) ?? 'id';
}

// "artist" for artists, as the table model derives it (src/schema/model.ts)
export { singularOf } from '../../schema/model.js';
