import { compileQuery } from '../../grammar/compile.js';
import type { Query } from '../../grammar/types.js';
import type { Row } from '../../format/types.js';
import type { Context } from '../context.js';
import { NotFoundError, UsageError } from '../errors.js';
import { byId, checkQuery, parseFilters } from '../flags/query.js';
import type { TableDef } from '../../schema/model.js';
import { UUID_TEXT } from '../../schema/codecs.js';
import { pathOf, singularOf } from './shared.js';

const UUID_SHAPE = 'xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx';

/**
 * The hex digits of an id prefix (`3f2a9c1e`, `3F2A9C1E-8b1d`): at least 8, shorter than a whole
 * UUID, dashes only where a UUID has them. Null for anything else.
 * @example idPrefix('3f2a9c1e-8b') // '3f2a9c1e8b'
 */
export function idPrefix(text: string): string | null {
  if (text.length >= UUID_SHAPE.length || UUID_TEXT.test(text)) return null;
  for (let i = 0; i < text.length; i++) {
    const ok = UUID_SHAPE[i] === '-' ? text[i] === '-' : /[0-9a-f]/i.test(text[i]);
    if (!ok) return null;
  }
  const hex = text.replace(/-/g, '').toLowerCase();
  return hex.length >= 8 ? hex : null;
}

/** 32 hex digits written the way a UUID is. */
const asUuid = (hex: string) => `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;

/**
 * Every id that starts with the prefix lies between the prefix padded with 0s and padded with
 * fs: a range filter on the uuid column itself, which any PostgREST can run (no cast to text).
 */
function prefixQuery(pk: string, hex: string): Query {
  const bound = (op: 'gte' | 'lte', pad: string) => ({
    path: [],
    condition: { kind: 'filter' as const, field: { name: pk, jsonPath: [] }, negated: false, op, value: asUuid(hex.padEnd(32, pad)) },
  });
  return { select: [{ type: 'field', field: { name: pk, jsonPath: [] } }], where: [bound('gte', '0'), bound('lte', 'f')], order: [{ path: [], terms: [{ field: { name: pk, jsonPath: [] } }] }], page: [{ path: [], limit: 2 }] };
}

/** The whole id a prefix stands for: exit 1 when none matches, exit 2 when two or more do. Null on --dry-run. */
export async function resolvePrefix(table: TableDef, prefix: string, hex: string, ctx: Context): Promise<string | null> {
  const pk = table.primaryKey[0] ?? 'id';
  const res = await ctx.send({ method: 'GET', path: pathOf(table), query: compileQuery(prefixQuery(pk, hex)) });
  if (!res) return null;
  const ids = (JSON.parse(res.body || '[]') as Row[]).map((r) => String(r[pk]));
  if (ids.length === 0) throw new NotFoundError(`no ${singularOf(table.name)} in ${table.name} has an id starting ${prefix}`);
  if (ids.length > 1) throw new UsageError(`ambiguous id prefix ${prefix}, matches ${ids[0]} and ${ids[1]}`, 'give more of the id');
  return ids[0];
}


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
export async function targetQuery(flags: TargetFlags, table: TableDef, ctx: Context, verb: string): Promise<Query> {
  const hasWhere = (flags.where?.length ?? 0) > 0 || (flags.or?.length ?? 0) > 0;
  if (flags.id !== undefined && hasWhere) throw new UsageError(`give an id or --where, not both`);
  if (flags.id === undefined && !hasWhere && !flags.allRows) {
    throw new UsageError(
      `${verb} needs an id or --where (it refuses to ${verb} every row)`,
      `for example: catalog ${table.name} ${verb} <id> …, or --where 'name=Old Name'; pass --all-rows to really ${verb} every row`,
    );
  }
  if (flags.allRows && (flags.id !== undefined || hasWhere)) throw new UsageError('--all-rows does not combine with an id or --where');
  const id = flags.id === undefined ? undefined : await wholeId(table, flags.id, ctx);
  const where = id !== undefined ? [byId(table, id)] : parseFilters(flags.where, flags.or);
  return checkQuery({ where, order: [], page: [] }, table, await ctx.schema(), ctx.removedFields(table.name), ctx.clock.now());
}

/**
 * The id an update or remove names: a unique prefix (8+ hex digits, as tables and `get` show
 * ids) stands for the whole uuid it starts; anything else is passed on as given (checked there).
 */
async function wholeId(table: TableDef, id: string, ctx: Context): Promise<string> {
  const pk = table.columns.find((f) => f.name === (table.primaryKey[0] ?? 'id'));
  const hex = pk?.type === 'uuid' ? idPrefix(id.replace(/…$/, '')) : null;
  if (!hex) return id;
  return (await resolvePrefix(table, id, hex, ctx)) ?? id;
}
