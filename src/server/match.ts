import type { TableDef } from '../schema/catalog.js';
import { keyExpressions, keyMatchSql } from '../schema/match.js';
import { SOURCE_IDS, sourceIdsTable } from '../schema/source-ids.js';
import type { PlannedMatch } from './match-preference.js';
import type { WritePlan } from './plan.js';
import { ident, tableRef } from './sql.js';

/**
 * `Prefer: match=` where the write happens (the preference: match-preference.ts; its grammar:
 * src/schema/match.ts): an upsert's rows find their stored record in the transaction that writes
 * them. Under a lock per table's keys, each body row's alternatives are looked up in order (an
 * index scan each, migration 6's key indexes); the first that is not empty and names a stored
 * record (or a record an earlier row of the body became) gives the row its id; otherwise the
 * body's id is kept, a proposal for a new record. The insert joins the decided ids to the staged
 * rows (sql.ts movedRows). docs/service.md ("Bulk extensions") states the contract.
 */

/**
 * The advisory lock that serialises the writers of one table's keys until their transaction ends
 * (PgBouncer's transaction mode keeps a transaction on one server connection; PGlite runs one
 * transaction at a time anyway). Taken before the match is read: the second of two concurrent
 * writers reads the first one's rows. In the same round trip, JIT compilation is turned off for
 * the transaction: the lookup (an index probe per body row, each estimated at hundreds of rows)
 * passes jit_above_cost at a few thousand rows, and compiling it took 360 ms where running it
 * took 200 (2,000 rows over a million tracks).
 */
export function matchLock(schema: string, table: TableDef): { sql: string; params: unknown[] } {
  return { sql: `SELECT pg_advisory_xact_lock(hashtext($1)), set_config('jit', 'off', true)`, params: [`catalog match ${schema}.${table.name}`] };
}

/**
 * The oldest of the stored records a key names (`created`, then the lowest id), as an aggregate:
 * `ORDER BY created, id LIMIT 1` let the planner walk the `created` index until a row had the key
 * (half the table per row: a 10k-row import took 19 s where this takes 0.3).
 */
const OLDEST = `(array_agg(_x."id"::text ORDER BY _x."created", _x."id"))[1]`;

/**
 * One statement reading each staged row's key per alternative and the stored record it names:
 * `o` (the row's place in the body), `id`, then `k0`, `m0`, `k1`, `m1`, … — `k` the normalised key
 * as text (null when empty: an empty key never matches), `m` the id of the stored record with it.
 * Where several stored records share a key, the oldest (`created`, then the lowest id) is taken.
 */
export function matchLookup(table: TableDef, alts: readonly PlannedMatch[], schema: string, staged: string): string {
  // each row's keys, normalised once (OFFSET 0 keeps the planner from writing them out again at every use)
  const keys: string[] = [];
  const cols = [`_s."pgrst_ord" AS o`, `_s."id"::text AS id`];
  alts.forEach((a, i) => {
    if (a.kind === 'source') {
      // a source name is checked against SOURCE_NAME (letters, digits, _ and -): safe as a literal
      keys.push(`nullif(_s.${ident(SOURCE_IDS)} ->> '${a.source}', '') AS k${i}`);
      cols.push(`_k.k${i}`);
      cols.push(
        `(SELECT _r."record"::text FROM ${sourceIdsTable(schema)} AS _r WHERE _r."collection" = '${table.name}' AND _r."source" = '${a.source}' AND _r."source_id" = _k.k${i}) AS m${i}`,
      );
      return;
    }
    const body = keyExpressions(a.columns, (c) => `_s.${ident(c.name)}`);
    const stored = (keys: string[]) => keyMatchSql(a.columns, (c) => `_x.${ident(c.name)}`, keys);
    if (a.columns.length === 1) {
      keys.push(`nullif(${body[0]}, '') AS k${i}`);
      cols.push(`_k.k${i}`, `(SELECT ${OLDEST} FROM ${tableRef(schema, table)} AS _x WHERE ${stored([`_k.k${i}`])}) AS m${i}`);
      return;
    }
    // several columns: the parts (k<i>_<j>), and the key as a JSON array of them when one is not empty
    body.forEach((e, j) => keys.push(`${e} AS k${i}_${j}`));
    const parts = body.map((_, j) => `_k.k${i}_${j}`);
    const given = parts.map((e) => `${e} <> ''`).join(' OR ');
    cols.push(`CASE WHEN ${given} THEN json_build_array(${parts.join(', ')})::text END AS k${i}`);
    cols.push(`(SELECT ${OLDEST} FROM ${tableRef(schema, table)} AS _x WHERE ${stored(parts)} AND (${given})) AS m${i}`);
  });
  return `SELECT ${cols.join(', ')} FROM ${staged} AS _s CROSS JOIN LATERAL (SELECT ${keys.join(', ')} OFFSET 0) AS _k ORDER BY _s."pgrst_ord"`;
}

