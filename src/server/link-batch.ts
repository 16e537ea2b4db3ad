import { CREDIT_FIELDS, LINK_KEYS } from '../schema/links.js';
import { CHECKED_BATCH_SCHEMA, CHECKED_BATCH_SETTING } from '../schema/migrations-checked.js';
import { CREDIT_SHAPE_PATH, fastTracks } from '../schema/migrations-links.js';
import type { Queryable, Store } from '../store/store.js';
import type { WritePlan } from './plan.js';
import { ident } from './sql.js';

/**
 * A staged insert's link values checked as one set (issue 36), where the row triggers would check
 * them one row at a time: the staging table's link values are read in one statement that joins
 * the artists (or the tracks) once, and the rows whose values are not already canonical (an id
 * that names nothing, a key to resolve, a name that is not the artist's, a shape that does not
 * fit, tracks out of order) are given to the same functions the triggers call, in the body's
 * order: they raise the triggers' codes, paths and messages, or return the value the trigger would
 * have stored. The insert then runs with `catalog.checked_batch` set to this catalog's key, and
 * the row triggers skip its rows (migration 8, src/schema/migrations-checked.ts).
 *
 * A batch whose every link is canonical (a file of ids and the artists' names, an export of this
 * catalog) costs the one read: the rows' values are written as they are.
 */

/** The link columns an insert writes: a track's credit lists, a release's tracks. */
export function linkColumns(plan: WritePlan): string[] {
  const links: readonly string[] = plan.table.name === 'tracks' ? CREDIT_FIELDS : plan.table.name === 'releases' ? ['tracks'] : [];
  return plan.columns.map((c) => c.name).filter((n) => links.includes(n));
}

const keys = new WeakMap<Store, Promise<string | null>>();

/**
 * This catalog's key for checked batches, read once per store; null when the service's role may
 * not read it (it is not the role that migrated): its batches then go through the row triggers.
 */
export function batchKey(store: Store): Promise<string | null> {
  let key = keys.get(store);
  if (!key) {
    key = store
      .query<{ key: string }>(`SELECT key FROM ${ident(CHECKED_BATCH_SCHEMA)}.${ident(store.schema)} LIMIT 1`)
      .then((r) => r.rows[0]?.key ?? null)
      .catch(() => null);
    keys.set(store, key);
  }
  return key;
}

const array = (v: string) => `CASE WHEN jsonb_typeof(${v}) = 'array' THEN ${v} ELSE '[]'::jsonb END`;
const knownKeys = (e: string, list: readonly string[]) => `(${e} - '{${list.join(',')}}'::text[]) = '{}'::jsonb`;

/**
 * The staged rows a write reaches, as `_s`: `pgrst_tid` (the staged row), the link columns, and,
 * for an upsert, whether a stored row has the row's conflict key (`pgrst_stored`) and that row's
 * link values (`pgrst_old_<column>`). Rows `unchanged=skip` drops (equal to the stored row in
 * every written column, sql.ts dropUnchanged) are left out: they never reach the triggers.
 */
function reached(plan: WritePlan, schema: string, staging: string, cols: string[]): string {
  const linkCols = cols.map((c) => `_u.${ident(c)}`).join(', ');
  // with match= the ids are decided after staging (the staged id is not the row's): every row is taken as new
  const conflict = plan.match ? [] : (plan.onConflict?.columns ?? []);
  if (conflict.length === 0 || !conflict.every((k) => plan.columns.some((c) => c.name === k.name))) {
    return `(SELECT _u.ctid AS pgrst_tid, ${linkCols}, false AS pgrst_stored${cols.map((c) => `, NULL::jsonb AS ${ident(`pgrst_old_${c}`)}`).join('')} FROM ${staging} AS _u) AS _s`;
  }
  const on = conflict.map((k) => `_o.${ident(k.name)} = _u.${ident(k.name)}`).join(' AND ');
  const stored = `_o.${ident(conflict[0].name)} IS NOT NULL`;
  const same = `(${plan.columns.map((c) => `_o.${ident(c.name)}`).join(', ')}) IS NOT DISTINCT FROM (${plan.columns.map((c) => `_u.${ident(c.name)}`).join(', ')})`;
  const drop = plan.skipUnchanged && plan.onConflict?.action === 'merge' ? ` WHERE NOT (${stored} AND ${same})` : '';
  return `(SELECT _u.ctid AS pgrst_tid, ${linkCols}, ${stored} AS pgrst_stored${cols.map((c) => `, _o.${ident(c)} AS ${ident(`pgrst_old_${c}`)}`).join('')}
    FROM ${staging} AS _u LEFT JOIN ${ident(schema)}.${ident(plan.table.name)} AS _o ON ${on}${drop}) AS _s`;
}

