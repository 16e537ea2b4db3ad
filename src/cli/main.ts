import { Command, CommanderError } from 'commander';
import { COLLECTIONS, REMOVED_COLLECTIONS, type TableDef, TABLES } from '../schema/catalog.js';
import { defineChangelog } from './commands/changelog.js';
import { defineChanges } from './commands/changes.js';
import { defineCheck } from './commands/check.js';
import { defineCollection, verbNamed } from './commands/collection.js';
import { defineCompletion } from './commands/completion.js';
import { defineConfig } from './commands/config.js';
import { defineSchema } from './commands/schema.js';
import { defineSeed } from './commands/seed.js';
import { defineImportDir } from './commands/import-dir.js';
import { defineServe } from './commands/serve.js';
import { collectionDescription, NeedsWholeTree, placeholder, settlePlaceholders } from './commands/shared.js';
import { defineToken } from './commands/token.js';
import type { Context } from './context.js';
import { describeError, EXIT, exitCodeFor, UsageError } from './errors.js';
import { loadHolder } from './embedded.js';
import { addGlobalOptions, GLOBAL_OPTIONS } from './globals.js';
import { guide } from './guide.js';
import { HandBack } from '../holder/hand-back.js';

export { systemContext } from './context.js';

/**
 * For the bundle's entry (scripts/bundle.mjs): whether this process changed a V8 flag (a command
 * that opened the embedded catalog, a background holder), so that a code cache made now would be
 * refused by the next process.
 */
export async function v8FlagsChanged(): Promise<boolean> {
  return (await loadHolder()).v8FlagsChanged();
}

const ROOT_HELP = `
Each collection has: list, get, add, update, remove, describe, import, export, count
(catalog <collection> <command> --help shows examples).

Exit codes:
  0  success
  1  the service answered with an error, or could not be reached
  2  usage error or bad input (unknown command, field or flag, bad value, missing --yes,
     a --url that is not http(s), a malformed file or a record over 64 MiB)
  3  partial import: some rows were rejected
  4  authentication or permission refused (HTTP 401/403)
  5  catalog check found problems at or above --fail-on

Environment:
  CATALOG_URL, CATALOG_TOKEN, CATALOG_PROFILE, CATALOG_OUTPUT   defaults for --url, --token, --profile, -o
  CATALOG_DATA        the embedded catalog's directory (default $XDG_DATA_HOME/catalog)
  CATALOG_KEEP_WARM   seconds a background holder keeps it open after the last command (default 300; 0: none)
  NO_COLOR, FORCE_COLOR
  Profiles live in $XDG_CONFIG_HOME/catalog/config.yaml:
    profiles:
      staging: { url: https://catalog.example.com, token: eyJ..., headers: { apikey: eyJ... } }

Examples:
  catalog artists list --where 'stage_name~*dj*' --order stage_name
  catalog releases list --select 'release_title,labels(name)' --all -o csv > releases.csv
  catalog --url https://catalog.example.com --token "$TOKEN" labels add name='Blue Note'
`;

/** The commands that walk or print the whole tree: they always get every collection built. */
const WHOLE_TREE = new Set(['completion', 'help']);

/** The commands besides the collections (their modules are light, so they are always built). */
const OTHER_COMMANDS = ['import', 'check', 'schema', 'config', 'serve', 'seed', 'changes', 'changelog', 'token', 'completion'];

/** Commands that move many rows (and `list --all`): see Context.bulk. */
const BULK_COMMANDS = new Set(['import', 'export', 'seed', 'check']);

/** Global options that take a value in the next word (`--url URL`), as opposed to flags. */
const VALUE_OPTIONS = new Set(GLOBAL_OPTIONS.filter((o) => o.flags.includes('<')).flatMap((o) => o.flags.split(/[ ,]+/).filter((w) => w.startsWith('-'))));

/** What a command line needs built: see commandFocus. */
export type Focus = 'all' | { collection: string | null; verb: string | null };

/**
 * What of the tree a command line needs built in full: one collection (and of it one verb, when
 * the line names one and asks for no help), no collection when it names another command (or none:
 * `catalog --help`), or everything when it is unclear, asks for `help` or `completion`, or names
 * no known command.
 * @example commandFocus(['--url', 'http://h', 'labels', 'ls']) // { collection: 'labels', verb: 'list' }
 */
export function commandFocus(args: string[]): Focus {
  const { words, rest } = operands(args);
  const [first, second] = words;
  if (first === undefined) return rest ? 'all' : { collection: null, verb: null };
  if (TABLES.some((t) => t.name === first)) {
    const help = args.some((a) => a === '-h' || a === '--help');
    return { collection: first, verb: help || rest ? null : verbNamed(second) ?? null };
  }
  if (WHOLE_TREE.has(first) || !OTHER_COMMANDS.includes(first)) return 'all';
  return { collection: null, verb: null };
}

/**
 * The words of a command line that are not options or option values (as far as the global
 * options tell), and whether a `--` cut the scan short.
 * @example operands(['-o', 'json', 'labels', 'list', '--limit', '5']) // { words: ['labels', 'list', '5'], rest: false }
 */
