import { Command } from 'commander';
import { MAX_QUERY_CHARS } from '../../client/in-list.js';
import { compileQuery } from '../../grammar/compile.js';
import { renderPrefer } from '../../grammar/prefer.js';
import { parseContentRange, renderRange } from '../../grammar/range.js';
import type { Query } from '../../grammar/types.js';
import type { TableDef } from '../../schema/catalog.js';
import type { PageWriter, Row, TextSink } from '../../format/types.js';
import { startSpinner } from '../../io/spinner.js';
import type { Context } from '../context.js';
import { UsageError } from '../errors.js';
import { buildReadQuery, count } from '../flags/query.js';
import { commandWriter, outputFormat, plural, writeRows } from '../output.js';
import { addFlags, type FlagRow, type FlagsOf } from './flag-table.js';
import { addReadFlags, examples, pathOf, titleField, type ReadFlags } from './shared.js';

/** Rows per request with --all unless --page-size says otherwise. */
export const DEFAULT_PAGE = 1000;

/** List's own flags, one row each (the read flags come from READ_FLAGS): its commander chain and ListFlags come from them. */
export const LIST_FLAGS = [
  {
    flag: 'all',
    short: 'a',
    help: 'every matching row, read page by page: on a terminal a table through $PAGER (less -SR by default), piped one JSON array across pages (or -o csv, ndjson, …)',
  },
  { flag: 'page-size', value: 'n', help: 'rows per request with --all', fallback: String(DEFAULT_PAGE) },
  { flag: 'count', short: 'c', help: 'also count every matching row ("N of M" on stderr)' },
] as const satisfies readonly FlagRow[];

/** The flags of `catalog <collection> list`, as commander parses them: READ_FLAGS and LIST_FLAGS. */
export type ListFlags = ReadFlags & FlagsOf<typeof LIST_FLAGS>;

export interface ListOptions extends ListFlags {
  collection: string;
}

/** `catalog <collection> list`. */
export function defineList(ctx: Context, table: TableDef): Command {
  const title = titleField(table);
  const cmd = addFlags(addReadFlags(new Command('list').description(`List ${table.name}, filtered, sorted and paged`)).alias('ls'), LIST_FLAGS)
    .action(async (opts: ListFlags) => runList({ ...opts, collection: table.name }, ctx));
  const fk = table.columns.find((c) => c.foreignKey);
  return examples(cmd, [
    `catalog ${table.name} list --where '${title}~*blue*' --order ${title} --limit 20`,
    fk
      ? `catalog ${table.name} list --select '${title},${fk.foreignKey!.table}(name)' --where '${fk.foreignKey!.table}.name=Bass Culture'`
      : `catalog ${table.name} list --where 'created>=-30d' --count`,
    `catalog ${table.name} list --all -o csv > ${table.name}.csv`,
  ]);
}

/** Rows of a terminal's first page: 30 (gh's habit), fewer when the terminal is shorter. */
export const FIRST_PAGE = 30;

/** The first page's size on a terminal: what fits below the header, above the count line and the prompt. */
export function firstPageSize(rows: number | undefined): number {
  return rows === undefined || rows <= 0 ? FIRST_PAGE : Math.max(5, Math.min(FIRST_PAGE, rows - 4));
}

/** Reads rows: a terminal's first page, one request, or every page with --all; prints them and the count. */
export async function runList(opts: ListOptions, ctx: Context): Promise<void> {
  const table = await ctx.table(opts.collection);
  const schema = await ctx.schema();
  if (opts.all && opts.limit !== undefined) {
    throw new UsageError('--all reads every row; it does not combine with --limit', 'use --page-size to change how many rows each request reads');
  }
  const query = buildReadQuery(opts, table, schema, ctx.removedFields(table.name), ctx.clock.now());
  const pageSize = count('--page-size', opts.pageSize) ?? DEFAULT_PAGE;
  if (pageSize === 0) throw new UsageError('--page-size must be at least 1');
  // a key list too long for one URL (ids from an earlier run) is read in parts, as --all reads
  if (opts.all || (compileQuery(query).length > MAX_QUERY_CHARS && (await import('../../client/pages.js')).keyListParts(table, query))) return listAll(opts, ctx, table, query, pageSize);
  // On a terminal, no --limit: the first page at once, counted by the planner (free on any size).
  const firstPage = ctx.io.stdout.isTTY && opts.limit === undefined && (await outputFormat(ctx)) === 'table' ? firstPageSize(ctx.io.stdout.rows) : null;
  const asked = firstPage === null ? query : withRootLimit(query, firstPage + 1);
  const headers: Record<string, string> = {};
  if (opts.count || firstPage !== null) headers.Prefer = renderPrefer({ count: opts.count ? 'exact' : 'planned' });
  const res = await ctx.send({ method: 'GET', path: pathOf(table), query: compileQuery(asked), headers });
  if (!res) return;
  let rows = JSON.parse(res.body || '[]') as Row[];
  const total = parseContentRange(res.headers['content-range'] ?? null)?.total ?? null;
  const more = firstPage !== null && rows.length > firstPage;
  if (more) rows = rows.slice(0, firstPage);
  const n = await writeRows(ctx, rows, { table, selected: query.select !== undefined, select: query.select, firstRows: rows.length });
  if (more && !opts.count) {
    // a planner estimate: never below what is known to exist
    const about = total === null ? 'more' : `about ${Math.max(total, n + 1).toLocaleString('en-US')}`;
    await ctx.note(ctx.style().dim(`${n} of ${about} ${table.name} — more with --limit N, or --all`));
    return;
  }
  await reportCount(ctx, opts, n, total, table.name);
  if (n === 0) await hintValues(ctx, query, table);
}

