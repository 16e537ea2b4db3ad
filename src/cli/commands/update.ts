import type { Command } from 'commander';
import { compileQuery } from '../../grammar/compile.js';
import { renderPrefer } from '../../grammar/prefer.js';
import type { Row } from '../../format/types.js';
import type { Context } from '../context.js';
import { NotFoundError, UsageError } from '../errors.js';
import { parseAssignments } from '../flags/body.js';
import { outputFormat, plural, success, writeRows } from '../output.js';
import { nameFieldOf } from '../prompts/lookup.js';
import type { TableDef } from '../../schema/model.js';
import { confirmWrite, namedRows, previewRows } from './confirm.js';
import { resolveReferences } from './references.js';
import { splitLongQuery } from '../../client/in-list.js';
import type { Query } from '../../grammar/types.js';
import { REF_ROW, TARGET_ROWS } from './flag-rows.js';
import type { FlagRow, FlagsOf } from './flag-table.js';
import { defineRecordCommand } from './record-command.js';
import { pathOf, singularOf, titleField } from './shared.js';
import { targetQuery, type TargetFlags } from './target.js';

/** Every flag of `catalog <collection> update`, one row each: its commander chain and UpdateFlags come from it. */
export const UPDATE_FLAGS = [
  ...TARGET_ROWS,
  { flag: 'all-rows', help: 'update every row (only with no id and no --where)' },
  { flag: 'yes', short: 'y', help: 'do not ask before changing more than one row (required when stdin is not a terminal)' },
  { flag: 'interactive', short: 'i', help: 'ask for each field on the terminal, showing its current value (one id)' },
  REF_ROW,
] as const satisfies readonly FlagRow[];

/** The flags of `catalog <collection> update`, as commander parses them: one key per UPDATE_FLAGS row. */
export type UpdateFlags = FlagsOf<typeof UPDATE_FLAGS>;

export interface UpdateOptions extends Omit<UpdateFlags, 'interactive'>, TargetFlags {
  collection: string;
  pairs: string[];
}

/** `catalog <collection> update`. */
export function defineUpdate(ctx: Context, table: TableDef, interactive?: (opts: Record<string, unknown>, ctx: Context) => Promise<void>): Command {
  const title = titleField(table);
  return defineRecordCommand<UpdateFlags>({
    name: 'update',
    description: `Change fields of one ${table.singular} (by id) or of every ${table.singular} matching --where`,
    argument: ['[ID] [FIELD=VALUE...]', 'the id (unless --where is given), then the new field values'],
    flags: UPDATE_FLAGS,
    action: async (args, opts) => {
      const byWhere = (opts.where?.length ?? 0) > 0 || (opts.or?.length ?? 0) > 0 || opts.allRows;
      const [first, ...rest] = args;
      const id = !byWhere && first !== undefined && !first.includes('=') ? first : undefined;
      if (opts.interactive && interactive) {
        return interactive({ collection: table.name, id, presets: id !== undefined ? rest : args, byFilter: Boolean(byWhere) }, ctx);
      }
      await runUpdate({ ...opts, id, pairs: id !== undefined ? rest : args, collection: table.name }, ctx);
    },
    examples: [
      `catalog ${table.name} update 3f2a9c1e-8b1d-4e7a-9c55-0d6f1b2a4e10 ${title}='New Title'`,
      `catalog ${table.name} update --where "${title}=Old Title" ${title}='New Title' --yes`,
      table.columns.some((c) => c.name === 'is_signed')
        ? `catalog ${table.name} update --where 'city=Berlin' is_signed=true --yes -o json`
        : `catalog ${table.name} update --where '${title}~*demo*' ${title}='' --yes -o json`,
    ],
  });
}

/**
 * PATCHes the chosen rows and prints them as stored (on a terminal, the id, name and changed
 * fields). A --where that matches more than one row works like `remove`: it names the rows and
 * asks on a terminal, needs --yes otherwise, and sends `max-affected` with the count it showed.
 */