function operands(args: string[]): { words: string[]; rest: boolean } {
  const words: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--') return { words, rest: true };
    if (a.startsWith('-') && a.length > 1) {
      if (VALUE_OPTIONS.has(a)) i++;
      continue;
    }
    words.push(a);
  }
  return { words, rest: false };
}

/** Verbs and commands that send requests (so, without --url, open the embedded catalog). */
const SENDING = new Set(['list', 'get', 'add', 'update', 'remove', 'import', 'export', 'seed', 'schema', 'check', 'changes']);

/**
 * Whether the command line will most likely send requests, and whether it is a bulk command:
 * a guess from the words alone (see Context.warmUpEmbedded), null when it will not or when unsure.
 * @example sendsRequests(['labels', 'list']) // { bulk: false }
 */
export function sendsRequests(args: string[]): { bulk: boolean } | null {
  if (args.some((a) => a === '-h' || a === '--help' || a === '--dry-run' || a === '--url' || a.startsWith('--url=') || a === '--profile' || a.startsWith('--profile='))) return null;
  const { words } = operands(args);
  const [first, second] = words;
  const verb = TABLES.some((t) => t.name === first) ? verbNamed(second) : first === 'seed' || first === 'import' || first === 'schema' || first === 'check' || first === 'changes' ? first : undefined;
  const all = verb === 'list' && args.some((a) => a === '--all' || a === '-a');
  return verb !== undefined && SENDING.has(verb) ? { bulk: BULK_COMMANDS.has(verb) || all } : null;
}

/**
 * A collection only the service describes, when the command line's first word names one (and no
 * command of the binary): `catalog studios export studios.csv` against a service that has
 * `/studios`. Asked of the service (its description, cached per URL) only for such a word and
 * only when a URL is configured: the embedded catalog's collections are the compiled ones.
 */
async function serviceCollection(ctx: Context, args: string[]): Promise<TableDef | null> {
  const [first] = operands(args).words;
  if (first === undefined || !/^[a-z_][a-z0-9_]*$/.test(first) || TABLES.some((t) => t.name === first) || OTHER_COMMANDS.includes(first) || WHOLE_TREE.has(first)) return null;
  // the global options first (--url, --profile, -o …): the configuration they settle is read once
  const globals = addGlobalOptions(new Command()).allowUnknownOption().allowExcessArguments().argument('[words...]').helpOption(false).exitOverride();
  try {
    globals.configureOutput({ writeOut: () => {}, writeErr: () => {} }).parse(args, { from: 'user' });
  } catch {
    return null; // commander's own error comes with the real parse
  }
  ctx.setGlobals(globals.opts());
  if (!(await ctx.config()).url) return null;
  const model = await ctx.schema().catch(() => null);
  return model?.tables.get(first) ?? null;
}

/**
 * A collection not used by this command line: what the root help shows of it (name and
 * description), and nothing else.
 */
function collectionPlaceholder(table: TableDef): Command {
  return placeholder(new Command(table.name).description(collectionDescription(table)));
}

/**
 * The command tree: one command per collection (generated), plus check, schema, config, serve, seed,
 * changes, changelog, token and completion. Given the command line, only the collection it uses is built
 * in full (the others are placeholders that show the same in the root help); without, all are.
 */
export async function buildProgram(ctx: Context, args?: string[]): Promise<Command> {
  const focus: Focus = args ? commandFocus(args) : 'all';
  const program = addGlobalOptions(new Command('catalog'))
    .description('Administer the music catalog: artists, releases, tracks, labels, genres, subgenres, countries, languages')
    .version(ctx.version, '-V, --version')
    .showSuggestionAfterError(true)
    .configureHelp({ showGlobalOptions: true, sortSubcommands: false })
    .addHelpText('after', ROOT_HELP)
    .exitOverride()
    .configureOutput({
      writeOut: (s) => void ctx.io.stdout.write(s),
      writeErr: (s) => void ctx.io.stderr.write(s),
      outputError: (s, write) => write(s.replace(/^error:/, ctx.style().red('error:'))),
    });
  program.hook('preAction', (_root, action) => {
    ctx.setGlobals(program.opts());
    ctx.bulk = BULK_COMMANDS.has(action.name()) || (action.name() === 'list' && Boolean(action.opts().all));
    return ctx.handedOver ? holderMayRun(ctx, program, action) : undefined;
  });

  // Plain comparison: names are lower-case ASCII, and localeCompare's first call costs ~10 ms of ICU set-up.
  const byName = [...TABLES].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const table of byName) {
    const cmd =
      focus === 'all' ? await defineCollection(ctx, table)
      : focus.collection === table.name ? await defineCollection(ctx, table, focus.verb ?? undefined)
      : collectionPlaceholder(table);
    program.addCommand(cmd.helpGroup('Collections:'));
  }
  const extra = focus === 'all' && args ? await serviceCollection(ctx, args) : null;
  if (extra) program.addCommand((await defineCollection(ctx, extra)).helpGroup('Collections:'));
  const others = [
    defineCheck(ctx),
    defineSchema(ctx),
    defineConfig(ctx),
    defineServe(ctx),
    defineImportDir(ctx),
    defineSeed(ctx),
    defineChanges(ctx),
    defineChangelog(ctx),
    defineToken(ctx),
    defineCompletion(ctx),
  ];
  for (const cmd of others) program.addCommand(cmd.helpGroup('Other commands:'));
  // Subcommands added with addCommand do not inherit: give them the root's output, error and help settings.
  const inherit = (cmd: Command) => {
    for (const sub of cmd.commands) {
      sub.copyInheritedSettings(cmd);
      inherit(sub);
    }
  };
  inherit(program);
  settlePlaceholders(program);
  for (const name of REMOVED_COLLECTIONS) {
    const removed = new Command(name).copyInheritedSettings(program).allowUnknownOption().allowExcessArguments().helpOption(false);
    program.addCommand(
      removed.action(() => {
        throw new UsageError(`the /${name} collection was removed in interface 12.2.3`, `collections: ${COLLECTIONS.join(', ')}`);
      }),
      { hidden: true },
    );
  }
  return program;
}