/** Nothing matched: a did-you-mean for filter values no record has (src/cli/commands/value-hints.ts). */
async function hintValues(ctx: Context, query: Query, table: TableDef): Promise<void> {
  const { valueHints } = await import('./value-hints.js');
  for (const hint of await valueHints(query, table, await ctx.schema(), ctx)) await ctx.note(hint);
}

/** The query with its root limit set (its offset kept). */
function withRootLimit(q: Query, limit: number): Query {
  const root = q.page.find((p) => p.path.length === 0);
  return { ...q, page: [...q.page.filter((p) => p.path.length > 0), { path: [], ...(root?.offset ? { offset: root.offset } : {}), limit }] };
}

/**
 * `list --all`: an export to stdout (src/export/export.ts: the one pager, keyset or offset, pages
 * ahead) through the format's page writer set up for the terminal, pipe or pager; CSV takes the
 * export's bytes path (COPY). On a terminal through $PAGER. Memory stays flat at any row count.
 */
async function listAll(opts: ListOptions, ctx: Context, table: TableDef, query: Query, pageSize: number): Promise<void> {
  const [{ exportTable }, { exportOrder }, { textSink }, { boundHeapGrowth }] = await Promise.all([
    import('../../export/export.js'),
    import('../../client/pages.js'),
    import('../../export/sink.js'),
    import('../memory.js'),
  ]);
  // a bulk read like export: memory flat at any row count
  boundHeapGrowth();
  if (ctx.dryRun) {
    const root = query.page.find((p) => p.path.length === 0);
    const first = { ...query, order: exportOrder(table, query), page: [{ path: [], limit: pageSize, ...(root?.offset ? { offset: root.offset } : {}) }] };
    await ctx.send({ method: 'GET', path: pathOf(table), query: compileQuery(first), headers: opts.count ? { Prefer: renderPrefer({ count: 'exact' }) } : {} });
    return;
  }
  const transport = (await ctx.endpoint()).client;
  const pager = await ctx.pager();
  // Ctrl-C while reading in the pager stops the reading, not the pager (as git does)
  const abort = new AbortController();
  if (pager) void ctx.waitForSignal().then(() => abort.abort());
  const w = await commandWriter(ctx, { table, selected: query.select !== undefined, select: query.select, out: pager?.out });
  const quietTerminal = !ctx.io.stdout.isTTY || (w.format === 'table' && !pager);
  const spinner = quietTerminal && !ctx.globals.quiet ? startSpinner(ctx.io.stderr, `Reading ${table.name}…`) : { update() {}, stop() {} };
  let total: number | null = null;
  // Nobody reads any more (`| head`): stop fetching further pages (or the COPY read).
  const writer: PageWriter = { write: async (rows) => (w.target.closed ? abort.abort() : w.writer.write(rows)), end: () => w.writer.end() };
  const text = textSink(w.out);
  const out: TextSink = { write: async (chunk) => (w.target.closed ? abort.abort() : text.write(chunk)) };
  let shown: number;
  try {
    shown = await exportTable({
      transport,
      table,
      format: w.format,
      out,
      writer,
      embeds: w.embeds,
      query,
      pageSize,
      signal: abort.signal,
      count: opts.count ? 'exact' : undefined,
      onTotal: (t) => (total = t),
      onPage: (n) => spinner.update(`Reading ${table.name}: ${n.toLocaleString('en-US')}${total === null ? '' : ` of ${total}`}`),
    });
  } finally {
    spinner.stop();
    await w.flush();
    await pager?.done();
  }
  await reportCount(ctx, { ...opts, all: !pager }, shown, total, table.name);
  if (shown === 0) await hintValues(ctx, query, table);
}

/**
 * A `~` filter whose value has no `*` matches the whole value only (`~beyon` finds "Beyoncé" but
 * not "Beyoncé Knowles"): the first such one, to hint at when nothing matched.
 */
function wholeValueMatch(opts: ListOptions): string | null {
  for (const expr of [...(opts.where ?? []), ...(opts.or ?? [])]) {
    const m = /^([^~!]+?)\s*~\s*([^*]+)$/.exec(expr);
    if (m) return `${m[1]}~*${m[2]}*`;
  }
  return null;
}

async function reportCount(ctx: Context, opts: ListOptions, shown: number, total: number | null, name: string): Promise<void> {
  const inside = shown === 0 ? wholeValueMatch(opts) : null;
  if (inside) await ctx.note(`no ${name} match; ~ matches the whole value (ignoring case and accents): to find it inside a value, use --where '${inside}'`);
  else if (opts.count && total !== null) await ctx.note(`${shown} of ${total} ${name}`);
  else if (shown === 0 && ctx.io.stderr.isTTY) await ctx.note(ctx.style().dim(`no ${name} match`));
  else if (opts.all && ctx.io.stderr.isTTY) await ctx.note(ctx.style().dim(plural(shown, 'row', 'rows')));
}
