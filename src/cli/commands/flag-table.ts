import { type Command, Option } from 'commander';

// One table per command (issue 39 item 2): a command lists its flags as rows, and both its
// commander chain (addFlags) and its flags' type (FlagsOf) come from them. Defaults that --help
// shows are rendered from the constants the code applies, never restated.

/** One flag of a command: how it is spelled, what it takes, what --help says, and its default. */
export interface FlagRow {
  /** The long flag without `--`; its camel-case form is the key in FlagsOf. */
  readonly flag: string;
  /** One-letter short flag, without `-`. */
  readonly short?: string;
  /** The value's name in --help (`--batch-size <rows>`); none for a switch. */
  readonly value?: string;
  /** The value may be left out (`--check [level]`: true when it is). */
  readonly optional?: boolean;
  /** Repeatable: every value given, in order. */
  readonly repeatable?: boolean;
  /** The values commander accepts; the flag's type is their union. */
  readonly choices?: readonly string[];
  readonly help: string;
  /** What --help says the default is: the code's own constant, rendered here (never restated). */
  readonly fallback?: string;
  /** A default commander fills in when the flag is not given. */
  readonly preset?: string;
  /** Commander refuses the command line without it (requiredOption). */
  readonly required?: boolean;
  /** The `--no-<flag>` switch: sets the flag's key to false (beside a `--<flag>` row, undefined when neither is given). */
  readonly negate?: boolean;
}

/** Collects a repeatable option's values. */
export const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/** `batch-size` → `batchSize`, as commander names an option's value. */
export type Camel<S extends string> = S extends `${infer H}-${infer T}` ? `${H}${Capitalize<Camel<T>>}` : S;

/** What commander hands over for a row: a list, a string (one of its choices) or true, or a switch's boolean. */
export type FlagValue<R> =
  R extends { repeatable: true } ? string[]
  : R extends { optional: true } ? boolean | string
  : R extends { choices: readonly (infer C)[] } ? C
  : R extends { value: string } ? string
  : boolean;

/** A table's flags as commander parses them: one key per row, required only for a `required` row. */
export type FlagsOf<Rows extends readonly FlagRow[]> = {
  -readonly [R in Rows[number] as R extends { required: true } ? never : Camel<R['flag']>]?: FlagValue<R>;
} & {
  -readonly [R in Rows[number] as R extends { required: true } ? Camel<R['flag']> : never]: FlagValue<R>;
};

/**
 * A row's commander option, its help ending with the default the row names.
 * @example flagOption({ flag: 'limit', short: 'l', value: 'n', help: 'at most N rows' }).flags // '-l, --limit <n>'
 */
export function flagOption(row: FlagRow): Option {
  const value = row.value === undefined ? '' : row.optional ? ` [${row.value}]` : ` <${row.value}>`;
  const help = row.fallback === undefined ? row.help : `${row.help} (default: ${row.fallback})`;
  const option = new Option(`${row.short ? `-${row.short}, ` : ''}--${row.negate ? 'no-' : ''}${row.flag}${value}`, help);
  if (row.choices) option.choices(row.choices);
  if (row.preset !== undefined) option.default(row.preset);
  if (row.repeatable) option.argParser(collect);
  if (row.required) option.makeOptionMandatory();
  return option;
}

/** Adds one option per row of a table to the command, in the table's order. */
export function addFlags(cmd: Command, rows: readonly FlagRow[]): Command {
  for (const row of rows) cmd.addOption(flagOption(row));
  return cmd;
}
