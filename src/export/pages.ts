import { compileQuery } from '../grammar/compile.js';
import type { Query, SelectItem, WhereClause } from '../grammar/types.js';
import type { TableDef } from '../schema/catalog.js';
import { type Transport, faultOf } from '../import/transport.js';

/** An export read that failed (the service answered an error). */
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
  table: TableDef;
  /** Filters, select and order as `list` builds them; its page clause is the overall limit/offset. */
  query: Query;
  pageSize?: number;
  signal?: AbortSignal;
  /** Called after each page with the rows read so far. */
  onPage?: (rowsSoFar: number) => void;
}

const DEFAULT_PAGE = 2000;

function selectsField(items: SelectItem[] | undefined, name: string): boolean {
  if (!items) return true;
  return items.some((i) => i.type === 'star' || (i.type === 'field' && i.field.name === name && i.field.jsonPath.length === 0 && !i.alias && !i.cast));
}

/**
 * Every matching row, page by page, in constant memory. Without an explicit order it pages by
 * keyset on the primary key (`id=gt.<last>&order=id&limit=N`: stable while others write, and each
 * page costs the same however deep); with an order it pages by offset, the key appended as a
 * tie-breaker so pages neither skip nor repeat rows.
 */
export async function* exportPages(opts: PageOptions): AsyncGenerator<Record<string, unknown>[]> {
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
  const addKey = keyset && !selectsField(query.select, pk!);
  const select: SelectItem[] | undefined = addKey
    ? [...(query.select ?? []), { type: 'field', field: { name: pk!, jsonPath: [] } }]
    : query.select;
  const tiebreak = table.primaryKey.map((name) => ({ field: { name, jsonPath: [] } }));
  const order = userOrder
    ? query.order.map((o) => (o.path.length === 0 ? { ...o, terms: [...o.terms, ...tiebreak] } : o))
    : [...query.order, { path: [], terms: tiebreak }];

  let read = 0;
  const request = (last: unknown): Promise<Record<string, unknown>[]> | null => {
    if (limit !== undefined && read >= limit) return null;
    const want = limit === undefined ? pageSize : Math.min(pageSize, limit - read);
    const where: WhereClause[] =
      keyset && last !== null
        ? [...query.where, { path: [], condition: { kind: 'filter', field: { name: pk!, jsonPath: [] }, negated: false, op: 'gt', value: String(last) } }]
        : query.where;
    const q: Query = {
      ...query,
      select,
      where,
      order,
      page: [...page, keyset ? { path: [], limit: want } : { path: [], limit: want, offset: offset0 + read }],
    };
    return opts.transport.send({ method: 'GET', path: `/${table.name}`, query: compileQuery(q), headers: { Accept: 'application/json' } }).then((res) => {
      if (res.status !== 200 && res.status !== 206) {
        const f = faultOf(res);
        throw new ExportError(`reading ${table.name} failed: ${f.message}${f.details ? ` (${f.details})` : ''}`, res.status, f.code);
      }
      return JSON.parse(res.body) as Record<string, unknown>[];
    });
  };
  // one page ahead: the next request is on its way while this page is written out
  let pending = request(null);
  while (pending) {
    if (opts.signal?.aborted) {
      pending.catch(() => {});
      return;
    }
    const rows = await pending;
    if (rows.length === 0) return;
    read += rows.length;
    // a short page may only mean the server caps rows per response (db-max-rows): stop on an empty one
    pending = request(keyset ? rows[rows.length - 1][pk!] : null);
    if (addKey) for (const r of rows) delete r[pk!];
    let resumed = false;
    try {
      yield rows;
      resumed = true;
    } finally {
      // the consumer stopped early (or failed): the page in flight is not wanted
      if (!resumed) pending?.catch(() => {});
    }
    opts.onPage?.(read);
  }
}
