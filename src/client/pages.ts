import { compileQuery } from '../grammar/compile.js';
import type { Filter, Query, SelectItem, WhereClause } from '../grammar/types.js';
import { normalizeUuid } from '../schema/codecs.js';
import { splitLongQuery } from './in-list.js';
import { renderPrefer } from '../grammar/prefer.js';
import { parseContentRange } from '../grammar/range.js';
import { faultCode, faultOf, type HttpResponse, type Transport } from './transport.js';

/**
 * The one pager of the read side (`list --all`, `export`, `check`): pages of a read, by keyset or
 * offset, two ahead of the one being handled, in constant memory.
 */

/** What paging needs to know of a collection (a TableDef of the table model, src/schema/model.ts). */
export interface PagedTable {
  name: string;
  primaryKey: string[];
}

/** A paged read that failed (the service answered an error). */
export class ExportError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string,
  ) {
    super(message);
    this.name = 'ExportError';
  }
}

export interface PageOptions {
  transport: Transport;
  table: PagedTable;
  /** Filters, select and order as `list` builds them; its page clause is the overall limit/offset. */
  query: Query;
  pageSize?: number;
  signal?: AbortSignal;
  /** Called after each page with the rows read so far. */
  onPage?: (rowsSoFar: number) => void;
  /** Asks the first page for a count of every matching row, handed to `onTotal` (null when the service gave none). */
  count?: 'exact' | 'planned' | 'estimated';
  onTotal?: (total: number | null) => void;
  /** The error of a page the service refused (default: an ExportError naming the collection). */
  fault?: (res: HttpResponse) => Error;
}

/** Rows per page unless told (`--page-size`). */
export const DEFAULT_PAGE = 2000;
/** Pages requested ahead of the one being written (the service, the database and this process each work on one). */
const AHEAD = 2;

function selectsField(items: SelectItem[] | undefined, name: string): boolean {
  if (!items) return true;
  return items.some((i) => i.type === 'star' || (i.type === 'field' && i.field.name === name && i.field.jsonPath.length === 0 && !i.alias && !i.cast));
}

/** How one kind of page body is asked for and read. */
export interface PageFormat<T> {
  accept: string;
  /** Whether `parse` takes the body's bytes when the transport has them (else the text). */
  bytes?: boolean;
  /**
   * Reads a page body: what the caller gets, its row count, and the key of its last row (keyset
   * paging; ignored when paging by offset). `stripKey` names a key column added only for paging.
   * With `overlap` the first row only repeats the previous page's last: it is left out (and not
   * counted), its key returned as `firstKey` (undefined when the body has no rows).
   */
  parse(body: string | Uint8Array, pk: string | null, stripKey: string | null, overlap?: boolean): { page: T; count: number; lastKey: unknown; firstKey?: unknown };
}

/** The body of a response as received, when the transport kept it (the CLI's HTTP client does). */
function bytesOf(res: HttpResponse): Uint8Array | undefined {
  return (res as HttpResponse & { bytes?: Uint8Array }).bytes;
}

/** JSON pages as row objects. */
export const jsonPages: PageFormat<Record<string, unknown>[]> = {
  accept: 'application/json',
  parse(body, pk, stripKey, overlap) {
    const rows = JSON.parse(typeof body === 'string' ? body : new TextDecoder().decode(body)) as Record<string, unknown>[];
    const lastKey = pk && rows.length ? rows[rows.length - 1][pk] : null;
    const firstKey = overlap ? (pk ? rows.shift()?.[pk] : undefined) : undefined;
    if (stripKey) for (const r of rows) delete r[stripKey];
    return { page: rows, count: rows.length, lastKey, firstKey };
  },
};

/**
 * Every matching row, page by page, in constant memory. Without an explicit order it pages by
 * keyset on the primary key (`id=gt.<last>&order=id&limit=N`: stable while others write, and each
 * page costs the same however deep); with an order it pages by offset, the key appended as a
 * tie-breaker so pages neither skip nor repeat rows. Two more pages are on their way while the
 * caller handles one (see pagesOf).
 */
export function exportPages(opts: PageOptions): AsyncGenerator<Record<string, unknown>[]> {
  return pagesOf(opts, jsonPages);
}

/** Whether paging this query needs the key added to its select (and so to every row). */
export function pagingAddsKey(table: PagedTable, query: Query): boolean {
  const root = query.page.find((p) => p.path.length === 0);
  const userOrder = query.order.some((o) => o.path.length === 0);
  const pk = table.primaryKey.length === 1 ? table.primaryKey[0] : null;
  const keyset = Boolean(pk) && !userOrder && (root?.offset ?? 0) === 0;
  return keyset && !selectsField(query.select, pk!);
}

