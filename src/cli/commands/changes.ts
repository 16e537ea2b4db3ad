import { Command } from 'commander';
import { ServiceError } from '../../client/errors.js';
import { compileQuery } from '../../grammar/compile.js';
import { renderPrefer } from '../../grammar/prefer.js';
import { parseContentRange } from '../../grammar/range.js';
import type { Condition, Query, WhereClause } from '../../grammar/types.js';
import type { Row } from '../../format/types.js';
import { didYouMean } from '../../format/suggest.js';
import type { TableDef } from '../../schema/model.js';
import type { Context } from '../context.js';
import { UsageError } from '../errors.js';
import { count } from '../flags/query.js';
import { RELATIVE_DATE_HELP, resolveRelativeDate } from '../flags/relative-date.js';
import { plural, writeRows } from '../output.js';
import { addFlags, type FlagRow, type FlagsOf } from './flag-table.js';
import { examples, pathOf, titleField } from './shared.js';

/**
 * `catalog changes --since WHEN`: what was added, changed and removed across the collections.
 * Added and changed come from each collection's `created` and `updated` (any PostgREST);
 * removed from `removals`, which `catalog serve` fills from a delete trigger on each collection
 * (migrations/0009-removals.sql). A service without it gets the rest, and a warning that
 * removals are unknown.
 */

/** Changes shown at most unless --limit says otherwise. */
export const DEFAULT_LIMIT = 1000;

const MOMENT_HELP = `${RELATIVE_DATE_HELP}, 2026-11-01, 2026-11-01T09:00:00Z`;

/** Every flag of `catalog changes`, one row each: its commander chain and ChangesOptions come from it. */
export const CHANGES_FLAGS = [
  { flag: 'since', short: 's', value: 'when', required: true, help: `from this moment on: ${MOMENT_HELP}` },
  { flag: 'collection', short: 'c', value: 'name', repeatable: true, help: 'only this collection (repeat for more)' },
  { flag: 'limit', value: 'n', help: 'at most this many changes, the oldest first', fallback: String(DEFAULT_LIMIT) },
] as const satisfies readonly FlagRow[];

/** The flags of `catalog changes`, as commander parses them: one key per CHANGES_FLAGS row (`since` always there). */
export type ChangesOptions = FlagsOf<typeof CHANGES_FLAGS>;

/** `catalog changes`. */
export function defineChanges(ctx: Context): Command {
  const cmd = addFlags(new Command('changes').description('List what was added, changed and removed in every collection since a moment (oldest first)'), CHANGES_FLAGS).action(async (opts: ChangesOptions) => runChanges(opts, ctx));
  return examples(cmd, [
    'catalog changes --since yesterday',
    'catalog changes --since -2h --collection tracks --collection releases',
    'catalog changes --since this-month -o csv > changes.csv',
  ]);
}

/**
 * The moment `--since` names, as an ISO timestamp: a relative date (`yesterday` is local
 * midnight), a date (local midnight), or a timestamp.
 * @example sinceMoment('2026-11-01T09:00:00Z', Date.now()) // '2026-11-01T09:00:00.000Z'
 */
export function sinceMoment(text: string, now: number): string {
  const relative = resolveRelativeDate(text, 'timestamp', now);
  if (relative) return relative;
  const day = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text.trim());
  const at = day ? new Date(Number(day[1]), Number(day[2]) - 1, Number(day[3])) : /^\d{4}-\d{2}-\d{2}[T ]\d/.test(text.trim()) ? new Date(text.trim()) : null;
  // a day Date would roll over (2026-13-01, 2026-02-30) is no day
  const rolled = day && at && (at.getMonth() !== Number(day[2]) - 1 || at.getDate() !== Number(day[3]));
  if (!at || Number.isNaN(at.getTime()) || rolled) throw new UsageError(`--since: '${text}' is not a moment`, `write one of: ${MOMENT_HELP}`);
  return at.toISOString();
}

/** One line of the answer. */
interface Change extends Row {
  collection: string;
  id: string;
  title: string | null;
  change: 'added' | 'changed' | 'removed';
  when: string;
}

/** How the rows are typed for the table (`when` shows as a relative time on a terminal). */
const CHANGE_TABLE: TableDef = {
  name: 'changes',
  singular: 'change',
  primaryKey: [],
  columns: [
    { name: 'collection', type: 'text', nullable: false },
    { name: 'id', type: 'uuid', nullable: false },
    { name: 'title', type: 'text', nullable: true },
    { name: 'change', type: 'text', nullable: false },
    { name: 'when', type: 'timestamp with time zone', nullable: false },
  ],
};

const field = (name: string) => ({ name, jsonPath: [] });
const atLeast = (name: string, value: string): Condition => ({ kind: 'filter', field: field(name), negated: false, op: 'gte', value });

/** What one read brought: its rows and how many there are in all. */
interface Read {
  rows: Change[];
  total: number;
}

/** GETs a query with an exact count; null on a dry run. */
async function read(ctx: Context, path: string, query: Query): Promise<{ rows: Row[]; total: number } | null> {
  const res = await ctx.send({ method: 'GET', path, query: compileQuery(query), headers: { Prefer: renderPrefer({ count: 'exact' }) } });
  if (!res) return null;
  const rows = JSON.parse(res.body || '[]') as Row[];
  return { rows, total: parseContentRange(res.headers['content-range'] ?? null)?.total ?? rows.length };
}

