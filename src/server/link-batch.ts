import { CsvTokenizer, ESCAPED, fieldText, QUOTED, TOKENS_OK } from '../format/csv-tokens.js';
import { CREDIT_FIELDS, LINK_KEYS } from '../schema/links.js';
import { CHECKED_BATCH_SCHEMA, CHECKED_BATCH_SETTING, CREDIT_SHAPE_PATH, fastTracks, UUID_RE } from '../schema/in-database.js';
import { sqlString } from '../schema/model.js';
import type { Queryable, Store } from '../store/store.js';
import { plainCreditsCell, type CreditSink } from './credit-scan.js';
import type { CopyCells } from './payload.js';
import type { WritePlan } from './plan.js';
import { ident } from './sql.js';
import { nextTurn, SLICE_RECORDS } from '../shared/turns.js';

/**
 * A staged insert's link values checked as one set (issue 36), where the row triggers would check
 * them one row at a time: the staging table's link values are read in one statement that joins
 * the artists (or the tracks) once, and the rows whose values are not already canonical (an id
 * that names nothing, a key to resolve, a name that is not the artist's, a shape that does not
 * fit, tracks out of order) are given to the same functions the triggers call, in the body's
 * order: they raise the triggers' codes, paths and messages, or return the value the trigger would
 * have stored. The insert then runs with `catalog.checked_batch` set to this catalog's key, and
 * the row triggers skip its rows (migration 8, migrations/0008-checked-batches.sql).
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

/** The plan as a plain insert: its read takes every staged row as new (no lookup of stored rows, none dropped as unchanged). */
function asNew(plan: WritePlan): WritePlan {
  return { ...plan, onConflict: undefined, skipUnchanged: false };
}

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
  // a lookup per staged row (LATERAL … LIMIT 1: the key's index), never a scan of the table: the
  // planner hashed the whole table for every batch, a cost that grew with the catalog
  const stale = plan.columns.map((c) => `_o.${ident(c.name)}`).join(', ');
  return `(SELECT _u.ctid AS pgrst_tid, ${linkCols}, ${stored} AS pgrst_stored${cols.map((c) => `, _o.${ident(c)} AS ${ident(`pgrst_old_${c}`)}`).join('')}
    FROM ${staging} AS _u LEFT JOIN LATERAL (SELECT ${stale} FROM ${ident(schema)}.${ident(plan.table.name)} AS _o WHERE ${on} LIMIT 1) AS _o ON true${drop}) AS _s`;
}

/** The id form the jsonpath accepts (its like_regex), so the two tests cannot drift apart. */
const CANONICAL_UUID = new RegExp(UUID_RE);
const CREDIT_KEYS: ReadonlySet<string> = new Set(LINK_KEYS.credits);

/** A credit the jsonpath of migration 5 surely passes (stricter than it: any doubt is false). */
function plainCredit(e: unknown): boolean {
  if (typeof e !== 'object' || e === null || Array.isArray(e)) return false;
  const o = e as Record<string, unknown>;
  for (const k in o) if (!CREDIT_KEYS.has(k) || o[k] === null) return false;
  if (typeof o.name !== 'string' || /^[ ]*$/.test(o.name)) return false;
  if ('id' in o && !(typeof o.id === 'string' && CANONICAL_UUID.test(o.id))) return false;
  if ('role' in o && typeof o.role !== 'string') return false;
  return !('share' in o) || (typeof o.share === 'number' && o.share >= 0 && o.share <= 100);
}

/**
 * Whether a credit cell's text is a plain credit list, read as JSON (a number of 16 digits or more,
 * which JSON.parse could round, is in doubt). `ids` is told each credit with an id.
 */
export function plainCreditsText(text: string, ids?: CreditIds): boolean {
  if (/\d{16}/.test(text)) return false;
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return false;
  }
  if (!Array.isArray(v) || !v.every(plainCredit)) return false;
  for (const e of v as Array<{ id?: string; name: string }>) if (e.id !== undefined) ids?.add(e.id, e.name);
  return true;
}

/**
 * The credits with an id a batch's plain credit lists give, as the text of two PostgreSQL arrays
 * (ids, names) built from the body's bytes: no string or map entry per credit. A name read by the
 * byte reader holds no `"` or `\\` (it would be escaped in JSON, and escapes are left to JSON.parse),
 * so it goes into the array quoted as it is; one read by JSON.parse is escaped.
 */
