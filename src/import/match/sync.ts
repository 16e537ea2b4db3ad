import { faultOf, type Transport } from '../../client/transport.js';
import { inListChunks } from '../../client/in-list.js';
import type { WhereClause } from '../../grammar/types.js';
import type { TableDef } from '../../schema/model.js';
import { type KeyIndex, readPages } from './keys.js';
import { inFilterQuery, inListQuery } from '../requests.js';
import { ImportError } from '../types.js';

/**
 * `import --sync`: after the input has landed, the records in the scope that the input did not
 * have (no row matched their key or id: the match stage's marks, src/import/match/match.ts) are
 * removed, in `id=in.(…)` lists cut under the URL limit. A record another collection refers to
 * blocks the sync (the blocking rows are named) unless `--cascade` removes those first. Nothing is
 * removed when a row of the input was rejected: its record would look gone when it is only
 * unreadable.
 */

export interface SyncOptions {
  /** The filters of `--scope EXPR`, or `all` for the whole collection. */
  scope: WhereClause[] | 'all';
  /** The scope as the user wrote it (reports). */
  scopeText: string;
  cascade: boolean;
  /** Every collection the service describes: the ones referring to the synced collection block its removals, or lose rows first with --cascade. */
  tables: readonly TableDef[];
  /**
   * A directory's sync: the engine hands over what the input matched instead of removing, and the
   * directory removes children before parents once every file has landed.
   */
  deferred?: (index: KeyIndex, rejected: number) => void;
}

/** What a sync removes (or, in a dry run, would remove), as the summary reports it. */
export interface SyncReport {
  scope: string;
  /** Records removed (or to be removed). */
  deletes: number;
  /** Up to five of them: id and name. */
  examples: Array<{ id: string; name: string | null }>;
  /** Rows of other collections removed first (`--cascade`), per collection. */
  cascaded: Record<string, number>;
  /** Why nothing was removed, when so. */
  held: string | null;
}

export interface SyncPlan {
  ids: string[];
  report: SyncReport;
}

/** The collections whose rows refer to `table`, with the referring field. */
const childrenOf = (table: TableDef, tables: readonly TableDef[]): Array<{ table: TableDef; field: string }> =>
  tables.flatMap((t) => t.columns.filter((c) => c.foreignKey?.table === table.name).map((c) => ({ table: t, field: c.name })));

async function getJson(transport: Transport, table: string, query: string): Promise<Record<string, unknown>[]> {
  const res = await transport.send({ method: 'GET', path: `/${table}`, query, headers: { Accept: 'application/json' } });
  if (res.status !== 200 && res.status !== 206) throw faultOf(res, `GET /${table}?${query}`);
  return JSON.parse(res.body) as Record<string, unknown>[];
}

/** The field a record's example is shown by: its title (TableDef.title), else its id. */
const nameOf = (t: TableDef): string => t.title ?? 'id';

/** The records in scope the input did not match, and what removing them takes. */
export async function planSync(transport: Transport, table: TableDef, index: KeyIndex, opts: SyncOptions, rejected: number, checkBlocking = true, loaded = false): Promise<SyncPlan> {
  const ids: string[] = [];
  if (opts.scope === 'all') {
    for (let s = 0; s < index.storedCount; s++) if (!index.marked(s)) ids.push(index.idOf(s));
  } else {
    for await (const page of readPages(transport, table.name, ['id'], opts.scope)) {
      for (const row of page) {
        const s = index.slotOfId(String(row.id));
        if (s >= 0 && !index.marked(s)) ids.push(index.idOf(s));
      }
    }
  }
  const report: SyncReport = { scope: opts.scopeText, deletes: ids.length, examples: [], cascaded: {}, held: null };
  if (ids.length === 0) return { ids, report };
  const name = nameOf(table);
  const shown = await getJson(transport, table.name, inListQuery(['id', name], 'id', ids.slice(0, 5)));
  report.examples = shown.map((r) => ({ id: String(r.id), name: r[name] === null || r[name] === undefined ? null : String(r[name]) }));
  if (rejected > 0) {
    report.held = `${rejected} row${rejected > 1 ? 's' : ''} of the input ${rejected > 1 ? 'were' : 'was'} rejected: nothing is removed until the input loads whole`;
    return { ids: [], report };
  }
  for (const child of checkBlocking ? childrenOf(table, opts.tables) : []) {
    const blocking = await referring(transport, child.table, child.field, ids, opts.cascade ? Infinity : 5);
    if (blocking.length === 0) continue;
    if (!opts.cascade) {
      const childName = nameOf(child.table);
      const named = blocking.map((r) => `${String(r.id)}${r[childName] ? ` (“${String(r[childName])}”)` : ''}`).join(', ');
      throw new ImportError(`--sync would remove ${table.name} that ${child.table.name} still refer to (${child.field}): ${named}${blocking.length >= 5 ? ' and maybe more' : ''}; --cascade removes those ${child.table.name} first (nothing was removed${loaded ? '; the input\'s rows are imported' : ''})`, 'input');
    }
    report.cascaded[child.table.name] = (report.cascaded[child.table.name] ?? 0) + blocking.length;
  }
  return { ids, report };
}

/** Rows of `child` whose `field` is one of `ids`, at most `limit`. */
async function referring(transport: Transport, child: TableDef, field: string, ids: string[], limit: number): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  const fixed = field.length + 40;
  for (const part of inListChunks(ids, fixed)) {
    for (const r of await getJson(transport, child.name, inListQuery(['id', nameOf(child)], field, part))) {
      out.push(r);
      if (out.length >= limit) return out;
    }
  }
  return out;
}

/** Removes the planned records (children first with `--cascade`), a URL-sized list at a time. */
export async function runSync(transport: Transport, table: TableDef, plan: SyncPlan, opts: SyncOptions, signal?: AbortSignal): Promise<void> {
  if (plan.ids.length === 0) return;
  if (opts.cascade) for (const child of childrenOf(table, opts.tables)) await removeWhere(transport, child.table.name, child.field, plan.ids, signal);
  const done = { n: 0 };
  try {
    await removeWhere(transport, table.name, 'id', plan.ids, signal, done);
  } catch (err) {
    // a stop or a lost connection part way: say what was applied; a re-run plans the rest again
    const why = signal?.aborted ? 'interrupted' : `stopped (${(err as Error).message})`;
    throw new ImportError(`sync ${why} after removing ${done.n.toLocaleString('en-US')} of ${plan.ids.length.toLocaleString('en-US')} ${table.name}; the input's rows are imported. Run the same command again to finish: it removes the rest`, 'input');
  }
}

async function removeWhere(transport: Transport, table: string, field: string, ids: string[], signal?: AbortSignal, done = { n: 0 }): Promise<void> {
  for (const part of inListChunks(ids, field.length + 20)) {
    if (signal?.aborted) throw new Error('interrupted');
    const query = inFilterQuery(field, part);
    const res = await transport.send({ method: 'DELETE', path: `/${table}`, query, headers: { Prefer: 'return=minimal' } });
    if (res.status >= 300) throw faultOf(res, `DELETE /${table}?${field}=in.(${part.length} ids)`);
    done.n += part.length;
  }
}
