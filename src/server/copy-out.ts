import type { Store } from '../store/store.js';
import { ApiError } from './errors.js';
import type { Reply } from './exchange.js';
import { COPY_CSV } from '../grammar/media.js';
import type { Planned } from './plan.js';
import { rootWindow } from './paging.js';
import { executeCopyRead, tableHasMoreRows } from './execute.js';
import { contentLocation } from './response.js';

/**
 * Our extension for bulk reads: a GET with `Accept: application/vnd.catalog.copy+csv` answers
 * the rows of the read's planned SELECT (same filters, select, order, limit/offset, Range) as
 * PostgreSQL's `COPY (…) TO STDOUT (FORMAT csv, HEADER true)` writes them, streamed to the
 * response as the database produces them. The body is never whole in memory on PostgreSQL, so a
 * read of any size costs the service the same. An error after the first byte went out cannot
 * become an error status any more: the response is cut off (no final chunk), so a client sees a
 * truncated transfer, never a short file that looks complete.
 */

export const COPY_CT = `${COPY_CSV}; charset=utf-8`;

/**
 * 406 as PostgREST answers a media type it does not offer. `maxRows`: the type is offered for reads
 * of at most that many rows, said in `Catalog-Copy-Max-Rows` (a client may page with it).
 */
function notAvailable(details: string, maxRows?: number): ApiError {
  const headers = maxRows === undefined ? undefined : { 'Catalog-Copy-Max-Rows': String(maxRows) };
  return new ApiError(406, 'PGRST107', `None of these media types are available: ${COPY_CSV}`, { details, headers });
}

/**
 * Pieces handed from a producer that awaits each `write` to a consumer that pulls them: at most
 * one piece waits between the two, so the database is read only as fast as the response is sent.
 * Example: `const r = new Relay(); void produce(r.write).then(() => r.end(), (e) => r.fail(e)); await r.next();`
 */
export class Relay {
  private pending: { chunk: Uint8Array; taken: () => void } | null = null;
  private puller: { resolve: (r: IteratorResult<Uint8Array>) => void; reject: (e: unknown) => void } | null = null;
  private finished = false;
  private error: unknown = null;
  private cancelled: Error | null = null;

  /** The producer's side: resolves when the consumer has taken the piece; rejects once the consumer stopped. */
  readonly write = (chunk: Uint8Array): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      if (this.cancelled) return reject(this.cancelled);
      if (this.puller) {
        const p = this.puller;
        this.puller = null;
        p.resolve({ value: chunk, done: false });
        resolve();
      } else this.pending = { chunk, taken: resolve };
    });

  end(): void {
    this.finished = true;
    this.wake();
  }

  fail(err: unknown): void {
    this.error = err ?? new Error('COPY failed');
    this.finished = true;
    this.wake();
  }

  private wake(): void {
    const p = this.puller;
    if (!p || this.pending) return;
    this.puller = null;
    if (this.error) p.reject(this.error);
    else p.resolve({ value: undefined, done: true });
  }

  /** The consumer's side: the next piece, done at the end, or the producer's error. */
  next(): Promise<IteratorResult<Uint8Array>> {
    if (this.pending) {
      const { chunk, taken } = this.pending;
      this.pending = null;
      taken();
      return Promise.resolve({ value: chunk, done: false });
    }
    if (this.finished) return this.error ? Promise.reject(this.error) : Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => {
      this.puller = { resolve, reject };
    });
  }

  /** The consumer stopped: the producer's waiting and next writes reject, which stops the COPY. */
  cancel(): void {
    if (this.finished) return;
    this.cancelled = new Error('the response was closed before the COPY ended');
    const p = this.pending;
    this.pending = null;
    // the waiting write resolved would let the producer write again, and that write rejects
    p?.taken();
  }
}

/** The pieces of a relay as an async iterable, the first one already taken; stopping early cancels the relay. */
async function* pieces(relay: Relay, first: Uint8Array): AsyncGenerator<Uint8Array> {
  let done = false;
  try {
    yield first;
    for (;;) {
      const r = await relay.next();
      if (r.done) {
        done = true;
        return;
      }
      yield r.value;
    }
  } finally {
    if (!done) relay.cancel();
  }
}

/**
 * The answer to a request that chose the COPY media type: a read streams; a write is 406 (as
 * PostgREST answers a media type it does not offer). A read that db-max-rows would cap is 406 too
 * (a capped stream would be a short file that looks whole): the client pages with JSON or CSV.
 * `Prefer: count` and `timezone` are not applied (the total would cost a second scan; COPY runs
 * outside a transaction) and so not echoed.
 */
export async function copyOutReply(store: Store, planned: Planned, maxRows: number | undefined): Promise<Reply> {
  const { plan, request, prefs } = planned;
  if (plan.kind !== 'read') throw notAvailable(`${COPY_CSV} answers reads (GET) only.`);
  if (prefs.timezone !== undefined && prefs.handling === 'strict') {
    throw new ApiError(400, 'PGRST122', 'Invalid preferences given with handling=strict', { details: `Invalid preferences: timezone=${prefs.timezone}` });
  }
  if (maxRows !== undefined) {
    const asked = rootWindow(request.query, request.range);
    if (asked.limit === undefined || asked.limit > maxRows) {
      throw notAvailable(`The server caps reads at ${maxRows} rows (db-max-rows): ask for at most ${maxRows} rows with limit=, or page with application/json or text/csv.`, maxRows);
    }
  }
  if (!store.copyCsvOut) throw notAvailable('This store cannot run COPY TO.');
  if (store.kind === 'pglite') await boundedForPGlite(store, planned);
  const headers: Record<string, string> = {
    'content-location': contentLocation(request.table.name, request.search),
    'content-type': COPY_CT,
  };
  if (request.method === 'HEAD') {
    await executeCopyRead(store, planned, null);
    return { status: 200, headers, body: null };
  }
  const relay = new Relay();
  executeCopyRead(store, planned, relay.write).then(
    () => relay.end(),
    (err) => relay.fail(err),
  );
  // errors before the first piece (bad values, unknown casts, a timeout) are still ordinary error answers
  const first = await relay.next();
  const stream = first.done ? emptyStream() : pieces(relay, first.value);
  return { status: 200, headers, body: null, stream };
}

/**
 * Rows a COPY read may have on PGlite. PGlite makes a COPY's whole output in its WebAssembly
 * memory, which grows by about twice the output and never shrinks (300k tracks: +266 MB that
 * stayed): up to this many rows (≈25 MB of tracks) that is a bounded, one-off cost.
 */
export const PGLITE_COPY_ROWS = 50_000;

/**
 * On PGlite, a COPY read of a table with more rows than PGLITE_COPY_ROWS must ask for at most that
 * many (else 406: the client pages). The table's rows are counted, not the read's (filters and
 * order could make that a whole scan and sort): counting stops after one row too many.
 */
async function boundedForPGlite(store: Store, planned: Planned): Promise<void> {
  const asked = rootWindow(planned.request.query, planned.request.range);
  if (asked.limit !== undefined && asked.limit <= PGLITE_COPY_ROWS) return;
  if (await tableHasMoreRows(store, planned, PGLITE_COPY_ROWS)) {
    throw notAvailable(`The embedded store (PGlite) makes a COPY's whole output in memory: ask for at most ${PGLITE_COPY_ROWS} rows with limit=, or page with application/json or text/csv.`, PGLITE_COPY_ROWS);
  }
}

async function* emptyStream(): AsyncGenerator<Uint8Array> {}
