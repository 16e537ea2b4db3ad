import { Command } from 'commander';
import { compileQuery } from '../../grammar/compile.js';
import { parseSelect } from '../../grammar/parse.js';
import type { Query } from '../../grammar/types.js';
import type { TableDef } from '../../schema/catalog.js';
import type { Row } from '../../format/types.js';
import type { Context } from '../context.js';
import { NotFoundError, UsageError } from '../errors.js';
import { byId, checkQuery, parseFlag } from '../flags/query.js';
import { writeRows } from '../output.js';
import type { TableInfo } from '../schema/model.js';
import { examples, pathOf, singularOf, titleField } from './shared.js';

export interface GetOptions {
  collection: string;
  id: string;
  select?: string;
}

/** `catalog <collection> get <id>`. */
export function defineGet(ctx: Context, table: TableDef): Command {
  const cmd = new Command('get')
    .description(`Show one ${table.singular} by id, or by a unique id prefix (8+ hex digits)`)
    .argument('<id>', `the ${table.singular}'s id (a UUID, or a unique prefix of at least 8 hex digits)`)
    .option('-s, --select <cols>', 'fields and embeds to show (PostgREST select syntax)')
    .action(async (id: string, opts: { select?: string }) => runGet({ ...opts, id, collection: table.name }, ctx));
  const fk = table.columns.find((c) => c.foreignKey);
  return examples(cmd, [
    `catalog ${table.name} get 3f2a9c1e-8b1d-4e7a-9c55-0d6f1b2a4e10`,
    `catalog ${table.name} get 3f2a9c1e-8b1d-4e7a-9c55-0d6f1b2a4e10 -o json`,
    `catalog ${table.name} get 3f2a9c1e-8b1d-4e7a-9c55-0d6f1b2a4e10 --select '${titleField(table)}${fk ? `,${fk.foreignKey!.table}(name)` : ',created'}'`,
  ]);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const UUID_SHAPE = 'xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx';

/**
 * The hex digits of an id prefix (`3f2a9c1e`, `3F2A9C1E-8b1d`): at least 8, shorter than a whole
 * UUID, dashes only where a UUID has them. Null for anything else.
 * @example idPrefix('3f2a9c1e-8b') // '3f2a9c1e8b'
 */
export function idPrefix(text: string): string | null {
  if (text.length >= UUID_SHAPE.length || UUID.test(text)) return null;
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
async function resolvePrefix(table: TableInfo, prefix: string, hex: string, ctx: Context): Promise<string | null> {
  const pk = table.primaryKey[0] ?? 'id';
  const res = await ctx.send({ method: 'GET', path: pathOf(table), query: compileQuery(prefixQuery(pk, hex)) });
  if (!res) return null;
  const ids = (JSON.parse(res.body || '[]') as Row[]).map((r) => String(r[pk]));
  if (ids.length === 0) throw new NotFoundError(`no ${singularOf(table.name)} in ${table.name} has an id starting ${prefix}`);
  if (ids.length > 1) throw new UsageError(`ambiguous id prefix ${prefix}, matches ${ids[0]} and ${ids[1]}`, 'give more of the id');
  return ids[0];
}

/** Fetches one record; exit 1 with "not found" when there is none. */
export async function runGet(opts: GetOptions, ctx: Context): Promise<void> {
  const table = await ctx.table(opts.collection);
  const schema = await ctx.schema();
  const select = opts.select ? parseFlag('--select', opts.select, parseSelect) : undefined;
  const pkField = table.fields.find((f) => f.name === (table.primaryKey[0] ?? 'id'));
  const hex = pkField?.type === 'uuid' ? idPrefix(opts.id) : null;
  let id = opts.id;
  if (pkField?.type === 'uuid' && !hex && !UUID.test(id)) {
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