/**
 * One read of a staged batch's credits, as migration 5's triggers would take its rows (one pass
 * over the elements, the artists joined once):
 * - `fix`: the rows (tid[] text, in order) with a list whose shape needs more than a glance (the
 *   insert trigger's own test: not an array, or migration 5's jsonpath finds an element; it goes
 *   to catalog_credits) or a name that is not the artist's;
 * - `inserted`: the first id that names no artist in a row the write will insert (`[field, index,
 *   id]`): the statement trigger refused it without the element;
 * - `updated`: the first row (`[field, tid]`) that will update a stored row with a changed list
 *   holding such an id: the update trigger's catalog_credits refuses it.
 * A list of the wrong shape is read as one element, JSON null: its row is fixed first, where
 * catalog_credits refuses what it must, as the insert trigger did before the statement trigger ran.
 * In the others every id is canonical (the jsonpath saw to it), so it is cast without a test.
 */
function creditsRead(plan: WritePlan, schema: string, staging: string, cols: string[]): string {
  const s = ident(schema);
  const values = cols.map((c, k) => `(${k}, '${c}', _s.${ident(c)}, _s.${ident(c)} IS DISTINCT FROM _s.${ident(`pgrst_old_${c}`)})`).join(', ');
  const list = `CASE WHEN _v.arr IS NULL THEN '[]'::jsonb WHEN jsonb_typeof(_v.arr) <> 'array' OR jsonb_path_exists(_v.arr, ${literal(CREDIT_SHAPE_PATH)}) THEN '[null]'::jsonb ELSE _v.arr END`;
  const missing = `NOT _e.bad AND _e.e ? 'id' AND _e.aid IS NULL`;
  return `SELECT
      coalesce(array_agg(DISTINCT _e.t ORDER BY _e.t) FILTER (WHERE _e.bad OR (_e.aid IS NOT NULL AND _e.e->>'name' IS DISTINCT FROM coalesce(_e.aname, ''))), '{}')::text AS fix,
      ((array_agg(json_build_array(_e.f, _e.n - 1, _e.e->>'id')::text ORDER BY _e.t, _e.k, _e.n) FILTER (WHERE ${missing} AND NOT _e.stored))[1]) AS inserted,
      ((array_agg(json_build_array(_e.f, _e.t::text)::text ORDER BY _e.t, _e.k, _e.n) FILTER (WHERE ${missing} AND _e.stored AND _e.changed))[1]) AS updated
    FROM (SELECT _s.pgrst_tid AS t, _s.pgrst_stored AS stored, _v.k, _v.f, _v.changed, _x.n, _x.e, _x.e = 'null'::jsonb AS bad, _a.id AS aid, _a.stage_name AS aname
      FROM ${reached(plan, schema, staging, cols)} CROSS JOIN LATERAL (VALUES ${values}) AS _v(k, f, arr, changed)
      CROSS JOIN LATERAL jsonb_array_elements(${list}) WITH ORDINALITY AS _x(e, n)
      LEFT JOIN ${s}.artists AS _a ON _a.id = (CASE WHEN _x.e ? 'id' THEN _x.e->>'id' END)::uuid) AS _e`;
}

const literal = (v: string) => `'${v.replace(/'/g, "''")}'`;

/** What the triggers store for one credits column of a row the read picked (`fix`). */
function creditsFixed(schema: string, col: string): string {
  const s = ident(schema);
  const v = `_s.${ident(col)}`;
  return `CASE WHEN ${v} IS NULL THEN NULL WHEN jsonb_typeof(${v}) <> 'array' OR jsonb_path_exists(${v}, ${literal(CREDIT_SHAPE_PATH)}) THEN ${s}.catalog_credits('${col}', ${v}) ELSE ${s}.catalog_credits_named(${v}) END`;
}

/**
 * A staged batch's credits, as migration 5's triggers took its rows: first the lists whose shape
 * needs more than a glance (catalog_credits, which raises with its path or resolves keys and
 * names; the others' names from the artists), in the body's order; then a changed list of a row
 * the write updates that names a missing artist (the update trigger's refusal); then the first
 * id of an inserted row that names no artist (the statement trigger's).
 */
