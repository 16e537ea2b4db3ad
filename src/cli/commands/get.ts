import { Command } from 'commander';
import { compileQuery } from '../../grammar/compile.js';
import { parseSelect } from '../../grammar/parse.js';
import type { Row } from '../../format/types.js';
import type { Context } from '../context.js';
import { NotFoundError, UsageError } from '../errors.js';
import { byId, checkQuery, parseFlag } from '../flags/query.js';
import { writeRows } from '../output.js';
import type { TableDef } from '../../schema/model.js';
import { addFlags, type FlagRow, type FlagsOf } from './flag-table.js';
import { examples, pathOf, singularOf, titleField } from './shared.js';
import { idPrefix, resolvePrefix } from './target.js';
import { isUuid } from '../../schema/codecs.js';

/** Every flag of `catalog <collection> get`, one row each: its commander chain and GetFlags come from it. */
export const GET_FLAGS = [
  { flag: 'select', short: 's', value: 'cols', help: 'fields and embeds to show (PostgREST select syntax)' },
] as const satisfies readonly FlagRow[];

/** The flags of `catalog <collection> get`, as commander parses them: one key per GET_FLAGS row. */
export type GetFlags = FlagsOf<typeof GET_FLAGS>;

export interface GetOptions extends GetFlags {
  collection: string;
  id: string;
}

/** `catalog <collection> get <id>`. */
export function defineGet(ctx: Context, table: TableDef): Command {
  const cmd = addFlags(
    new Command('get')
      .description(`Show one ${table.singular} by id, or by a unique id prefix (8+ hex digits)`)
      .argument('<id>', `the ${table.singular}'s id (a UUID, or a unique prefix of at least 8 hex digits)`),
    GET_FLAGS,
  ).action(async (id: string, opts: GetFlags) => runGet({ ...opts, id, collection: table.name }, ctx));
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
  const pkField = table.columns.find((f) => f.name === (table.primaryKey[0] ?? 'id'));
  const hex = pkField?.type === 'uuid' ? idPrefix(opts.id) : null;
  let id = opts.id;
  if (pkField?.type === 'uuid' && !hex && !isUuid(id)) {
    throw new UsageError(`bad value for ${pkField.name} (uuid): '${id}'`, 'expected a UUID such as 3f2a9c1e-8b1d-4e7a-9c55-0d6f1b2a4e10, or a unique prefix of at least 8 hex digits (3f2a9c1e)');
  }
  if (hex) {
    // Check the select before the first request, so a mistake there costs nothing.
    checkQuery({ ...(select ? { select } : {}), where: [], order: [], page: [] }, table, schema, ctx.removedFields(table.name));
    const whole = await resolvePrefix(table, opts.id, hex, ctx);
    if (whole === null) return;
    id = whole;
  }
  const query = checkQuery({ ...(select ? { select } : {}), where: [byId(table, id)], order: [], page: [] }, table, schema, ctx.removedFields(table.name));
  const res = await ctx.send({ method: 'GET', path: pathOf(table), query: compileQuery(query) });
  if (!res) return;
  const rows = JSON.parse(res.body || '[]') as Row[];
  if (rows.length === 0) throw new NotFoundError(`${singularOf(table.name)} ${opts.id} not found in ${table.name}`);
  await writeRows(ctx, rows.slice(0, 1), { table, selected: select !== undefined, single: true, select: query.select });
}
