import { Command } from 'commander';
import type { TableDef } from '../../schema/catalog.js';
import type { Context } from '../context.js';
import { collectionDescription, examples, placeholder, titleField } from './shared.js';

type DefineVerb = (ctx: Context, table: TableDef) => Command;

/** The interactive flow of add or update, loaded only when `--interactive` is given. */
function interactive(verb: 'add' | 'update') {
  return async (opts: Record<string, unknown>, ctx: Context): Promise<void> => {
    const flow = await import('./interactive.js');
    if (verb === 'add') await flow.runInteractiveAdd(opts as unknown as Parameters<typeof flow.runInteractiveAdd>[0], ctx);
    else await flow.runInteractiveUpdate(opts as unknown as Parameters<typeof flow.runInteractiveUpdate>[0], ctx);
  };
}

/**
 * The verbs of every collection, in the order help lists them, each with its aliases and its
 * module (loaded only when the verb is built: a command line that names one verb loads one).
 */
export const VERBS: ReadonlyArray<{ name: string; aliases: readonly string[]; load: () => Promise<DefineVerb> }> = [
  { name: 'list', aliases: ['ls'], load: async () => (await import('./list.js')).defineList },
  { name: 'get', aliases: [], load: async () => (await import('./get.js')).defineGet },
  // `--interactive` is handed in here: the interactive flow calls into add/update, never the other way
  { name: 'add', aliases: [], load: async () => { const { defineAdd } = await import('./add.js'); return (ctx, table) => defineAdd(ctx, table, interactive('add')); } },
  { name: 'update', aliases: [], load: async () => { const { defineUpdate } = await import('./update.js'); return (ctx, table) => defineUpdate(ctx, table, interactive('update')); } },
  { name: 'remove', aliases: ['rm'], load: async () => (await import('./remove.js')).defineRemove },
  { name: 'describe', aliases: [], load: async () => (await import('./describe.js')).defineDescribe },
  { name: 'import', aliases: [], load: async () => (await import('./import.js')).defineImport },
  { name: 'export', aliases: [], load: async () => (await import('./export.js')).defineExport },
  { name: 'count', aliases: [], load: async () => (await import('./count.js')).defineCount },
];

/** The verb a word names (its name or an alias), or undefined. */
export function verbNamed(word: string | undefined): string | undefined {
  return VERBS.find((v) => v.name === word || v.aliases.includes(word ?? ''))?.name;
}

/**
 * `catalog <collection>` with its verbs, generated from the table description. With `only`, that
 * verb is built and the others are placeholders (fine while the collection's own help is not shown).
 */
export async function defineCollection(ctx: Context, table: TableDef, only?: string): Promise<Command> {
  const cmd = new Command(table.name).description(collectionDescription(table));
  const verbs = await Promise.all(VERBS.map(async (v) => (only === undefined || v.name === only ? (await v.load())(ctx, table) : placeholder(new Command(v.name)))));
  for (const verb of verbs) cmd.addCommand(verb);
  const title = titleField(table);
  return examples(cmd, [
    `catalog ${table.name} list --where '${title}~*love*' --order ${title} --limit 20`,
    `catalog ${table.name} add ${title}='Example'`,
    `catalog ${table.name} export ${table.name}.csv`,
  ]);
}
