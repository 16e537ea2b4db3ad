import type { Preferences } from '../grammar/types.js';
import type { ColumnDef, TableDef } from '../schema/catalog.js';
import { keyExpressions, keyMatchSql, MATCH_PREFERENCE, parseMatch, renderMatch, type MatchAlternative } from '../schema/match.js';
import { SOURCE_IDS, sourceIdsTable } from '../schema/source-ids.js';
import { ApiError } from './errors.js';
import { ident, tableRef } from './sql.js';

/**
 * `Prefer: match=` on the service's side (the grammar is src/schema/match.ts): an upsert whose
 * rows find their stored record where the write happens. Under a lock per table's keys, each
 * body row's alternatives are looked up in order (an index scan each, migration 6's key
 * indexes); the first that is not empty and names a stored record (or a record an earlier row of
 * the body became) gives the row its id; otherwise the body's id is kept, a proposal for a new
 * record. docs/service.md ("Bulk extensions") states the contract.
 */

/** An alternative resolved against the table: a source's id, or key columns. */
export type PlannedMatch = { kind: 'source'; source: string } | { kind: 'key'; columns: ColumnDef[] };

/**
 * The first `match=` token of `Prefer` and the preferences without any (the grammar's parser
 * knows no `match` and lists it as invalid: it is ours, and valid, even with handling=strict).
 * @example takeMatch({ invalid: ['match=isrc_code'] }) // { value: 'isrc_code', prefs: { invalid: [] } }
 */
export function takeMatch(prefs: Preferences): { value: string | null; prefs: Preferences } {
  const mine = (t: string) => t.startsWith(`${MATCH_PREFERENCE}=`);
  const token = prefs.invalid.find(mine);
  if (token === undefined) return { value: null, prefs };
  return { value: token.slice(MATCH_PREFERENCE.length + 1), prefs: { ...prefs, invalid: prefs.invalid.filter((t) => !mine(t)) } };
}

/** 400 PGRST100, as for any part of a request that does not parse. */
function matchError(value: string, details: string): ApiError {
  return new ApiError(400, 'PGRST100', `"failed to parse Prefer match (${value})"`, {
    details,
    hint: 'match=ALT|ALT…, each ALT source_ids.<source> or columns joined by +, e.g. match=source_ids.legacy|isrc_code',
  });
}

/**
 * A `match=` value resolved against the table: its columns must exist (42703 as in `select`), and
 * the write it steers must upsert on the primary key (it decides ids).
 */
export function planMatch(table: TableDef, value: string, conflictColumns: readonly string[]): PlannedMatch[] {
  const alts: MatchAlternative[] | { error: string } = parseMatch(value);
  if ('error' in alts) throw matchError(value, alts.error);
  const pk = table.primaryKey;
  if (pk.length !== 1 || conflictColumns.length !== 1 || conflictColumns[0] !== pk[0]) {
    throw matchError(value, `match= decides each row's ${pk.join(', ') || 'key'}: the upsert must be on the primary key (leave on_conflict out)`);
  }
  return alts.map((a): PlannedMatch => {
    if (a.kind === 'source') return a;
    return {
      kind: 'key',
      columns: a.columns.map((name) => {
        const c = table.columns.find((col) => col.name === name);
        if (!c) throw new ApiError(400, '42703', `column ${table.name}.${name} does not exist`, { hint: `match=${value}: a key is made of ${table.name}'s columns` });
        return c;
      }),
    };
  });
}

/** The `match=` value as Preference-Applied echoes it. */
export function renderPlannedMatch(alts: readonly PlannedMatch[]): string {
  return renderMatch(alts.map((a) => (a.kind === 'source' ? a : { kind: 'key', columns: a.columns.map((c) => c.name) })));
}

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
      cols.push(`_k.k${i}`, `(SELECT _x."id"::text FROM ${tableRef(schema, table)} AS _x WHERE ${stored([`_k.k${i}`])} ORDER BY _x."created", _x."id" LIMIT 1) AS m${i}`);
      return;
    }
    // several columns: the parts (k<i>_<j>), and the key as a JSON array of them when one is not empty
    body.forEach((e, j) => keys.push(`${e} AS k${i}_${j}`));
    const parts = body.map((_, j) => `_k.k${i}_${j}`);
    const given = parts.map((e) => `${e} <> ''`).join(' OR ');
    cols.push(`CASE WHEN ${given} THEN json_build_array(${parts.join(', ')})::text END AS k${i}`);
    cols.push(`(SELECT _x."id"::text FROM ${tableRef(schema, table)} AS _x WHERE ${stored(parts)} AND (${given}) ORDER BY _x."created", _x."id" LIMIT 1) AS m${i}`);
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
 * Stand-ins in a staged insert's parameters for the moves' rows and ids (`bigint[]`, `uuid[]`),
 * which the statement joins to the staged rows: known only once the match has run (execute.ts
 * puts them in), where an UPDATE of the staged rows cost more than the rest of a batch's match.
 */
export const MOVED_ROWS = Symbol('moved rows');
export const MOVED_IDS = Symbol('moved ids');

/** The staged rows with each moved row's new id (`id`), as a FROM item (`_b`); `add` binds the moves. */
export function movedRows(staged: string, add: (v: unknown) => string): { from: string; id: string } {
  return {
    from: `${staged} AS _b LEFT JOIN unnest(${add(MOVED_ROWS)}::bigint[], ${add(MOVED_IDS)}::uuid[]) AS _m(o, id) ON _m.o = _b."pgrst_ord"`,
    id: `coalesce(_m.id, _b."id")`,
  };
}

/** The moves as the statement's parameters (see MOVED_ROWS). */
export function bindMoves(params: readonly unknown[], moves: ReadonlyArray<[number, string]>): unknown[] {
  const rows = moves.map((m) => m[0]);
  const ids = moves.map((m) => m[1]);
  return params.map((v) => (v === MOVED_ROWS ? `{${rows.join(',')}}` : v === MOVED_IDS ? `{${ids.join(',')}}` : v));
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