/** A row of matchLookup's answer. */
export type LookupRow = Record<string, unknown> & { o: number | string; id: string };

/** What the lookup decided: each moved row's new id (`[o, id]`), and how many rows collapsed into a later one. */
export interface Resolution {
  moves: Array<[number, string]>;
  collapsed: number;
}

/**
 * Each row's id, as if the body's rows were written one after another: per alternative in order,
 * a non-empty key names the stored record that has it, else the record an earlier row of the body
 * with that key became; the first such alternative decides. A row no alternative places keeps its
 * own id (a new record, or the stored record with that id). Rows that end on one id collapse to
 * the last of them (the insert reads the last, DISTINCT ON).
 * @example resolveIds([{ o: 1, id: 'a', k0: 'x', m0: null }, { o: 2, id: 'b', k0: 'x', m0: null }], 1) // { moves: [[2, 'a']], collapsed: 1 }
 */
export function resolveIds(rows: readonly LookupRow[], alternatives: number): Resolution {
  const seen = Array.from({ length: alternatives }, () => new Map<string, string>());
  const moves: Array<[number, string]> = [];
  const ids = new Set<string>();
  for (const row of rows) {
    let id: string | null = null;
    for (let i = 0; i < alternatives && id === null; i++) {
      const key = row[`k${i}`];
      if (typeof key !== 'string') continue;
      const stored = row[`m${i}`];
      id = typeof stored === 'string' ? stored : (seen[i].get(key) ?? null);
    }
    id ??= row.id;
    for (let i = 0; i < alternatives; i++) {
      const key = row[`k${i}`];
      if (typeof key === 'string' && !seen[i].has(key)) seen[i].set(key, id);
    }
    if (id !== row.id) moves.push([Number(row.o), id]);
    ids.add(id);
  }
  return { moves, collapsed: rows.length - ids.size };
}


/**
 * `unchanged=skip` on a matched merge: the staged rows equal to the stored record with their id,
 * deleted from the staging table once the match decided the ids, so that neither the link check
 * nor the insert reads them (an unchanged re-run then costs the match and one compare per row, as
 * a DBA's MERGE does). `held`: rows that stay whatever they hold (they move to another id, or
 * share one with another row of the body). Null when it does not apply: source ids must still be
 * merged for rows whose columns did not change.
 */
export function stagedUnchanged(plan: WritePlan, schema: string, staged: string, held: readonly number[]): { sql: string; params: unknown[] } | null {
  if (!plan.skipUnchanged || plan.sourceIds || plan.onConflict?.action !== 'merge' || plan.columns.length === 0) return null;
  const pk = plan.table.primaryKey;
  if (pk.length !== 1 || plan.onConflict.columns.length !== 1 || plan.onConflict.columns[0].name !== pk[0]) return null;
  if (!plan.columns.some((c) => c.name === pk[0])) return null;
  const cols = (t: string) => plan.columns.map((c) => `${t}.${ident(c.name)}`).join(', ');
  const key = ident(pk[0]);
  return {
    sql: `DELETE FROM ${staged} AS _b USING ${tableRef(schema, plan.table)} AS _x WHERE _x.${key} = _b.${key} AND NOT (_b."pgrst_ord" = ANY($1::bigint[])) AND (${cols('_x')}) IS NOT DISTINCT FROM (${cols('_b')})`,
    params: [`{${held.join(',')}}`],
  };
}