/** A collection's rows created or updated since the moment, the oldest first. */
async function addedAndChanged(ctx: Context, table: TableDef, since: string, limit: number): Promise<Read | null> {
  const title = titleField(table);
  const has = (c: string) => table.columns.some((f) => f.name === c);
  const stamps = ['created', 'updated'].filter(has);
  const condition: Condition = stamps.length === 1 ? atLeast(stamps[0], since) : { kind: 'or', negated: false, conditions: stamps.map((s) => atLeast(s, since)) };
  const last = has('updated') ? 'updated' : 'created';
  const query: Query = {
    select: [...new Set(['id', title, ...stamps])].map((n) => ({ type: 'field' as const, field: field(n) })),
    where: [{ path: [], condition }],
    order: [{ path: [], terms: [{ field: field(last) }, { field: field('id') }] }],
    page: [{ path: [], limit: limit + 1 }],
  };
  const got = await read(ctx, pathOf(table), query);
  if (!got) return null;
  const rows = got.rows.map((r): Change => {
    const added = typeof r.created === 'string' && Date.parse(r.created) >= Date.parse(since);
    const when = String(added ? r.created : r[last]);
    return { collection: table.name, id: String(r.id), title: title === 'id' ? null : ((r[title] as string | null) ?? null), change: added ? 'added' : 'changed', when };
  });
  return { rows, total: got.total };
}

/** What `removals` lists since the moment; `unknown` (with the reason) when the service has no such collection or refuses it. */
async function removed(ctx: Context, collections: string[], since: string, limit: number): Promise<Read | { unknown: string } | null> {
  const where: WhereClause[] = [
    { path: [], condition: atLeast('removed', since) },
    { path: [], condition: { kind: 'filter', field: field('collection'), negated: false, op: 'in', value: collections } },
  ];
  const query: Query = {
    select: ['collection', 'record_id', 'title', 'removed'].map((n) => ({ type: 'field' as const, field: field(n) })),
    where,
    order: [{ path: [], terms: [{ field: field('removed') }, { field: field('id') }] }],
    page: [{ path: [], limit: limit + 1 }],
  };
  try {
    const got = await read(ctx, '/removals', query);
    if (!got) return null;
    return { rows: got.rows.map((r) => ({ collection: String(r.collection), id: String(r.record_id), title: (r.title as string | null) ?? null, change: 'removed', when: String(r.removed) })), total: got.total };
  } catch (err) {
    if (err instanceof ServiceError && [401, 403, 404].includes(err.status)) {
      return { unknown: err.status === 404 ? 'the service does not record them (it has no /removals collection; `catalog serve` does)' : `the service refused to show them (HTTP ${err.status})` };
    }
    throw err;
  }
}

/** The collections asked for (all that take writes when none are), each checked. */
function chosenCollections(names: string[] | undefined, tables: TableDef[]): TableDef[] {
  if (!names?.length) return tables;
  return names.map((n) => {
    const t = tables.find((x) => x.name === n);
    if (t) return t;
    const guess = didYouMean(n, tables.map((x) => x.name));
    throw new UsageError(`unknown collection '${n}'${guess ? ` (did you mean '${guess}'?)` : ''}`, `collections: ${tables.map((x) => x.name).join(', ')}`);
  });
}

/** Reads every collection's changes and the removals since the moment; prints the oldest `--limit` of them. */
export async function runChanges(opts: ChangesOptions, ctx: Context): Promise<void> {
  const since = sinceMoment(opts.since, ctx.clock.now());
  const limit = count('--limit', opts.limit) ?? DEFAULT_LIMIT;
  if (limit === 0) throw new UsageError('--limit must be at least 1');
  const tables = chosenCollections(opts.collection, (await ctx.tables()).filter((t) => t.columns.some((c) => c.name === 'created' || c.name === 'updated')));
  const reads: Read[] = [];
  for (const t of tables) {
    const got = await addedAndChanged(ctx, t, since, limit);
    if (got) reads.push(got);
  }
  const gone = await removed(ctx, tables.map((t) => t.name), since, limit);
  if (ctx.dryRun) return;
  if (gone && 'rows' in gone) reads.push(gone);
  const all = reads.flatMap((r) => r.rows).sort((a, b) => Date.parse(a.when) - Date.parse(b.when) || a.collection.localeCompare(b.collection));
  const total = reads.reduce((sum, r) => sum + r.total, 0);
  const shown = all.slice(0, limit);
  await writeRows(ctx, shown, { table: CHANGE_TABLE, selected: true });
  const moment = `since ${opts.since}${opts.since.trim() === since ? '' : ` (${since})`}`;
  if (gone && 'unknown' in gone) await ctx.warn(`removals are unknown: ${gone.unknown}; shown are additions and changes ${moment}`);
  if (total > shown.length) await ctx.note(`${shown.length} of ${total} changes ${moment}, the oldest first; more with --limit N, or a later --since`);
  else if (ctx.io.stderr.isTTY) await ctx.note(ctx.style().dim(shown.length ? `${plural(shown.length, 'change', 'changes')} ${moment}` : `no changes ${moment}`));
}
