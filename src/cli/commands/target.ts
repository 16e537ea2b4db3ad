import type { Query } from '../../grammar/types.js';
import type { Context } from '../context.js';
import { UsageError } from '../errors.js';
import { byId, checkQuery, parseFilters } from '../flags/query.js';
import type { TableInfo } from '../schema/model.js';

/** Which rows update/remove act on: one id, or --where filters, or (explicitly) every row. */
export interface TargetFlags {
  id?: string;
  where?: string[];
  or?: string[];
  allRows?: boolean;
}

/**
 * The filter of an update or remove. An id and --where do not mix; no filter at all is refused
 * unless --all-rows says so, because PostgREST would touch every row.
 */
export async function targetQuery(flags: TargetFlags, table: TableInfo, ctx: Context, verb: string): Promise<Query> {
  const hasWhere = (flags.where?.length ?? 0) > 0 || (flags.or?.length ?? 0) > 0;
  if (flags.id !== undefined && hasWhere) throw new UsageError(`give an id or --where, not both`);
  if (flags.id === undefined && !hasWhere && !flags.allRows) {
    throw new UsageError(
      `${verb} needs an id or --where (it refuses to ${verb} every row)`,
      `for example: catalog ${table.name} ${verb} <id> …, or --where 'name=Old Name'; pass --all-rows to really ${verb} every row`,
    );
  }
  if (flags.allRows && (flags.id !== undefined || hasWhere)) throw new UsageError('--all-rows does not combine with an id or --where');
  const where = flags.id !== undefined ? [byId(table, flags.id)] : parseFilters(flags.where, flags.or);
  return checkQuery({ where, order: [], page: [] }, table, await ctx.schema(), ctx.removedFields(table.name), ctx.clock.now());
}
