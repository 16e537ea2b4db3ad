import { Command } from 'commander';
import { compileQuery } from '../../grammar/compile.js';
import { parseSelect } from '../../grammar/parse.js';
import type { TableDef } from '../../schema/catalog.js';
import type { Row } from '../../format/types.js';
import type { Context } from '../context.js';
import { NotFoundError } from '../errors.js';
import { byId, checkQuery, parseFlag } from '../flags/query.js';
import { writeRows } from '../output.js';
import { examples, pathOf, singularOf, titleField } from './shared.js';

export interface GetOptions {
  collection: string;
  id: string;
  select?: string;
}

/** `catalog <collection> get <id>`. */
export function defineGet(ctx: Context, table: TableDef): Command {
  const cmd = new Command('get')
    .description(`Show one ${table.singular} by id`)
    .argument('<id>', `the ${table.singular}'s id (a UUID)`)
    .option('-s, --select <cols>', 'fields and embeds to show (PostgREST select syntax)')
    .action(async (id: string, opts: { select?: string }) => runGet({ ...opts, id, collection: table.name }, ctx));
  const fk = table.columns.find((c) => c.foreignKey);
  return examples(cmd, [
    `catalog ${table.name} get 3f2a9c1e-8b1d-4e7a-9c55-0d6f1b2a4e10`,
    `catalog ${table.name} get 3f2a9c1e-8b1d-4e7a-9c55-0d6f1b2a4e10 -o json`,
    `catalog ${table.name} get 3f2a9c1e-8b1d-4e7a-9c55-0d6f1b2a4e10 --select '${titleField(table)}${fk ? `,${fk.foreignKey!.table}(name)` : ',created'}'`,
  ]);
}

/** Fetches one record; exit 1 with "not found" when there is none. */
export async function runGet(opts: GetOptions, ctx: Context): Promise<void> {
  const table = await ctx.table(opts.collection);
  const schema = await ctx.schema();
  const select = opts.select ? parseFlag('--select', opts.select, parseSelect) : undefined;
  const query = checkQuery({ ...(select ? { select } : {}), where: [byId(table, opts.id)], order: [], page: [] }, table, schema, ctx.removedFields(table.name));
  const res = await ctx.send({ method: 'GET', path: pathOf(table), query: compileQuery(query) });
  if (!res) return;
  const rows = JSON.parse(res.body || '[]') as Row[];
  if (rows.length === 0) throw new NotFoundError(`${singularOf(table.name)} ${opts.id} not found in ${table.name}`);
  await writeRows(ctx, rows.slice(0, 1), { table, selected: select !== undefined, single: true });
}
