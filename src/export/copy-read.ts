import { compileQuery } from '../grammar/compile.js';
import type { Query } from '../grammar/types.js';
import { COPY_CSV } from '../grammar/media.js';
import { faultCode, faultOf, type Transport } from '../client/transport.js';
import type { TableDef } from '../schema/catalog.js';
import { copyCsvRewriter } from './copy-csv.js';
import { ExportError, exportOrder, keyListParts, partWithin } from '../client/pages.js';
import type { TextSink } from '../format/types.js';
import { csvHeader } from '../format/csv-dialect.js';

const BATCH_BYTES = 1 << 20;

export interface CopyReadOptions {
  transport: Transport;
  table: TableDef;
  query: Query;
  /** The header's column names (as the page path writes them). */
  columns: string[];
  out: TextSink;
  nullToken?: string;
  signal?: AbortSignal;
  onPage?: (rowsSoFar: number) => void;
}

/**
 * What a COPY read came to: the rows written, or nothing written and how to page instead —
 * `copyRows` when the service offers COPY for reads of at most that many rows (its
 * `Catalog-Copy-Max-Rows` on the 406), else CSV pages.
 */
export type CopyReadResult = { rows: number } | { rows: null; copyRows?: number };

/**
 * A CSV export as one COPY read (our service's `Accept: application/vnd.catalog.copy+csv`): the
 * whole result streamed, rewritten piece by piece into the bytes the page path writes
 * (copy-csv.ts) and written straight out. Writes nothing when the service does not offer it —
 * 406 (PostgREST, an older catalog, a read its db-max-rows or PGlite would cap), 415, or another
 * media type answered — so the caller pages instead.
 * Rows come in the order paging would give them (the key as a tie-breaker).
 */
export async function copyRead(opts: CopyReadOptions): Promise<CopyReadResult> {
  const parts = keyListParts(opts.table, opts.query);
  if (!parts) return copyOne(opts, opts.query, true);
  // a key list too long for one URL: one COPY read per part, in key order, one header
  const limit = opts.query.page.find((p) => p.path.length === 0)?.limit;
  let rows = 0;
  for (const [i, whole] of parts.entries()) {
    const part = partWithin(whole, limit, rows);
    if (!part) break;
    const done = rows;
    const r = await copyOne({ ...opts, onPage: (n) => opts.onPage?.(done + n) }, part, i === 0);
    if (r.rows === null) {
      if (i === 0) return r;
      throw new ExportError(`reading ${opts.table.name} failed after ${rows} rows: the service stopped offering COPY reads`, 502, 'PGRST000');
    }
    rows += r.rows;
    if (opts.signal?.aborted) break;
  }
  return { rows };
}

/** One COPY read of `q`, its header written when `header`. */
async function copyOne(opts: CopyReadOptions, q: Query, header: boolean): Promise<CopyReadResult> {
  const { transport, table } = opts;
  if (!transport.stream) return { rows: null };
  const query: Query = { ...q, order: exportOrder(table, q) };
  const res = await transport.stream({ method: 'GET', path: `/${table.name}`, query: compileQuery(query), headers: { Accept: COPY_CSV } });
  const type = (res.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (res.status === 406 || res.status === 415 || (res.status < 300 && type !== COPY_CSV)) {
    res.cancel();
    const cap = Number(res.headers['catalog-copy-max-rows']);
    return res.status === 406 && Number.isSafeInteger(cap) && cap > 0 ? { rows: null, copyRows: cap } : { rows: null };
  }
  if (res.status >= 300) {
    const f = faultOf({ status: res.status, headers: res.headers, body: await res.text() });
    throw new ExportError(`reading ${table.name} failed: ${f.message}${f.details ? ` (${f.details})` : ''}`, res.status, faultCode(f));
  }
  if (header) await opts.out.write(csvHeader(opts.columns));
  const rewriter = copyCsvRewriter(table, opts.columns, opts.nullToken);
  const pieces = res.body[Symbol.asyncIterator]();
  // rewritten pieces go out about a megabyte at a time: one write per piece (≈2,500 for 100k
  // tracks) cost the client more than joining them
  const batch: Uint8Array[] = [];
  let batched = 0;
  const flush = async () => {
    if (batched === 0) return;
    const bytes = batch.length === 1 ? batch[0] : Buffer.concat(batch, batched);
    batch.length = 0;
    batched = 0;
    await opts.out.write(bytes);
    opts.onPage?.(rewriter.rows);
  };
  let complete = false;
  try {
    for (;;) {
      let next: IteratorResult<Uint8Array>;
      try {
        next = await pieces.next();
      } catch (err) {
        // the transfer was cut off: the service hit an error after rows went out (see its copy-out.ts)
        throw new ExportError(`reading ${table.name} failed after ${rewriter.rows} rows: the service ended the transfer early (${(err as Error).message})`, 502, 'PGRST000');
      }
      if (next.done) break;
      if (opts.signal?.aborted) return { rows: rewriter.rows };
      const bytes = rewriter.push(next.value);
      if (bytes.length) {
        batch.push(bytes);
        batched += bytes.length;
      }
      if (batched >= BATCH_BYTES) await flush();
    }
    await flush();
    complete = true;
  } finally {
    if (!complete) res.cancel();
  }
  rewriter.end();
  return { rows: rewriter.rows };
}
