import { compileQuery } from '../../grammar/compile.js';
import { renderPrefer } from '../../grammar/prefer.js';
import { parseContentRange } from '../../grammar/range.js';
import type { Query } from '../../grammar/types.js';
import { ServiceError } from '../../client/errors.js';
import type { Context } from '../context.js';
import { UsageError } from '../errors.js';
import { nameFieldOf } from '../prompts/lookup.js';
import type { TableDef } from '../../schema/model.js';
import { pathOf, singularOf } from './shared.js';

/** How many of the rows a confirmation names. */
const NAMED = 5;

/** The rows a multi-row write would touch: how many, and the first few by name. */
export interface Preview {
  /** Rows matching now; null when the service gave no count. */
  count: number | null;
  /** The first rows' names (or ids), as the prompt shows them. */
  names: string[];
}

/**
 * Reads how many rows a filter matches and names the first few (one GET of at most five rows with
 * `Prefer: count=exact`), so a confirmation can say "Remove 3 labels: “A”, “B”, “C”?".
 */
export async function previewRows(ctx: Context, table: TableDef, query: Query): Promise<Preview> {
  const nameField = nameFieldOf(table);
  const pk = table.primaryKey[0] ?? 'id';
  const fields = [...new Set([pk, nameField])];
  const select = fields.map((name) => ({ type: 'field' as const, field: { name, jsonPath: [] } }));
  const res = await ctx.send({
    method: 'GET',
    path: pathOf(table),
    query: compileQuery({ ...query, select, page: [{ path: [], limit: NAMED }] }),
    headers: { Prefer: renderPrefer({ count: 'exact' }) },
  });
  if (!res) return { count: null, names: [] };
  const rows = JSON.parse(res.body || '[]') as Array<Record<string, unknown>>;
  const count = parseContentRange(res.headers['content-range'] ?? null)?.total ?? null;
  const names = rows.map((r) => {
    const name = r[nameField];
    const shown = typeof name === 'string' && name.trim() !== '' ? `“${name.replace(/\s+/g, ' ').trim()}”` : String(r[pk]);
    return shown.length > 60 ? `${shown.slice(0, 59)}…”` : shown;
  });
  return { count, names };
}

/** "“A”, “B”, “C” and 9 more". */
export function namedRows(p: Preview): string {
  const more = p.count !== null && p.count > p.names.length ? ` and ${p.count - p.names.length} more` : '';
  return `${p.names.join(', ')}${more}`;
}

/**
 * Asks before a write that touches `what` (a terminal), or insists on --yes (no terminal).
 * Resolves false when the person declines.
 */
export async function confirmWrite(ctx: Context, question: string, refusal: string, yes: boolean | undefined): Promise<boolean> {
  if (yes) return true;
  if (!ctx.io.stdin.isTTY) throw new UsageError(`${refusal}: pass --yes to confirm`, 'stdin is not a terminal, so the tool cannot ask');
  return ctx.prompter.confirm(question, false);
}

/**
 * A refusal because other rows still refer to the ones being removed (23503) as a message that
 * names the collection that refers to them and how to list those rows.
 */
export function stillReferenced(err: unknown, table: TableDef, ids: string | null): unknown {
  if (!(err instanceof ServiceError) || err.code !== '23503') return err;
  const m = /constraint "(\w+?)_(\w+)_fkey" on table "(\w+)"/.exec(err.message) ?? /constraint "(\w+?)_(\w+)_fkey"/.exec(err.message);
  if (!m) return err;
  const [, from, column] = m;
  const filter = ids ? `${column}=eq.${ids}` : `${column}=not.is.null`;
  return new ServiceError(
    err.status,
    err.code,
    `cannot remove: ${from} still refer to ${ids ? `this ${singularOf(table.name)}` : `these ${table.name}`} (${from}.${column})`,
    err.details,
    `list them with: catalog ${from} list --where '${filter}' --select 'id,${column}'; change or remove them first`,
    err.body,
    err.request,
  );
}
