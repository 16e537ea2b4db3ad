import { Command } from 'commander';
import { ServiceError } from '../../client/errors.js';
import { splitLongQuery } from '../../client/in-list.js';
import { compileQuery } from '../../grammar/compile.js';
import { renderPrefer } from '../../grammar/prefer.js';
import { parseContentRange } from '../../grammar/range.js';
import type { Row } from '../../format/types.js';
import type { TableDef } from '../../schema/catalog.js';
import type { Context } from '../context.js';
import { UsageError } from '../errors.js';
import { requireField } from '../flags/fields.js';
import { buildReadQuery } from '../flags/query.js';
import { writeRows } from '../output.js';
import { addFlags, type FlagRow, type FlagsOf } from './flag-table.js';
import { examples, pathOf, type ReadFlags } from './shared.js';

/** Every flag of `catalog <collection> count`, one row each: its commander chain and CountFlags come from it. */
export const COUNT_FLAGS = [
  { flag: 'by', short: 'b', value: 'field', help: 'count per value of this field (select=FIELD,count()), most first' },
  { flag: 'where', short: 'w', value: 'expr', repeatable: true, help: 'filter, as for list (repeat to AND)' },
  { flag: 'or', value: 'expr', repeatable: true, help: 'alternative filter (one or=() group)' },
] as const satisfies readonly FlagRow[];

/** The flags of `catalog <collection> count`, as commander parses them: one key per COUNT_FLAGS row. */
export type CountFlags = FlagsOf<typeof COUNT_FLAGS>;

export interface CountOptions extends CountFlags, ReadFlags {
  collection: string;
}

/** `catalog <collection> count [--by FIELD]`. */
export function defineCount(ctx: Context, table: TableDef): Command {
  const by = ['genre', 'label_id', 'city', 'country', 'name'].find((f) => table.columns.some((c) => c.name === f)) ?? 'created';
  const cmd = addFlags(new Command('count').description(`Count ${table.name} (matching the filters), or count them per value of a field with --by`), COUNT_FLAGS)
    .action(async (opts: CountFlags) => runCount({ ...opts, collection: table.name }, ctx));
  return examples(cmd, [
    `catalog ${table.name} count`,
    `catalog ${table.name} count --by ${by}`,
    `catalog ${table.name} count --by ${by} --where 'created>=-30d' -o csv`,
  ]);
}

/** Counts with `Prefer: count=exact` (HEAD), or per value with PostgREST 12's aggregates, sorted by count. */
export async function runCount(opts: CountOptions, ctx: Context): Promise<void> {
  const table = await ctx.table(opts.collection);
  const schema = await ctx.schema();
  if (opts.by === undefined) {
    const query = buildReadQuery({ where: opts.where, or: opts.or }, table, schema, ctx.removedFields(table.name), ctx.clock.now());
    // an in.() list too long for one URL is counted in parts, as list reads it (each value once, so the parts add up)
    const parts = splitLongQuery(query, compileQuery);
    let sum = 0;
    for (const part of parts) {
      const res = await ctx.send({ method: 'HEAD', path: pathOf(table), query: compileQuery(part), headers: { Prefer: renderPrefer({ count: 'exact' }) } });
      if (!res) return;
      const total = parseContentRange(res.headers['content-range'] ?? null)?.total;
      if (total === undefined) throw new Error(`the service gave no count for ${table.name} (no Content-Range total)`);
      sum += total;
    }
    await ctx.io.stdout.write(`${sum}\n`);
    if (sum === 0) {
      const { valueHints } = await import('./value-hints.js');
      for (const hint of await valueHints(query, table, schema, ctx)) await ctx.note(hint);
    }
    return;
  }
  requireField(table, opts.by, ctx.removedFields(table.name));
  const query = buildReadQuery({ where: opts.where, or: opts.or, select: `${opts.by},count()` }, table, schema, ctx.removedFields(table.name), ctx.clock.now());
  const res = await ctx.send({ method: 'GET', path: pathOf(table), query: compileQuery(query) }).catch((err: unknown) => {
    if (err instanceof ServiceError && err.code === 'PGRST123') {
      throw new UsageError(`this service does not count per value: ${err.message}`, 'it needs PostgREST 12 with db-aggregates-enabled (catalog serve has them on unless started with --aggregates off)');
    }
    throw err;
  });
  if (!res) return;
  const rows = (JSON.parse(res.body || '[]') as Row[]).sort((a, b) => Number(b.count) - Number(a.count) || String(a[opts.by!] ?? '').localeCompare(String(b[opts.by!] ?? '')));
  await writeRows(ctx, rows, { selected: true });
}