/**
 * What the background holder runs for a thin client (src/holder/door.ts): reading commands of a
 * collection (`list` without --all, `get`, `count`), which never prompt, page, read stdin or a file,
 * or write anything but their output. Everything else the client runs itself.
 */
const HANDED_OVER_VERBS = new Set(['list', 'get', 'count']);

/**
 * Longer command lines are handed back: a key list too long for one URL is read in parts as
 * `--all` reads (which bounds this process's heap growth, and pages on a terminal); a compiled query
 * is at most ~9 characters per character of its words (percent-encoded UTF-8).
 */
const HANDED_OVER_MAX_CHARS = 400;

/**
 * Runs a command line a thin client handed to the background holder, in a context that writes to
 * the client (see HANDED_OVER_VERBS); throws HandBack, before anything is written, for any other.
 * Help, version and completion output are handed back before parsing (commander sizes them by this
 * process's own stdout); the rest is decided once the line is parsed (holderMayRun).
 */
export async function runHandedOver(args: string[], ctx: Context): Promise<number> {
  const { words, rest } = operands(args);
  const [first, second] = words;
  const quick =
    !rest &&
    args.join(' ').length <= HANDED_OVER_MAX_CHARS &&
    !args.some((a) => a === '-h' || a === '--help' || a === '-V' || a === '--version') &&
    TABLES.some((t) => t.name === first) &&
    HANDED_OVER_VERBS.has(verbNamed(second) ?? '');
  if (!quick) throw new HandBack('not a command the holder runs');
  return run(['node', 'catalog', ...args], ctx);
}

/** Throws HandBack unless the parsed command is one the holder runs for a thin client, against the embedded catalog. */
async function holderMayRun(ctx: Context, program: Command, action: Command): Promise<void> {
  const collection = action.parent;
  const served = collection?.parent === program && TABLES.some((t) => t.name === collection.name()) && HANDED_OVER_VERBS.has(action.name()) && !ctx.bulk;
  const { url, profile, dryRun } = ctx.globals;
  if (!served || url !== undefined || profile !== undefined || dryRun) throw new HandBack('not a command the holder runs');
  const config = await ctx.config().catch(() => null);
  if (!config || config.url) throw new HandBack('a service other than the embedded catalog');
}

/** Runs the command line (`argv` as process.argv) and returns the exit code. */
export async function run(argv: string[], ctx: Context): Promise<number> {
  const args = argv.slice(2);
  try {
    if (args.length === 0) {
      const url = ctx.env.CATALOG_URL;
      await ctx.io.stdout.write(guide(ctx.style('stdout'), ctx.paths.dataDir, url));
      return EXIT.ok;
    }
    const sends = sendsRequests(args);
    if (sends) ctx.warmUpEmbedded(sends.bulk);
    try {
      await (await buildProgram(ctx, args)).parseAsync(args, { from: 'user' });
    } catch (err) {
      if (!(err instanceof NeedsWholeTree)) throw err;
      await (await buildProgram(ctx)).parseAsync(args, { from: 'user' });
    }
    return EXIT.ok;
  } catch (err) {
    // the background holder's door runs the command in the client instead (nothing was written)
    if (err instanceof HandBack) throw err;
    // Commander has already printed its own errors (and help/version output).
    if (!(err instanceof CommanderError)) {
      const config = await ctx.config().catch(() => null);
      const lines = describeError(err, ctx.style(), { tokenGiven: Boolean(config?.token), verbose: ctx.globals.verbose });
      await ctx.io.stderr.write(`${lines.join('\n')}\n`);
    }
    return exitCodeFor(err);
  } finally {
    // a command the background holder runs for a thin client is done once its output is: the
    // client may exit while this process closes the command's connections to itself
    if (ctx.handedOver) void ctx.close();
    else await ctx.close();
  }
}
