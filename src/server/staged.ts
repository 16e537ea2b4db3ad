import { SOURCE_IDS } from '../schema/source-ids.js';
import type { WritePlan } from './plan.js';
import { ident, stagedTarget, stagingTable, tableRef, type Statement } from './sql.js';

/**
 * A staged insert (plan.staged: the body carries source ids, or `match=` decides its ids): the
 * body's rows are first loaded into a session table with their order (`pgrst_ord`) and their
 * `source_ids`, every row given an id; the match reads and moves them there, and the insert
 * (sql.ts insertSource) and the source ids' merge (source-ids.ts) read them from there.
 */

/**
 * Makes this session's staging table when it has none: the table's columns without constraints or
 * defaults (as copyStage), `source_ids`, and `pgrst_ord` numbering rows as they arrive (a COPY
 * fills it in body order); a row of a body without ids gets a new one (the id's default). Emptied
 * at every commit.
 */
export function stagedCreate(plan: WritePlan, schema: string): string {
  return stagingTable(`pgrst_ext_${plan.table.name}`, `SELECT _t.*, NULL::jsonb AS ${ident(SOURCE_IDS)} FROM ${tableRef(schema, plan.table)} AS _t`, [
    `ALTER TABLE ${stagedTarget(plan)} ALTER COLUMN "id" SET DEFAULT gen_random_uuid()`,
  ]);
}

/** Whether the body leaves the id out: each row then gets a new one when staged (as the column default would give it). */
export function idsMissing(plan: WritePlan): boolean {
  return !(plan.payload?.keys ?? []).includes('id');
}

function defaultExpr(sql: string | undefined): string {
  // trusted text from the schema description, never request text
  return sql ?? 'NULL';
}

/**
 * A JSON body into the staging table, one statement (`$1`: the body's array): each object's
 * columns as `jsonb_populate_record` reads them (absent ones their default with missing=default),
 * its `source_ids`, its place in the body, and a new id when the body has none.
 */
export function stagedFillJson(plan: WritePlan, schema: string): Statement {
  const cols = plan.columns;
  const generate = idsMissing(plan);
  let n = 1;
  const params: unknown[] = [plan.payload?.json ?? '[]'];
  const exprs = cols.map((c) => {
    if (c.name === 'id' && generate) return 'gen_random_uuid()';
    if (plan.missingDefault) {
      params.push(c.name);
      return `CASE WHEN _o.obj ? $${++n}::text THEN _b.${ident(c.name)} ELSE ${defaultExpr(c.default)} END`;
    }
    return `_b.${ident(c.name)}`;
  });
  const names = [...cols.map((c) => ident(c.name)), ...(plan.sourceIds ? [ident(SOURCE_IDS)] : [])];
  if (plan.sourceIds) exprs.push(`_o.obj->'${SOURCE_IDS}'`);
  const sql = `INSERT INTO ${stagedTarget(plan)} ("pgrst_ord", ${names.join(', ')}) OVERRIDING SYSTEM VALUE SELECT _o.ord, ${exprs.join(', ')} FROM jsonb_array_elements($1::text::jsonb) WITH ORDINALITY AS _o(obj, ord), LATERAL jsonb_populate_record(NULL::${tableRef(schema, plan.table)}, _o.obj) AS _b`;
  return { sql, params };
}

/** A COPY body's columns in the staging table (its header's, `source_ids` included). */
export function stagedCopyColumns(plan: WritePlan): string[] {
  return (plan.payload?.copyColumns ?? plan.payload?.keys ?? []).map(ident);
}