/**
 * The order an export reads rows in: the user's order with the key appended as a tie-breaker, or
 * the key alone (so pages neither skip nor repeat rows, and every way of reading gives one order).
 */
export function exportOrder(table: PagedTable, query: Query): Query['order'] {
  const userOrder = query.order.some((o) => o.path.length === 0);
  const tiebreak = table.primaryKey.map((name) => ({ field: { name, jsonPath: [] } }));
  return userOrder
    ? query.order.map((o) => (o.path.length === 0 ? { ...o, terms: [...o.terms, ...tiebreak] } : o))
    : [...query.order, { path: [], terms: tiebreak }];
}

/** A page request on its way: how many rows it is for, and whether its first row repeats the last one before it. */
interface InFlight<T> {
  want: number;
  overlap: boolean;
  result: Promise<{ page: T; count: number; lastKey: unknown; firstKey?: unknown }>;
}

/** Where the page loop stands: rows handed out so far, and the key of the last one. */
interface PageState {
  read: number;
  lastKey: unknown;
}

/**
 * The page requests of one export: `request(start)` asks for the rows from `start` on (null past
 * the limit). Keyset paging (by the primary key, when the user gave no order or offset) asks
 * after the last key handed out; a page further ahead starts one row before its first row, so
 * that row must come back as the key it follows, or rows moved in between.
 */
function pageRequester<T>(opts: PageOptions, format: PageFormat<T>, state: PageState) {
  const { table, query } = opts;
  const pageSize = Math.max(1, opts.pageSize ?? DEFAULT_PAGE);
  const root = query.page.find((p) => p.path.length === 0);
  const limit = root?.limit;
  const offset0 = root?.offset ?? 0;
  const page = query.page.filter((p) => p.path.length > 0);
  const userOrder = query.order.some((o) => o.path.length === 0);
  const pk = table.primaryKey.length === 1 ? table.primaryKey[0] : null;
  const keyset = Boolean(pk) && !userOrder && offset0 === 0;
  // keyset needs the key in every row; strip it again if the user did not select it
  const addKey = pagingAddsKey(table, query);
  const select: SelectItem[] | undefined = addKey ? [...(query.select ?? []), { type: 'field', field: { name: pk!, jsonPath: [] } }] : query.select;
  const order = exportOrder(table, query);
  const request = (start: number): InFlight<T> | null => {
    if (limit !== undefined && start >= limit) return null;
    const want = limit === undefined ? pageSize : Math.min(pageSize, limit - start);
    const skip = start - state.read;
    const overlap = keyset && skip > 0;
    const where: WhereClause[] =
      keyset && state.lastKey !== null
        ? [...query.where, { path: [], condition: { kind: 'filter', field: { name: pk!, jsonPath: [] }, negated: false, op: 'gt', value: String(state.lastKey) } }]
        : query.where;
    const range = keyset ? (overlap ? { limit: want + 1, offset: skip - 1 } : { limit: want }) : { limit: want, offset: offset0 + start };
    const q: Query = { ...query, select, where, order, page: [...page, { path: [], ...range }] };
    const counted = start === 0 && opts.count !== undefined;
    const headers: Record<string, string> = { Accept: format.accept, ...(counted ? { Prefer: renderPrefer({ count: opts.count }) } : {}) };
    const result = opts.transport.send({ method: 'GET', path: `/${table.name}`, query: compileQuery(q), headers }).then((res) => {
      if (res.status !== 200 && res.status !== 206) {
        if (opts.fault) throw opts.fault(res);
        const f = faultOf(res);
        throw new ExportError(`reading ${table.name} failed: ${f.message}${f.details ? ` (${f.details})` : ''}`, res.status, faultCode(f));
      }
      if (counted) opts.onTotal?.(parseContentRange(res.headers['content-range'] ?? null)?.total ?? null);
      return format.parse((format.bytes && bytesOf(res)) || res.body, keyset ? pk : null, addKey ? pk : null, overlap);
    });
    return { want, overlap, result };
  };
  return { request, keyset };
}

/**
 * The parts of a read whose one `in.(…)` list on the key makes its URL too long, each under the
 * limit and read one after another (splitLongQuery), or null to read it as it is. Only a read in
 * key order (no order of the user's, no offset) is split: its values sorted, the parts' rows in
 * sequence are the whole read's rows in its own order; a limit is carried across the parts.
 */
