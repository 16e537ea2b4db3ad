import { Command } from 'commander';
import { compileQuery } from '../../grammar/compile.js';
import { renderPrefer } from '../../grammar/prefer.js';
import { parseContentRange, renderRange } from '../../grammar/range.js';
import type { Query } from '../../grammar/types.js';
import type { TableDef } from '../../schema/catalog.js';
import type { Row } from '../../format/types.js';
import { startSpinner } from '../../io/spinner.js';
import type { Context } from '../context.js';
import { UsageError } from '../errors.js';
import { buildReadQuery, count, type ReadFlags } from '../flags/query.js';
import { outputFormat, plural, writeRows } from '../output.js';
import { addReadFlags, examples, pathOf, titleField } from './shared.js';

export interface ListOptions extends ReadFlags {
  collection: string;
  all?: boolean;
  count?: boolean;
  pageSize?: string;
}

const DEFAULT_PAGE = 1000;

/** `catalog <collection> list`. */
export function defineList(ctx: Context, table: TableDef): Command {
  const title = titleField(table);
  const cmd = addReadFlags(new Command('list').description(`List ${table.name}, filtered, sorted and paged`))
    .alias('ls')
    .option('-a, --all', 'every matching row, read page by page (one JSON array across pages)')
    .option('--page-size <n>', `rows per request with --all (default ${DEFAULT_PAGE})`)
    .option('-c, --count', 'also count every matching row ("N of M" on stderr)')
    .action(async (opts: Omit<ListOptions, 'collection'>) => runList({ ...opts, collection: table.name }, ctx));
  const fk = table.columns.find((c) => c.foreignKey);
  return examples(cmd, [
    `catalog ${table.name} list --where '${title}~*blue*' --order ${title} --limit 20`,
    fk
      ? `catalog ${table.name} list --select '${title},${fk.foreignKey!.table}(name)' --where '${fk.foreignKey!.table}.name=Bass Culture'`
      : `catalog ${table.name} list --where 'created>=-30d' --count`,
    `catalog ${table.name} list --all -o csv > ${table.name}.csv`,
  ]);
}

/** Adds `order=<primary key>` when paging without an order, so pages neither skip nor repeat rows. */
function stableOrder(q: Query, pk: string[]): Query {
  if (q.order.some((o) => o.path.length === 0) || pk.length === 0) return q;
  return { ...q, order: [...q.order, { path: [], terms: pk.map((name) => ({ field: { name, jsonPath: [] } })) }] };
}

/** Reads rows: one request, or every page with --all; prints them and the count. */
export async function runList(opts: ListOptions, ctx: Context): Promise<void> {
  const table = await ctx.table(opts.collection);
  const schema = await ctx.schema();
  if (opts.all && opts.limit !== undefined) {
    throw new UsageError('--all reads every row; it does not combine with --limit', 'use --page-size to change how many rows each request reads');
  }
  let query = buildReadQuery(opts, table, schema, ctx.removedFields(table.name), ctx.clock.now());
  const pageSize = count('--page-size', opts.pageSize) ?? DEFAULT_PAGE;
  if (pageSize === 0) throw new UsageError('--page-size must be at least 1');
  const path = pathOf(table);
  const selected = query.select !== undefined;

  if (opts.all) {
    query = stableOrder(query, table.primaryKey);
    const offset = query.page[0]?.offset ?? 0;
    const base = { method: 'GET', path, query: compileQuery({ ...query, page: [] }) };
    if (ctx.dryRun) {
      await ctx.send({ ...base, headers: { Prefer: renderPrefer({ count: 'exact' }), Range: renderRange({ from: offset, to: offset + pageSize - 1 }) } });
      return;
    }
    const { client } = await ctx.endpoint();
    const { pages } = await import('../../client/paging.js');
    let total: number | null = null;
    // A spinner only when it cannot tangle with rows streaming to the same terminal.
    const quietTerminal = !ctx.io.stdout.isTTY || (await outputFormat(ctx)) === 'table';
    const spinner = quietTerminal && !ctx.globals.quiet ? startSpinner(ctx.io.stderr, `Reading ${table.name}…`) : { update() {}, stop() {} };
    async function* rows(): AsyncGenerator<Row> {
      let read = 0;
      for await (const page of pages(client, base, pageSize, offset)) {
        total = page.total;
        read += page.rows.length;
        spinner.update(`Reading ${table.name}: ${read}${total === null ? '' : ` of ${total}`}`);
        yield* page.rows;
      }
    }
    let n: number;
    try {
      n = await writeRows(ctx, rows(), { table, selected, select: query.select });
    } finally {
      spinner.stop();
    }
    await reportCount(ctx, opts, n, total, table.name);
    return;
  }

  const headers: Record<string, string> = {};
  if (opts.count) headers.Prefer = renderPrefer({ count: 'exact' });
  const res = await ctx.send({ method: 'GET', path, query: compileQuery(query), headers });
  if (!res) return;
  const rows = JSON.parse(res.body || '[]') as Row[];
  const total = parseContentRange(res.headers['content-range'] ?? null)?.total ?? null;
  const n = await writeRows(ctx, rows, { table, selected, select: query.select });
  await reportCount(ctx, opts, n, total, table.name);
}

async function reportCount(ctx: Context, opts: ListOptions, shown: number, total: number | null, name: string): Promise<void> {
  if (opts.count && total !== null) await ctx.note(`${shown} of ${total} ${name}`);
  else if (shown === 0 && ctx.io.stderr.isTTY) await ctx.note(ctx.style().dim(`no ${name} match`));
  else if (opts.all && ctx.io.stderr.isTTY) await ctx.note(ctx.style().dim(plural(shown, 'row', 'rows')));
}
