import type { EventEmitter } from 'node:events';
import type { Command, Help, Option } from 'commander';

/** One option as --help shows it. */
export interface OptionNode {
  /** As declared: `-w, --where <expr>`. */
  flags: string;
  /** The names it answers to, long first: `--where`, `-w`. */
  names: string[];
  takesValue: boolean;
  /** Commander's help text for it, with its default and choices. */
  description: string;
}

/** One positional argument that --help describes. */
export interface ArgumentNode {
  term: string;
  description: string;
}

/** One command as --help shows it, and its subcommands. */
export interface CommandNode {
  name: string;
  aliases: string[];
  /** The words that run it, program first: ['catalog', 'artists', 'list']. */
  path: string[];
  /** What follows the name on the usage line: `[options] <id>`. */
  usage: string;
  /** The heading --help lists it under in its parent ('Collections:'), '' for the default one. */
  group: string;
  description: string;
  /** Its own options (the global ones are the root's). */
  options: OptionNode[];
  /** Empty when none of them has a description (--help then shows only the usage line). */
  arguments: ArgumentNode[];
  /** What --help prints after the option tables: notes and the Examples block. */
  after: string;
  /** The visible ones, in --help's order, without commander's implicit `help`. */
  subcommands: CommandNode[];
}

/**
 * The visible command tree of a program as its --help shows it: the one walk that completion
 * scripts and the man page read.
 * @example commandTree(program).subcommands.map((c) => c.name) // ['artists', 'countries', …, 'completion']
 */
export function commandTree(cmd: Command, parents: string[] = []): CommandNode {
  const help = cmd.createHelp();
  const path = [...parents, cmd.name()];
  return {
    name: cmd.name(),
    aliases: cmd.aliases(),
    path,
    usage: cmd.usage(),
    group: cmd.helpGroup(),
    description: help.commandDescription(cmd),
    options: help.visibleOptions(cmd).map((o) => optionNode(o, help)),
    arguments: help.visibleArguments(cmd).map((a) => ({ term: help.argumentTerm(a), description: help.argumentDescription(a) })),
    after: afterHelp(cmd),
    subcommands: help
      .visibleCommands(cmd)
      .filter((c) => c.name() !== 'help')
      .map((c) => commandTree(c, path)),
  };
}

function optionNode(o: Option, help: Help): OptionNode {
  return {
    flags: o.flags,
    names: [o.long, o.short].filter((n): n is string => Boolean(n)),
    takesValue: Boolean(o.required || o.optional),
    description: help.optionDescription(o),
  };
}

/**
 * The text `addHelpText('after', …)` gave a command (examples() in commands/shared.ts among
 * them): commander writes it from its 'afterHelp' event (a Command is an EventEmitter, which
 * its typings leave out), so the tree asks the same event.
 */
function afterHelp(cmd: Command): string {
  let text = '';
  (cmd as unknown as EventEmitter).emit('afterHelp', { error: false, command: cmd, write: (s: string) => void (text += s) });
  return text;
}