export function keyListParts(table: PagedTable, query: Query): Query[] | null {
  const pk = table.primaryKey.length === 1 ? table.primaryKey[0] : null;
  const root = query.page.find((p) => p.path.length === 0);
  if (!pk || query.order.some((o) => o.path.length === 0) || (root?.offset ?? 0) > 0) return null;
  const clause = query.where.find((w) => w.path.length === 0 && w.condition.kind === 'filter' && w.condition.op === 'in' && !w.condition.negated);
  const filter = clause?.condition as Filter | undefined;
  if (!clause || !filter || filter.field.name !== pk || filter.field.jsonPath.length > 0 || !Array.isArray(filter.value)) return null;
  // uuids compare as their lowercase text does; other keys as given
  const sorted = [...new Set(filter.value.map((v) => normalizeUuid(v) ?? v))].sort();
  const keyed = { ...query, where: query.where.map((w) => (w === clause ? { ...w, condition: { ...filter, value: sorted } } : w)) };
  const parts = splitLongQuery(keyed, compileQuery);
  return parts.length > 1 ? parts : null;
}

/** A part of a split read with the rows still wanted under the read's limit (`read` so far), or null once none are. */
export function partWithin(part: Query, limit: number | undefined, read: number): Query | null {
  if (limit === undefined) return part;
  if (read >= limit) return null;
  return { ...part, page: [...part.page.filter((p) => p.path.length > 0), { path: [], limit: limit - read }] };
}

/** The page loop of exportPages for any page format: a too-long key list read in parts (keyListParts). */
export async function* pagesOf<T>(opts: PageOptions, format: PageFormat<T>): AsyncGenerator<T> {
  const parts = keyListParts(opts.table, opts.query);
  if (!parts) return yield* pagesOfOne(opts, format);
  const limit = opts.query.page.find((p) => p.path.length === 0)?.limit;
  let read = 0;
  opts.onTotal?.(null);
  for (const whole of parts) {
    const part = partWithin(whole, limit, read);
    if (!part) return;
    const done = read;
    let partRead = 0;
    const onPage = (n: number) => {
      partRead = n;
      opts.onPage?.(done + n);
    };
    yield* pagesOfOne({ ...opts, query: part, count: undefined, onTotal: undefined, onPage }, format);
    read = done + partRead;
  }
}

/** The page loop of one read (its URL fits). */
async function* pagesOfOne<T>(opts: PageOptions, format: PageFormat<T>): AsyncGenerator<T> {
  const state: PageState = { read: 0, lastKey: null };
  const { request, keyset } = pageRequester(opts, format, state);
  // AHEAD pages on their way while this one is written out; one after a page came back short
  // (the server's db-max-rows, or the end) or out of step (rows written meanwhile)
  let ahead = AHEAD;
  let next = 0;
  const inFlight: InFlight<T>[] = [];
  const fill = () => {
    while (inFlight.length < ahead) {
      const f = request(next);
      if (!f) return;
      // a page behind the one awaited may fail first (the service went away): handled when its turn comes
      f.result.catch(() => {});
      inFlight.push(f);
      next += f.want;
    }
  };
  const drop = () => {
    for (const f of inFlight.splice(0)) f.result.catch(() => {});
    next = state.read;
  };
  for (;;) {
    fill();
    const head = inFlight.shift();
    if (!head) return;
    if (opts.signal?.aborted) {
      head.result.catch(() => {});
      drop();
      return;
    }
    let parsed: Awaited<InFlight<T>['result']>;
    try {
      parsed = await head.result;
    } catch (err) {
      drop();
      throw err;
    }
    const { page: rows, count, lastKey: last, firstKey } = parsed;
    if (head.overlap && (firstKey === undefined || String(firstKey) !== String(state.lastKey))) {
      drop();
      ahead = 1;
      continue;
    }
    if (count === 0) {
      drop();
      return;
    }
    state.read += count;
    state.lastKey = keyset ? last : null;
    // a short page may only mean the server caps rows per response (db-max-rows): stop on an empty one
    if (count < head.want) {
      drop();
      ahead = 1;
    }
    fill();
    let resumed = false;
    try {
      yield rows;
      resumed = true;
    } finally {
      // the consumer stopped early (or failed): the pages in flight are not wanted
      if (!resumed) drop();
    }
    opts.onPage?.(state.read);
  }
}