export class CreditIds {
  private ids = Buffer.allocUnsafe(1 << 16);
  private names = Buffer.allocUnsafe(1 << 16);
  private idsAt = 0;
  private namesAt = 0;
  count = 0;

  private room(which: 'ids' | 'names', n: number): Buffer {
    const at = which === 'ids' ? this.idsAt : this.namesAt;
    if (at + n + 4 > this[which].length) this[which] = Buffer.concat([this[which].subarray(0, at), Buffer.allocUnsafe(Math.max(this[which].length, n + 4))]);
    return this[which];
  }

  /** The CreditSink of credit-scan.ts: the id's 36 bytes and the name's bytes, copied into the arrays. */
  readonly sink: CreditSink = (b, id, nameFrom, nameTo) => {
    const ids = this.room('ids', 37);
    ids[this.idsAt++] = this.count === 0 ? 0x7b : 0x2c;
    for (let j = 0; j < 36; j++) ids[this.idsAt++] = b[id + j];
    const names = this.room('names', nameTo - nameFrom + 3);
    names[this.namesAt++] = this.count === 0 ? 0x7b : 0x2c;
    names[this.namesAt++] = 0x22;
    for (let j = nameFrom; j < nameTo; j++) names[this.namesAt++] = b[j];
    names[this.namesAt++] = 0x22;
    this.count++;
  };

