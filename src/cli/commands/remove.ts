import { Command } from 'commander';
import { compileQuery } from '../../grammar/compile.js';
import { renderPrefer } from '../../grammar/prefer.js';
import { parseContentRange } from '../../grammar/range.js';
import type { Context } from '../context.js';
import { NotFoundError, UsageError } from '../errors.js';
import { plural } from '../output.js';
import { confirmWrite, namedRows, previewRows, stillReferenced } from './confirm.js';
import { TARGET_ROWS } from './flag-rows.js';
import { addFlags, type FlagRow, type FlagsOf } from './flag-table.js';
import { examples, pathOf, singularOf, titleField } from './shared.js';
import { targetQuery, type TargetFlags } from './target.js';
import { idQueries, idsFromFile } from './remove-file.js';
import { splitLongQuery } from '../../client/in-list.js';
import type { Query } from '../../grammar/types.js';
import type { TableDef } from '../../schema/model.js';

/** Every flag of `catalog <collection> remove`, one row each: its commander chain and RemoveFlags come from it. */
export const REMOVE_FLAGS = [
  ...TARGET_ROWS,
  { flag: 'all-rows', help: 'remove every row (only with no id and no --where)' },
  { flag: 'file', value: 'ids.csv', help: 'remove the rows a file names: a column of ids, or of keys under a header naming the field (isrc_code, name)' },
  { flag: 'yes', short: 'y', help: 'do not ask for confirmation (required when stdin is not a terminal)' },
] as const satisfies readonly FlagRow[];

/** The flags of `catalog <collection> remove`, as commander parses them: one key per REMOVE_FLAGS row. */
export type RemoveFlags = FlagsOf<typeof REMOVE_FLAGS>;

export interface RemoveOptions extends RemoveFlags, TargetFlags {
  collection: string;
}

/** `catalog <collection> remove`. */
export function defineRemove(ctx: Context, table: TableDef): Command {
  const cmd = addFlags(
    new Command('remove')
      .alias('rm')
      .description(`Remove one ${table.singular} (by id) or every ${table.singular} matching --where`)
      .argument('[id]', `the ${table.singular}'s id`),
    REMOVE_FLAGS,
  ).action(async (id: string | undefined, opts: RemoveFlags) => runRemove({ ...opts, id, collection: table.name }, ctx));
  return examples(cmd, [
    `catalog ${table.name} remove 3f2a9c1e-8b1d-4e7a-9c55-0d6f1b2a4e10`,
    `catalog ${table.name} remove --where '${titleField(table)}~*test*' --yes`,
    `catalog ${table.name} remove --file gone.csv --yes     # one id (or key) a line`,
  ]);
}

/**
 * Counts the rows first, names them and asks (on a terminal) or insists on --yes (otherwise); then
 * deletes with `max-affected` set to that count, so rows that appeared in between are never
 * removed unseen. A refusal because other rows still refer to these (23503) says which.
 */
export async function runRemove(opts: RemoveOptions, ctx: Context): Promise<void> {
  const table = await ctx.table(opts.collection);
  const targets = await targetsOf(opts, table, ctx);
  const path = pathOf(table);
  const what = (n: number) => plural(n, singularOf(table.name), table.name);
  // The count comes first (HEAD): with --dry-run both requests are shown, neither is sent.
  const counts: Array<number | null> = [];
  for (const target of targets) {
    const head = await ctx.send({ method: 'HEAD', path, query: compileQuery(target), headers: { Prefer: renderPrefer({ count: 'exact' }) } });
    counts.push(parseContentRange(head?.headers['content-range'] ?? null)?.total ?? null);
  }
  if (ctx.dryRun) {
    for (const target of targets) await ctx.send({ method: 'DELETE', path, query: compileQuery(target), headers: { Prefer: renderPrefer({ count: 'exact' }) } });
    return;
  }
  const matching = counts.some((n) => n === null) ? null : counts.reduce<number>((a, n) => a + (n ?? 0), 0);
  if (matching === 0) {
    if (opts.id !== undefined) throw new NotFoundError(`${singularOf(table.name)} ${opts.id} not found in ${table.name}`);
    await ctx.note(`No ${table.name} match; nothing removed`);
    return;
  }
  const shown = matching === null ? `the matching ${table.name}` : what(matching);
  if (!opts.yes) {
    const named = ctx.io.stdin.isTTY ? namedRows({ ...(await previewRows(ctx, table, targets[0])), count: matching }) : '';
    if (!(await confirmWrite(ctx, `Remove ${shown}${named ? `: ${named}` : ''}?`, `this would remove ${shown}`, opts.yes))) {
      await ctx.note('Nothing removed');
      return;
    }
  }
  let removed = 0;
  for (let i = 0; i < targets.length; i++) {
    if (counts[i] === 0) continue;
    const n = counts[i];
    const prefer = renderPrefer(n === null ? { count: 'exact' } : { count: 'exact', handling: 'strict', maxAffected: n });
    const res = await ctx.send({ method: 'DELETE', path, query: compileQuery(targets[i]), headers: { Prefer: prefer } }).catch((err: unknown) => {
      throw stillReferenced(err, table, opts.id ?? null);
    });
    removed += parseContentRange(res?.headers['content-range'] ?? null)?.total ?? n ?? 0;
  }
  await ctx.note(`Removed ${what(removed)}${targets.length > 1 ? ` (in ${targets.length} requests, each under the URL limit)` : ''}`);
}

/** The filters of the removal: from --file, or the id / --where (a long in.() list cut to fit URLs). */
async function targetsOf(opts: RemoveOptions, table: TableDef, ctx: Context): Promise<Query[]> {
  if (opts.file === undefined) return splitLongQuery(await targetQuery(opts, table, ctx, 'remove'), compileQuery);
  if (opts.id !== undefined || opts.where?.length || opts.or?.length || opts.allRows) throw new UsageError('--file does not combine with an id, --where or --all-rows');
  const ids = await idsFromFile(opts.file, table, ctx);
  if (ids.length === 0) throw new UsageError(`${opts.file} names no row`);
  return idQueries(ids);
}
