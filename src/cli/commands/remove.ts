import { Command } from 'commander';
import { compileQuery } from '../../grammar/compile.js';
import { renderPrefer } from '../../grammar/prefer.js';
import { parseContentRange } from '../../grammar/range.js';
import type { TableDef } from '../../schema/catalog.js';
import type { Context } from '../context.js';
import { NotFoundError, UsageError } from '../errors.js';
import { plural } from '../output.js';
import { confirmWrite, namedRows, previewRows, stillReferenced } from './confirm.js';
import { collect, examples, pathOf, singularOf, titleField } from './shared.js';
import { targetQuery, type TargetFlags } from './target.js';

export interface RemoveOptions extends TargetFlags {
  collection: string;
  yes?: boolean;
}

/** `catalog <collection> remove`. */
export function defineRemove(ctx: Context, table: TableDef): Command {
  const cmd = new Command('remove')
    .alias('rm')
    .description(`Remove one ${table.singular} (by id) or every ${table.singular} matching --where`)
    .argument('[id]', `the ${table.singular}'s id`)
    .option('-w, --where <expr>', 'choose the rows by filter instead of an id (repeat to AND)', collect)
    .option('--or <expr>', 'alternative filter (one or=() group)', collect)
    .option('--all-rows', 'remove every row (only with no id and no --where)')
    .option('-y, --yes', 'do not ask for confirmation (required when stdin is not a terminal)')
    .action(async (id: string | undefined, opts: Omit<RemoveOptions, 'collection' | 'id'>) => runRemove({ ...opts, id, collection: table.name }, ctx));
  return examples(cmd, [
    `catalog ${table.name} remove 3f2a9c1e-8b1d-4e7a-9c55-0d6f1b2a4e10`,
    `catalog ${table.name} remove --where '${titleField(table)}~*test*' --yes`,
    `catalog ${table.name} remove --where 'created<2020-01-01' --dry-run`,
  ]);
}

/**
 * Counts the rows first, names them and asks (on a terminal) or insists on --yes (otherwise); then
 * deletes with `max-affected` set to that count, so rows that appeared in between are never
 * removed unseen. A refusal because other rows still refer to these (23503) says which.
 */
export async function runRemove(opts: RemoveOptions, ctx: Context): Promise<void> {
  const table = await ctx.table(opts.collection);
  const target = await targetQuery(opts, table, ctx, 'remove');
  const query = compileQuery(target);
  const path = pathOf(table);
  const what = (n: number) => plural(n, singularOf(table.name), table.name);
  // The count comes first (HEAD): with --dry-run both requests are shown, neither is sent.
  const head = await ctx.send({ method: 'HEAD', path, query, headers: { Prefer: renderPrefer({ count: 'exact' }) } });
  if (ctx.dryRun) {
    await ctx.send({ method: 'DELETE', path, query, headers: { Prefer: renderPrefer({ count: 'exact' }) } });
    return;
  }
  const matching = parseContentRange(head?.headers['content-range'] ?? null)?.total ?? null;
  if (matching === 0) {
    if (opts.id !== undefined) throw new NotFoundError(`${singularOf(table.name)} ${opts.id} not found in ${table.name}`);
    await ctx.note(`No ${table.name} match; nothing removed`);
    return;
  }
  const shown = matching === null ? `the matching ${table.name}` : what(matching);
  if (!opts.yes) {
    const named = ctx.io.stdin.isTTY ? namedRows(await previewRows(ctx, table, target)) : '';
    if (!(await confirmWrite(ctx, `Remove ${shown}${named ? `: ${named}` : ''}?`, `this would remove ${shown}`, opts.yes))) {
      await ctx.note('Nothing removed');
      return;
    }
  }
  const prefer = renderPrefer(matching === null ? { count: 'exact' } : { count: 'exact', handling: 'strict', maxAffected: matching });
  const res = await ctx.send({ method: 'DELETE', path, query, headers: { Prefer: prefer } }).catch((err: unknown) => {
    throw stillReferenced(err, table, opts.id ?? null);
  });
  const removed = parseContentRange(res?.headers['content-range'] ?? null)?.total ?? matching ?? 0;
  await ctx.note(`Removed ${what(removed)}`);
}