  /** A credit read by JSON.parse. */
  add(id: string, name: string): void {
    const n = Buffer.from(name.replace(/["\\]/g, (c) => `\\${c}`));
    const from = Buffer.concat([Buffer.from(id, 'latin1'), n]);
    this.sink(from, 0, 36, from.length);
  }

  /** The two arrays' text (ids as uuid[], names as text[]). */
  arrays(): [string, string] {
    if (this.count === 0) return ['{}', '{}'];
    return [`${this.ids.toString('latin1', 0, this.idsAt)}}`, `${this.names.toString('utf8', 0, this.namesAt)}}`];
  }
}

/**
 * Whether a COPY body of new tracks needs nothing from the credit triggers (the first read of
 * checkCredits, done in JavaScript): every credit list is plain, and every id names an artist
 * with the name the credit gives (one statement over the ids, answering one boolean). Then the
 * rest of the transaction is marked a checked batch (`key`), and the body can be copied straight
 * into the table: no staging table, no read joining the artists (per 5,000 tracks on the embedded
 * store, ~95 ms of ~155).
 */
export async function creditsCanonical(tx: Queryable, plan: WritePlan, schema: string, body: Uint8Array, key: string, credits = bodyCredits(body, plan, true)): Promise<boolean> {
  const { ids } = credits;
  if (plan.table.name !== 'tracks' || !credits.plain || !ids) return false;
  const mark = `set_config('${CHECKED_BATCH_SETTING}', $1, true)`;
  if (ids.count === 0) {
    await tx.query(`SELECT ${mark}`, [key]);
    return true;
  }
  // one statement: the check, and the mark only when it passes (one round trip less per batch)
  const sql = `SELECT CASE WHEN _k.ok THEN ${mark} IS NOT NULL ELSE false END AS ok
    FROM (SELECT NOT EXISTS (SELECT 1 FROM unnest($2::uuid[], $3::text[]) AS _c(id, name) LEFT JOIN ${ident(schema)}.artists AS _a ON _a.id = _c.id
      WHERE _a.id IS NULL OR coalesce(_a.stage_name, '') <> _c.name) AS ok) AS _k`;
  return (await tx.query<{ ok: boolean }>(sql, [key, ...ids.arrays()])).rows[0]?.ok === true;
}

/** A COPY body's credit lists, read once: whether every one is plain (copyCreditsPlain), and the credits with an id they give (when asked: creditsCanonical's). */
export interface BodyCredits {
  plain: boolean;
  ids: CreditIds | null;
}

/** Reads a COPY body's credit lists once for both the way straight into the table (`withIds`) and the staging path's read. */
export function bodyCredits(body: Uint8Array, plan: WritePlan, withIds: boolean): BodyCredits {
  const ids = withIds ? new CreditIds() : null;
  return { plain: copyCreditsPlain(body, plan, ids ?? undefined), ids };
}

/**
 * bodyCredits, reading the cells the payload's depth check found a slice of records at a time and
 * letting the event loop turn between slices (turns.ts); a body without them is read at once.
 */
export async function bodyCreditsSliced(body: Uint8Array, plan: WritePlan, withIds: boolean): Promise<BodyCredits> {
  const ids = withIds ? new CreditIds() : null;
  const { cols, at } = creditColumns(plan);
  const cells = at.length > 0 ? cellsOf(body, plan, cols, at) : null;
  if (!cells) return { plain: copyCreditsPlain(body, plan, ids ?? undefined), ids };
  for (let from = 0; from < cells.records; from += SLICE_RECORDS) {
    if (from > 0) await nextTurn();
    if (!indexedCreditsPlain(body, cells, cols, at, ids ?? undefined, from, Math.min(from + SLICE_RECORDS, cells.records))) return { plain: false, ids };
  }
  return { plain: true, ids };
}

/** The plan's columns, and where the credit lists are among them (none unless it writes tracks). */
function creditColumns(plan: WritePlan): { cols: string[]; at: number[] } {
  const cols = plan.columns.map((c) => c.name);
  const at = plan.table.name === 'tracks' ? cols.map((c, i) => (CREDIT_FIELDS.includes(c) ? i : -1)).filter((i) => i >= 0) : [];
  return { cols, at };
}

/**
 * Whether every credit list of a COPY body is one the database's shape test (migration 5's
 * jsonpath) surely passes, read here in JavaScript (where the jsonpath took half of the embedded
 * store's batch read): then the read leaves the test out. A cell is read from its bytes
 * (credit-scan.ts: 5,000 rows of the bench's tracks in ~10 ms with the tokenizer, 32 ms through
 * JSON.parse); what that does not read to the end goes through JSON.parse (plainCreditsText).
 * Anything in doubt (a cell that is no JSON array, a number of 16 digits or more whose value
 * JSON.parse could round, a record the tokenizer cannot read) answers false and the database tests
 * the batch.
 */
export function copyCreditsPlain(body: Uint8Array, plan: WritePlan, ids?: CreditIds): boolean {
  const { cols, at } = creditColumns(plan);
  if (at.length === 0) return false;
  const cells = cellsOf(body, plan, cols, at);
  if (cells) return indexedCreditsPlain(body, cells, cols, at, ids, 0, cells.records);
  const t = new CsvTokenizer();
  let p = 0;
  let header = true;
  while (p < body.length) {
    if (t.read(body, p, body.length, true) !== TOKENS_OK || t.next <= p) return false;
    p = t.next;
    if (header || (t.count === 1 && t.to(0) === t.from(0))) {
      header = false;
      continue;
    }
    if (t.count !== cols.length) return false;
    for (const f of at) {
      if (!creditCellPlain(body, t.from(f), t.to(f), t.flags[f], ids)) return false;
    }
  }
  return true;
}

/** The payload's cell index (payload.ts CopyCells) when it is of this body and these columns and holds every credit field; else null (the body is read itself). */
function cellsOf(body: Uint8Array, plan: WritePlan, cols: string[], at: number[]): CopyCells | null {
  const cells = plan.payload?.copy === body ? plan.payload.copyCells : undefined;
  if (!cells) return null;
  return cells.keys.length === cols.length && cells.keys.every((k, i) => k === cols[i]) && at.every((f) => cells.columns.includes(cols[f])) ? cells : null;
}

/** copyCreditsPlain over the cells the payload's depth check found (records `from` to `to`): the body is not tokenized again. */
function indexedCreditsPlain(body: Uint8Array, cells: CopyCells, cols: string[], at: number[], ids: CreditIds | undefined, from: number, to: number): boolean {
  const width = cells.columns.length;
  const js = at.map((f) => cells.columns.indexOf(cols[f]));
  for (let r = from; r < to; r++) {
    const count = cells.counts[r];
    if (count === 0) continue; // a blank line
    if (count !== cols.length) return false;
    for (const j of js) {
      const k = r * width + j;
      if (!creditCellPlain(body, cells.at[k * 2], cells.at[k * 2 + 1], cells.flags[k], ids)) return false;
    }
  }
  return true;
}

/** One credit cell: NULL, or a list plainCreditsCell reads to the end, or one plainCreditsText passes. */
function creditCellPlain(body: Uint8Array, from: number, to: number, flags: number, ids?: CreditIds): boolean {
  if (!(flags & QUOTED) && to === from) return true; // NULL
  if (plainCreditsCell(body, from, to, (flags & ESCAPED) !== 0, ids?.sink)) return true;
  return plainCreditsText(fieldText(body, from, to, (flags & ESCAPED) !== 0), ids);
}

/**
 * One read of a staged batch's credits, as migration 5's triggers would take its rows (per row:
 * one jsonpath test over its lists, one pass over their elements; the artists joined once):
 * - `fix`: the rows (tid[] text, in order) with a list whose shape needs more than a glance (the
 *   insert trigger's own test: not an array, or migration 5's jsonpath finds an element; the
 *   trigger gives it to catalog_credits) or with a name that is not its artist's;
 * - `inserted`: the first row the write will insert with an id that names no artist (the
 *   statement trigger refused it);
 * - `updated`: the first row that will update a stored row, with changed lists, one of them
 *   holding such an id (the update trigger's catalog_credits refuses it).
 * A row with a list of the wrong shape is read as one element: it is fixed first (and read
 * again), where catalog_credits refuses what it must. In the others every id is canonical (the
 * jsonpath saw to it), so it is cast without a test. (OFFSET 0: the row's test is made once, not
 * again for each of its elements, as the planner had it when it inlined the subquery.)
 */
function creditsRead(plan: WritePlan, schema: string, staging: string, cols: string[], plain: boolean): string {
  const s = ident(schema);
  const col = (c: string) => `_s.${ident(c)}`;
  const notArray = cols.map((c) => `(${col(c)} IS NOT NULL AND jsonb_typeof(${col(c)}) <> 'array')`).join(' OR ');
  const all = cols.map((c) => array(col(c))).join(' || ');
  const changed = `(${cols.map(col).join(', ')}) IS DISTINCT FROM (${cols.map((c) => `_s.${ident(`pgrst_old_${c}`)}`).join(', ')})`;
  const missing = `NOT _e.bad AND _e.e ? 'id' AND _e.aid IS NULL`;
  const first = (cond: string) => `((array_agg(_e.t ORDER BY _e.t) FILTER (WHERE ${cond}))[1])::text`;
  return `SELECT
      coalesce(array_agg(DISTINCT _e.t ORDER BY _e.t) FILTER (WHERE _e.bad OR (_e.aid IS NOT NULL AND _e.e->>'name' IS DISTINCT FROM coalesce(_e.aname, ''))), '{}')::text AS fix,
      ${first(`${missing} AND NOT _e.stored`)} AS inserted,
      ${first(`${missing} AND _e.stored AND _e.changed`)} AS updated
    FROM (SELECT _s.pgrst_tid AS t, _s.pgrst_stored AS stored, ${changed} AS changed, _x.e, _b.bad, _a.id AS aid, _a.stage_name AS aname
      FROM ${reached(plan, schema, staging, cols)}
      CROSS JOIN LATERAL (SELECT _l.all_ AS all_, ${notArray}${plain ? '' : ` OR jsonb_path_exists(_l.all_, ${sqlString(CREDIT_SHAPE_PATH)})`} AS bad
        FROM (SELECT ${all} AS all_) AS _l OFFSET 0) AS _b
      CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN _b.bad THEN '[null]'::jsonb ELSE _b.all_ END) AS _x(e)
      LEFT JOIN ${s}.artists AS _a ON _a.id = (CASE WHEN NOT _b.bad AND _x.e ? 'id' THEN _x.e->>'id' END)::uuid) AS _e`;
}

/** What the triggers store for one credits column of a row the read picked (`fix`). */
function creditsFixed(schema: string, col: string): string {
  const s = ident(schema);
  const v = `_s.${ident(col)}`;
  return `CASE WHEN ${v} IS NULL THEN NULL WHEN jsonb_typeof(${v}) <> 'array' OR jsonb_path_exists(${v}, ${sqlString(CREDIT_SHAPE_PATH)}) THEN ${s}.catalog_credits('${col}', ${v}) ELSE ${s}.catalog_credits_named(${v}) END`;
}

/** The first id of a staged row (`$1`, a tid) that names no artist: `[field, index, id]` text, or no row. */
function firstMissing(schema: string, staging: string, cols: string[]): string {
  const s = ident(schema);
  const values = cols.map((c, k) => `(${k}, '${c}', _s.${ident(c)})`).join(', ');
  return `SELECT json_build_array(_v.f, _x.n - 1, _x.e->>'id')::text AS missing FROM ${staging} AS _s
    CROSS JOIN LATERAL (VALUES ${values}) AS _v(k, f, arr)
    CROSS JOIN LATERAL jsonb_array_elements(${array('_v.arr')}) WITH ORDINALITY AS _x(e, n)
    WHERE _s.ctid = $1::tid AND jsonb_typeof(_x.e) = 'object' AND _x.e ? 'id'
      AND NOT EXISTS (SELECT 1 FROM ${s}.artists AS _a WHERE _a.id = ${s}.catalog_link_uuid(_x.e->'id'))
    ORDER BY _v.k, _x.n LIMIT 1`;
}

type CreditsRead = { fix: string; inserted: string | null; updated: string | null };

/**
 * A staged batch's credits, as migration 5's triggers took its rows: first the lists whose shape
 * needs more than a glance (catalog_credits, which raises with its path or resolves keys and
 * names; the others' names from the artists), in the body's order; then a changed list of a row
 * the write updates that names a missing artist (the update trigger's refusal, element and all);
 * then the first id of an inserted row that names no artist (the statement trigger's, without).
 */
async function checkCredits(tx: Queryable, plan: WritePlan, schema: string, staging: string, cols: string[], plain: boolean): Promise<void> {
  // first as if every row were new (no lookup of the stored rows): when that finds nothing to fix
  // or refuse in any row, nothing is found in the rows the write reaches either, stored or not
  const quick = (await tx.query<CreditsRead>(creditsRead(asNew(plan), schema, staging, cols, plain))).rows[0];
  if (!quick || (quick.fix === '{}' && !quick.inserted)) return;
  const read = creditsRead(plan, schema, staging, cols, plain);
  let r = (await tx.query<CreditsRead>(read)).rows[0];
  if (r && r.fix !== '{}') {
    // a TID scan visits the rows in order, each column as the trigger takes them; then the fixed rows are read again
    const sets = cols.map((c) => `${ident(c)} = ${creditsFixed(schema, c)}`).join(', ');
    await tx.query(`UPDATE ${staging} AS _s SET ${sets} WHERE _s.ctid = ANY($1::tid[])`, [r.fix]);
    r = (await tx.query<CreditsRead>(read)).rows[0];
  }
  if (r?.updated) {
    // the row's changed lists through catalog_credits, in order: it raises at the id
    const calls = cols.map((c) => `CASE WHEN _s.${ident(c)} IS DISTINCT FROM _s.${ident(`pgrst_old_${c}`)} THEN ${ident(schema)}.catalog_credits('${c}', _s.${ident(c)}) END`);
    await tx.query(`SELECT ${calls.join(', ')} FROM ${reached(plan, schema, staging, cols)} WHERE _s.pgrst_tid = $1::tid`, [r.updated]);
  }
  if (r?.inserted) {
    const missing = (await tx.query<{ missing: string }>(firstMissing(schema, staging, cols), [r.inserted])).rows[0]?.missing;
    if (missing) {
      const [field, i, id] = JSON.parse(missing) as [string, number, string];
      await tx.query(`SELECT ${ident(schema)}.catalog_link_raise('23503', $1, $2, NULL, NULL)`, [`${field}[${i}].id`, `no artist has id ${id}`]);
    }
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
 * as a checked batch (the insert is its next and last write to a table with links). `staging` is
 * the staging table; `plain`: copyCreditsPlain found every credit list plain (the shape test is left out).
 */
export async function checkBatch(tx: Queryable, plan: WritePlan, schema: string, staging: string, key: string, plain = false): Promise<void> {
  const cols = linkColumns(plan);
  if (cols.length === 0) return;
  // JIT off: jsonb_array_elements is estimated at 100 rows a call, so a batch's read looks like
  // millions of rows and PostgreSQL compiled it for 0.6 s of a 0.75 s statement (5,000 tracks)
  await tx.query(`SELECT set_config('jit', 'off', true), set_config('${CHECKED_BATCH_SETTING}', $1, true)`, [key]);
  if (plan.table.name !== 'releases') return checkCredits(tx, plan, schema, staging, cols, plain);
  const flagged = async (p: WritePlan) =>
    (await tx.query<{ tids: string }>(`SELECT coalesce(array_agg(_f.t ORDER BY _f.t), '{}')::text AS tids FROM (${tracksFlagged(p, schema, staging)}) AS _f`)).rows[0]?.tids ?? '{}';
  // as for credits: first without looking up the stored rows, which only `unchanged=skip` needs
  if ((await flagged(asNew(plan))) === '{}') return;
  const tids = await flagged(plan);
  if (tids === '{}') return;
  // in the body's order (a TID scan visits them sorted), as the trigger takes them
  await tx.query(`UPDATE ${staging} AS _s SET "tracks" = coalesce((${fastTracks('_s."tracks"')}), ${ident(schema)}.catalog_release_tracks(_s."tracks")) WHERE _s.ctid = ANY($1::tid[])`, [tids]);
}
