import { Command } from 'commander';
import { addFlags, type FlagRow } from './flag-table.js';
import { examples } from './shared.js';

/** A command that writes records from FIELD=VALUE pairs (`add`, `update`): what its definition names. */
export interface RecordCommandSpec<Flags> {
  name: string;
  description: string;
  /** The positional argument: its spelling in --help and what --help says of it. */
  argument: readonly [spec: string, help: string];
  flags: readonly FlagRow[];
  action: (args: string[], opts: Flags) => Promise<void>;
  /** The command lines --help shows after its options. */
  examples: string[];
}

/** The commander command of `add` or `update`: its argument, its flag table's options, its action and its examples, in that order. */
export function defineRecordCommand<Flags>(spec: RecordCommandSpec<Flags>): Command {
  const cmd = addFlags(new Command(spec.name).description(spec.description).argument(spec.argument[0], spec.argument[1]), spec.flags).action(spec.action);
  return examples(cmd, spec.examples);
}