export async function runUpdate(opts: UpdateOptions, ctx: Context): Promise<void> {
  const table = await ctx.table(opts.collection);
  const target = await targetQuery(opts, table, ctx, 'update');
  const changes = parseAssignments(opts.pairs, table, ctx.removedFields(table.name));
  await resolveReferences([changes], table.name, opts.ref ?? [], ctx);
  const changed = Object.keys(changes);
  if (changed.length === 0) {
    throw new UsageError('nothing to change: give FIELD=VALUE pairs', `for example: catalog ${table.name} update <id> name='New Name'`);
  }
  const parts = splitLongQuery(target, compileQuery);
  if (parts.length > 1) return updateInParts(ctx, table, parts, changes, opts.yes);
  let limit: number | null = null;
  if (opts.id === undefined && !ctx.dryRun) {
    const preview = await previewRows(ctx, table, target);
    if (preview.count === 0) {
      await ctx.note(`No ${table.name} match; nothing updated`);
      return;
    }
    if (preview.count === null || preview.count > 1) {
      const shown = preview.count === null ? `the matching ${table.name}` : plural(preview.count, singularOf(table.name), table.name);
      const question = `Update ${shown} (${changed.join(', ')}): ${namedRows(preview)}?`;
      if (!(await confirmWrite(ctx, question, `this would update ${shown}`, opts.yes))) {
        await ctx.note('Nothing updated');
        return;
      }
    }
    limit = preview.count;
  }
  const res = await ctx.send({
    method: 'PATCH',
    path: pathOf(table),
    query: compileQuery(target),
    headers: { Prefer: renderPrefer(limit === null ? { return: 'representation' } : { return: 'representation', handling: 'strict', maxAffected: limit }) },
    body: JSON.stringify(changes),
  });
  if (!res) return;
  const rows = JSON.parse(res.body || '[]') as Row[];
  if (opts.id !== undefined && rows.length === 0) throw new NotFoundError(`${singularOf(table.name)} ${opts.id} not found in ${table.name}`);
  if (rows.length === 0) {
    await ctx.note(`No ${table.name} match; nothing updated`);
    return;
  }
  await writeChanged(ctx, table, rows, changed, opts.id !== undefined);
  await success(ctx, `Updated ${plural(rows.length, singularOf(table.name), table.name)}`);
}

/**
 * An update whose `in.(…)` list is too long for one URL: counted part by part, confirmed once for
 * them all, then one PATCH a part, each with `max-affected` set to what its count showed.
 */
async function updateInParts(ctx: Context, table: TableDef, parts: Query[], changes: Record<string, unknown>, yes: boolean | undefined): Promise<void> {
  const changed = Object.keys(changes);
  const counts: Array<number | null> = [];
  for (const q of ctx.dryRun ? [] : parts) counts.push((await previewRows(ctx, table, q)).count);
  const total = counts.reduce<number>((a, n) => a + (n ?? 0), 0);
  if (!ctx.dryRun) {
    if (total === 0 && counts.every((n) => n === 0)) return void (await ctx.note(`No ${table.name} match; nothing updated`));
    const shown = plural(total, singularOf(table.name), table.name);
    if (!(await confirmWrite(ctx, `Update ${shown} (${changed.join(', ')})?`, `this would update ${shown}`, yes))) return void (await ctx.note('Nothing updated'));
  }
  const rows: Row[] = [];
  for (let i = 0; i < parts.length; i++) {
    if (counts[i] === 0) continue;
    const n = counts[i] ?? null;
    const prefer = renderPrefer(n === null ? { return: 'representation' } : { return: 'representation', handling: 'strict', maxAffected: n });
    const res = await ctx.send({ method: 'PATCH', path: pathOf(table), query: compileQuery(parts[i]), headers: { Prefer: prefer }, body: JSON.stringify(changes) });
    if (res) rows.push(...(JSON.parse(res.body || '[]') as Row[]));
  }
  if (ctx.dryRun) return;
  await writeChanged(ctx, table, rows, changed, false);
  await success(ctx, `Updated ${plural(rows.length, singularOf(table.name), table.name)} (in ${parts.length} requests, each under the URL limit)`);
}

/** The updated rows: in a table the id, name and changed fields only; whole rows in other formats. */
async function writeChanged(ctx: Context, table: TableDef, rows: Row[], changed: string[], single: boolean): Promise<void> {
  if ((await outputFormat(ctx)) !== 'table' || single) return void (await writeRows(ctx, rows, { table, single }));
  const keep = [...new Set([...table.primaryKey, nameFieldOf(table), ...changed, 'updated'])];
  const shown = rows.map((r) => Object.fromEntries(keep.filter((k) => k in r).map((k) => [k, r[k]])));
  await writeRows(ctx, shown, { table, selected: true });
}