async function checkCredits(tx: Queryable, plan: WritePlan, schema: string, staging: string, cols: string[]): Promise<void> {
  const r = (await tx.query<{ fix: string; inserted: string | null; updated: string | null }>(creditsRead(plan, schema, staging, cols))).rows[0];
  if (r && r.fix !== '{}') {
    // a TID scan visits the rows in order, each column as the trigger takes them
    const sets = cols.map((c) => `${ident(c)} = ${creditsFixed(schema, c)}`).join(', ');
    await tx.query(`UPDATE ${staging} AS _s SET ${sets} WHERE _s.ctid = ANY($1::tid[])`, [r.fix]);
  }
  if (r?.updated) {
    const [field, tid] = JSON.parse(r.updated) as [string, string];
    await tx.query(`SELECT ${ident(schema)}.catalog_credits($1, _s.${ident(field)}) FROM ${staging} AS _s WHERE _s.ctid = $2::tid`, [field, tid]);
  }
  if (r?.inserted) {
    const [field, i, id] = JSON.parse(r.inserted) as [string, number, string];
    await tx.query(`SELECT ${ident(schema)}.catalog_link_raise('23503', $1, $2, NULL, NULL)`, [`${field}[${i}].id`, `no artist has id ${id}`]);
  }
}

/**
 * The staged releases (tid) whose tracks are not canonical: every element an object of known
 * keys naming a track by its canonical id, with whole positions (and discs) from 1, no position
 * twice on a disc, in disc and position order. (The insert and update triggers check a release's
 * tracks alike.)
 */
function tracksFlagged(plan: WritePlan, schema: string, staging: string): string {
  const s = ident(schema);
  const from = reached(plan, schema, staging, ['tracks']);
  const ok = `CASE WHEN jsonb_typeof(_g.e) = 'object' AND ${knownKeys('_g.e', LINK_KEYS.tracks)} THEN
      _g.tid IS NOT NULL AND jsonb_typeof(_g.e->'id') = 'string' AND _g.e->>'id' = _g.tid::text
      AND _g.p IS NOT NULL AND (_g.e->'position')::text = _g.p::text
      AND (NOT _g.e ? 'disc' OR (_g.d IS NOT NULL AND (_g.e->'disc')::text = _g.d::text))
    ELSE false END`;
  return `SELECT _s.pgrst_tid AS t FROM ${from} WHERE _s."tracks" IS NOT NULL AND jsonb_typeof(_s."tracks") <> 'array'
    UNION SELECT _g.t FROM (SELECT _s.pgrst_tid AS t, _x.n, _x.e, _t.id AS tid, ${s}.catalog_link_count(_x.e->'position') AS p, ${s}.catalog_link_count(_x.e->'disc') AS d
        FROM ${from} CROSS JOIN LATERAL jsonb_array_elements(${array('_s."tracks"')}) WITH ORDINALITY AS _x(e, n)
        LEFT JOIN ${s}.tracks AS _t ON _t.id = ${s}.catalog_link_uuid(_x.e->'id')) AS _g
      GROUP BY _g.t
      HAVING NOT bool_and(coalesce(${ok}, false)) OR count(*) <> count(DISTINCT (coalesce(_g.d, 1), _g.p))
        OR array_agg(_g.n ORDER BY coalesce(_g.d, 1), _g.p, _g.n) <> array_agg(_g.n ORDER BY _g.n)`;
}

/**
 * Checks a staged insert's links (see the module comment) and marks the rest of the transaction
 * as a checked batch (the insert is its next and last write to a table with links). `staging` is the staging table.
 */
export async function checkBatch(tx: Queryable, plan: WritePlan, schema: string, staging: string, key: string): Promise<void> {
  const cols = linkColumns(plan);
  if (cols.length === 0) return;
  // JIT off: jsonb_array_elements is estimated at 100 rows a call, so a batch's read looks like
  // millions of rows and PostgreSQL compiled it for 0.6 s of a 0.75 s statement (5,000 tracks)
  await tx.query(`SELECT set_config('jit', 'off', true), set_config('work_mem', '64MB', true), set_config('${CHECKED_BATCH_SETTING}', $1, true)`, [key]);
  if (plan.table.name !== 'releases') return checkCredits(tx, plan, schema, staging, cols);
  const r = await tx.query<{ tids: string }>(`SELECT coalesce(array_agg(_f.t ORDER BY _f.t), '{}')::text AS tids FROM (${tracksFlagged(plan, schema, staging)}) AS _f`);
  const tids = r.rows[0]?.tids ?? '{}';
  if (tids === '{}') return;
  // in the body's order (a TID scan visits them sorted), as the trigger takes them
  await tx.query(`UPDATE ${staging} AS _s SET "tracks" = coalesce((${fastTracks('_s."tracks"')}), ${ident(schema)}.catalog_release_tracks(_s."tracks")) WHERE _s.ctid = ANY($1::tid[])`, [tids]);
}
