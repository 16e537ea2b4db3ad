import { MAX_SOURCE_ID, SOURCE_IDS, sourceIdsProblem, sourceIdsTable } from '../schema/source-ids.js';
import { ApiError } from './errors.js';
import { sourceIdsError } from './payload.js';
import type { WritePlan } from './plan.js';
import { arrayLiteral, ident, MOVED_ROWS, movedRows, Params, stagedTarget, type Statement } from './sql.js';

/**
 * Writing source ids (src/schema/source-ids.ts) after the rows they name: the body's entries for
 * each written record replace that source's entry (null removes it), other sources' entries stay.
 * Two statements in the write's transaction: the first finds a source id the body gives to a
 * record while another record holds it (409 23505, both named) and removes the entries being
 * replaced; the second adds the new ones. A race with a writer outside `match=`'s lock ends in
 * the side table's unique index (409 23505 as PostgreSQL words it).
 */

/** The (record, source, source_id) entries a write gives, as a query; its parameters go to `p`. */
function givenSql(plan: WritePlan, p: Params, ids: readonly string[], moves: ReadonlyArray<[number, string]>): string {
  if (plan.staged) {
    // one object per record (its id as the match decided): rows of a body that ended on one id collapse to the last
    const moved = movedRows(stagedTarget(plan), (v) => p.add(v === MOVED_ROWS ? `{${moves.map((m) => m[0]).join(',')}}` : `{${moves.map((m) => m[1]).join(',')}}`));
    const last = `SELECT DISTINCT ON (${moved.id}) ${moved.id} AS record, _b.${ident(SOURCE_IDS)} AS ids FROM ${moved.from} ORDER BY ${moved.id}, _b."pgrst_ord" DESC`;
    return `SELECT _l.record, _e.key AS source, _e.value AS source_id FROM (${last}) AS _l CROSS JOIN LATERAL jsonb_each_text(CASE WHEN jsonb_typeof(_l.ids) = 'object' THEN _l.ids END) AS _e`;
  }
  const object = plan.payload?.first?.[SOURCE_IDS] ?? null;
  return `SELECT _k.record, _e.key AS source, _e.value AS source_id FROM unnest(${p.add(arrayLiteral([...ids]))}::uuid[]) AS _k(record) CROSS JOIN jsonb_each_text(${p.add(JSON.stringify(object))}::text::jsonb) AS _e`;
}

/**
 * The statements that merge a write's source ids: `check` answers one row with `conflict` (JSON
 * of the first source id the body gives away while another record keeps it, or null) and removes
 * the entries the body replaces; `add` inserts the new entries. `ids`: the written records (a
 * PATCH or PUT gives each the body's one object; a staged insert reads its rows' own).
 */
export function mergeSourceIds(plan: WritePlan, schema: string, ids: readonly string[], moves: ReadonlyArray<[number, string]> = []): { check: Statement; add: Statement } {
  const side = sourceIdsTable(schema);
  const collection = `'${plan.table.name}'`; // a collection's name, from the schema description
  const p1 = new Params(schema);
  const g1 = givenSql(plan, p1, ids, moves);
  const check = `WITH _g AS MATERIALIZED (${g1}),
_c AS (
  SELECT _g.source, _g.source_id, _g.record::text AS given_to, _s.record::text AS held_by FROM _g
  JOIN ${side} AS _s ON _s.collection = ${collection} AND _s.source = _g.source AND _s.source_id = _g.source_id
  WHERE _s.record <> _g.record
    AND NOT EXISTS (SELECT 1 FROM _g AS _h WHERE _h.record = _s.record AND _h.source = _s.source AND _h.source_id IS DISTINCT FROM _s.source_id)
  UNION ALL
  SELECT _a.source, _a.source_id, _a.record::text, _b.record::text FROM _g AS _a
  JOIN _g AS _b ON _b.source = _a.source AND _b.source_id = _a.source_id AND _b.record < _a.record
),
_d AS (DELETE FROM ${side} AS _s USING _g WHERE _s.collection = ${collection} AND _s.record = _g.record AND _s.source = _g.source AND _s.source_id IS DISTINCT FROM _g.source_id RETURNING 1)
SELECT (SELECT row_to_json(_c)::text FROM _c LIMIT 1) AS conflict, (SELECT count(*) FROM _d) AS removed`;
  const p2 = new Params(schema);
  const g2 = givenSql(plan, p2, ids, moves);
  const add = `WITH _g AS (${g2}) INSERT INTO ${side} (collection, source, source_id, record)
SELECT ${collection}, _g.source, _g.source_id, _g.record FROM _g WHERE _g.source_id IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM ${side} AS _s WHERE _s.collection = ${collection} AND _s.source = _g.source AND _s.source_id = _g.source_id AND _s.record = _g.record)`;
  return { check: { sql: check, params: p1.values }, add: { sql: add, params: p2.values } };
}

/** 409 23505 for a source id the body gives to one record while another holds it (or two rows give it to two). */
export function sourceIdConflict(table: string, c: { source: string; source_id: string; given_to: string; held_by: string }): ApiError {
  return new ApiError(409, '23505', `the source id ${c.source} "${c.source_id}" already names another record of ${table}`, {
    details: `Key (collection, source, source_id)=(${table}, ${c.source}, ${c.source_id}) names ${c.held_by}; the body gives it to ${c.given_to} too. A source id names one record.`,
    hint: `Take it off ${c.held_by} first (PATCH it with "source_ids": {"${c.source}": null}), or send the row with that record's id (or with Prefer: match=source_ids.${c.source}).`,
  });
}

/**
 * A COPY body's first `source_ids` cell that does not fit the shape (JSON text of the wrong kind):
 * `o` (its row, from 1) and `ids` (the value). The rule is sourceIdsProblem's, written in SQL, which the
 * caller asks again for the exact message.
 */
export function copyShapeCheck(plan: WritePlan): string {
  const v = `_s.${ident(SOURCE_IDS)}`;
  const entryOk = `_e.key ~ '^[A-Za-z0-9_-]{1,64}$' AND CASE jsonb_typeof(_e.value) WHEN 'null' THEN true WHEN 'string' THEN (_e.value #>> '{}') <> '' AND length(_e.value #>> '{}') <= ${MAX_SOURCE_ID} ELSE false END`;
  const bad = `CASE WHEN jsonb_typeof(${v}) <> 'object' THEN true ELSE EXISTS (SELECT 1 FROM jsonb_each(${v}) AS _e WHERE NOT (${entryOk})) END`;
  // the row's place in this body (pgrst_ord goes on counting across transactions)
  const rows = `SELECT row_number() OVER (ORDER BY _s."pgrst_ord") AS o, ${v} FROM ${stagedTarget(plan)} AS _s`;
  return `SELECT _s.o, ${v}::text AS ids FROM (${rows}) AS _s WHERE ${v} IS NOT NULL AND jsonb_typeof(${v}) <> 'null' AND ${bad} ORDER BY _s.o LIMIT 1`;
}

/** The 400 23514 of copyShapeCheck's row. */
export function copyShapeError(row: { o: number | string; ids: string }): ApiError {
  const value = JSON.parse(row.ids) as unknown;
  const problem = sourceIdsProblem(value) ?? { path: SOURCE_IDS, reason: 'does not fit the shape' };
  return sourceIdsError(Number(row.o) - 1, problem, value);
}
