import { Command, CommanderError } from 'commander';
import { COLLECTIONS, REMOVED_COLLECTIONS, TABLES } from '../schema/catalog.js';
import { type CollectionExtension, defineCollection } from './commands/collection.js';
import { defineChangelog } from './commands/changelog.js';
import { defineCompletion } from './commands/completion.js';
import { defineConfig } from './commands/config.js';
import { defineExport } from './commands/export.js';
import { defineImport } from './commands/import.js';
import { defineSchema } from './commands/schema.js';
import { defineSeed } from './commands/seed.js';
import { defineServe } from './commands/serve.js';
import { defineToken } from './commands/token.js';
import type { Context } from './context.js';
import { describeError, EXIT, exitCodeFor, UsageError } from './errors.js';
import { addGlobalOptions } from './globals.js';
import { guide } from './guide.js';

export { systemContext } from './context.js';

const ROOT_HELP = `
Each collection has: list, get, add, update, remove, describe, import, export
(catalog <collection> <command> --help shows examples).

Exit codes:
  0  success
  1  the service answered with an error, or could not be reached
  2  usage error (unknown command, field or flag, bad value, missing --yes)
  3  partial import: some rows were rejected
  4  authentication or permission refused (HTTP 401/403)

Environment:
  CATALOG_URL, CATALOG_TOKEN, CATALOG_PROFILE, CATALOG_OUTPUT   defaults for --url, --token, --profile, -o
  CATALOG_DATA        the embedded catalog's directory (default $XDG_DATA_HOME/catalog)
  NO_COLOR, FORCE_COLOR
  Profiles live in $XDG_CONFIG_HOME/catalog/config.yaml:
    profiles:
      staging: { url: https://catalog.example.com, token: eyJ..., headers: { apikey: eyJ... } }

Examples:
  catalog artists list --where 'stage_name~*dj*' --order stage_name
  catalog releases list --select 'release_title,labels(name)' --all -o csv > releases.csv
  catalog --url https://catalog.example.com --token "$TOKEN" labels add name='Blue Note'
`;

/** The whole command tree: one command per collection (generated), plus schema, config, serve and seed. */
export function buildProgram(ctx: Context): Command {
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
  program.hook('preAction', () => ctx.setGlobals(program.opts()));

  const extensions: CollectionExtension[] = [defineImport, defineExport];

  const byName = [...TABLES].sort((a, b) => a.name.localeCompare(b.name));
  for (const table of byName) program.addCommand(defineCollection(ctx, table, extensions).helpGroup('Collections:'));
  const others = [
    defineSchema(ctx),
    defineConfig(ctx),
    defineServe(ctx),
    defineSeed(ctx),
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

/** Runs the command line (`argv` as process.argv) and returns the exit code. */
export async function run(argv: string[], ctx: Context): Promise<number> {
  const args = argv.slice(2);
  try {
    if (args.length === 0) {
      const url = ctx.env.CATALOG_URL;
      await ctx.io.stdout.write(guide(ctx.style('stdout'), ctx.paths.dataDir, url));
      return EXIT.ok;
    }
    const program = buildProgram(ctx);
    await program.parseAsync(args, { from: 'user' });
    return EXIT.ok;
  } catch (err) {
    // Commander has already printed its own errors (and help/version output).
    if (!(err instanceof CommanderError)) {
      const config = await ctx.config().catch(() => null);
      const lines = describeError(err, ctx.style(), { tokenGiven: Boolean(config?.token), verbose: ctx.globals.verbose });
      await ctx.io.stderr.write(`${lines.join('\n')}\n`);
    }
    return exitCodeFor(err);
  } finally {
    await ctx.close();
  }
}
