import type { ServiceError } from '../../client/errors.js';
import { faultCode, faultOf, type HttpResponse, type Transport } from '../../client/transport.js';
import { type Attempt, retrying } from '../../client/retry.js';
import { COPY_CSV } from '../../grammar/media.js';
import { ExistingLookup, sameValue } from './existing.js';
import type { Settings } from '../options.js';
import { probeQuery, writePrefer, writeQuery } from '../requests.js';
import { knownDefault } from '../../schema/conventions.js';
import type { Batch, BatchOutcome } from '../batch/batch.js';
import type { PendingRow, Shape } from '../shape/shape.js';
import { ReferenceCheck } from './references.js';

/**
 * The send stage: a batch goes to the service as one POST, a COPY CSV body when the service takes
 * them (our own), else a JSON array; keyed batches are upserts (`on_conflict=`, merge-duplicates).
 * An idempotent (keyed) batch is retried after a connection error or 502/503/504. A 413 or a
 * statement timeout shrinks the batch limits and splits the batch; a data error (SQLSTATE class
 * 22/23, P0001) splits it in halves until the failing rows are alone and rejected. Anything else
 * (auth, unknown column, outage after retries) stops the import: the service's fault (ServiceError)
 * is thrown as it is.
 */

/** SQLSTATE classes that blame the data of some row: split the batch to find it. */
const isRowFault = (f: ServiceError): boolean => /^(22|23|P0001|21000)/.test(faultCode(f));
const isShrinkFault = (res: HttpResponse, f: ServiceError): boolean => res.status === 413 || f.code === '57014' || f.code === '54000';
const isTransient = (res: HttpResponse): boolean => res.status === 502 || res.status === 503 || res.status === 504;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Refusals the rows are checked in advance for (ReferenceCheck): a missing parent or link id (23503), a link of the wrong shape (23514). */
const CHECKED_CODES = new Set(['23503', '23514']);
/** Rows refused alone with one of CHECKED_CODES, over the whole import, that turn on the check in advance. */
const REFUSALS_TO_CHECK = 16;
/**
 * A batch of more rows than this that the database refuses for its links or references is checked
 * in advance at once (its bad rows rejected without bisection), before the check is on for every
 * batch: bisecting one bad row out of n rows costs ~2·log2(n) requests, the check a lookup or two.
 */
const PROBE_ROWS = 64;
/**
 * A request that cannot write anything twice (an upsert, an empty body), sent again after a
 * connection error or 502/503/504: twice more, pausing `retryDelayMs`, then twice that.
 */
function retried(settings: Settings, send: () => Promise<HttpResponse>): Promise<HttpResponse> {
  const delay = settings.retryDelayMs;
  const again = (o: Attempt<HttpResponse>, attempt: number) => (!settings.stopping() && ('error' in o || isTransient(o.value)) ? delay * 2 ** attempt : null);
  return retrying(send, { retries: 2, sleep, again });
}

/**
 * `Key (id)=(…)`-style details make the reject message self-contained; an unknown link key's hint
 * (23503, `did you mean "Léa Marin"?`, docs/links.md) is the fix, so it is kept too.
 */
const faultMessage = (f: ServiceError): string => {
  const m = f.details ? `${f.message} (${f.details})` : f.message;
  return f.code === '23503' && f.hint ? `${m}; ${f.hint}` : m;
};

/**
 * The rows' COPY lines after `head`, as one buffer. Lines that follow each other in one buffer are
 * taken as one range; every batch buffer starts with `head` (see the load stage's `freshOut`), so
 * a batch whose lines are one range from just after it (the usual case) is that buffer's first
 * bytes, uncopied.
 */
export function copyBody(head: Buffer, rows: PendingRow[]): Buffer {
  const ranges: Array<[Buffer, number, number]> = [];
  for (const r of rows) {
    const last = ranges[ranges.length - 1];
    if (last && last[0] === r.copyOut && last[2] === r.copyAt) last[2] += r.bytes;
    else ranges.push([r.copyOut as Buffer, r.copyAt, r.copyAt + r.bytes]);
  }
  if (ranges.length === 1 && ranges[0][1] === head.length) return ranges[0][0].subarray(0, ranges[0][2]);
  return Buffer.concat([head, ...ranges.map(([b, from, to]) => b.subarray(from, to))]);
}

/** The service's `Catalog-Counts: inserted=N, updated=N, unchanged=N` of a batch, or null without one. */
export function serverCounts(res: HttpResponse): { inserted: number; updated: number; unchanged: number } | null {
  const h = res.headers['catalog-counts'];
  if (!h) return null;
  const out = { inserted: 0, updated: 0, unchanged: 0 };
  for (const part of h.split(',')) {
    const [k, v] = part.trim().split('=');
    if ((k === 'inserted' || k === 'updated' || k === 'unchanged') && /^\d+$/.test(v ?? '')) out[k] = Number(v);
  }
  return out;
}

export interface SendContext {
  transport: Transport;
  shape: Shape;
  settings: Settings;
  /** CSV's header row (the COPY header line); null for other formats. */
  headers: string[] | null;
  /** The send stage asks the batch stage for smaller batches (413, statement timeout). */
  shrink: (rows: number, bytes: number) => void;
  /** Runs before each batch is sent (the match stage's new parent records go first). */
  before?: () => Promise<void>;
}

/**
 * Asks whether the service takes COPY bodies, with an empty one (the header alone): our service
 * answers 2xx, a PostgREST without them 400/415, and the import sends JSON as before. Returns the
 * COPY header line, or null.
 */
async function negotiateCopy(c: SendContext, copyQuery: string, copyPrefer: string): Promise<Buffer | null> {
  const { shape, settings, headers } = c;
  if (!shape.shaper.fromText || settings.dryRun || shape.plan.columns.length === 0 || !headers) return null;
  const head = `${[...(shape.plan.injected ?? []), ...headers.map((h) => shape.shaper.resolver.resolve(h)?.name).filter((n) => n !== undefined)].join(',')}\n`;
  // an empty body writes nothing, so it may be sent again after an unclear failure
  const res = await retried(c.settings, () => c.transport.send({ method: 'POST', path: `/${settings.table.name}`, query: copyQuery, headers: { 'Content-Type': COPY_CSV, Prefer: copyPrefer }, body: head }));
  if (res.status >= 200 && res.status < 300) return Buffer.from(head);
  const f = faultOf(res);
  if ((res.status === 400 || res.status === 415) && (f.code === 'PGRST102' || f.code === 'PGRST107' || f.code === null)) return null;
  throw f;
}

/** An empty table cannot hold any of the file's keys, and after dedupe no two batches share one: then no lookups at all. */
async function emptyTable(c: SendContext): Promise<boolean> {
  const key = c.shape.plan.keyColumn!;
  const probe = await c.transport.send({ method: 'GET', path: `/${c.settings.table.name}`, query: probeQuery(key.name), headers: { Accept: 'application/json' } });
  if (probe.status >= 400) throw faultOf(probe);
  return probe.status === 200 && probe.body.trim() === '[]';
}

/** How the batches go on the wire: query strings and Prefer headers, built once. */
interface Wire {
  copyQuery: string;
  copyPrefer: string;
  jsonQuery: string;
  /** By [copying service][every row complete]. */
  jsonPrefer: (complete: boolean) => string;
}

function wireFor(shape: Shape, settings: Settings, copying: boolean): Wire {
  const { conflictKey, columns } = shape.plan;
  const keyed = conflictKey !== null;
  const ignoreDuplicates = settings.ignoreDuplicates;
  // A batch whose rows carry every column needs no `missing=default`, which costs the server a
  // per-row presence check (measured 2.5x slower in PostgreSQL than json_populate_recordset).
  const match = keyed ? settings.match : undefined;
  const complete = writePrefer({ keyed, ignoreDuplicates, missingDefault: false, skipUnchanged: copying, match });
  const missing = writePrefer({ keyed, ignoreDuplicates, missingDefault: true, skipUnchanged: copying, match });
  return {
    copyQuery: writeQuery(null, conflictKey),
    copyPrefer: writePrefer({ keyed, ignoreDuplicates, missingDefault: false, skipUnchanged: true, match }),
    jsonQuery: writeQuery(columns, conflictKey),
    jsonPrefer: (all) => (all ? complete : missing),
  };
}

/**
 * A dry run writes nothing, but the service must still refuse what the real run would be refused:
 * an `on_conflict=` naming columns with no unique key (42P10). When the key is not the primary key
 * an upsert of no rows (`[]`, nothing written) asks the service; otherwise a dry run only reads.
 */
async function dryRunProbe(c: SendContext, wire: Wire): Promise<void> {
  const key = c.shape.plan.conflictKey;
  const pk = c.settings.table.primaryKey;
  if (!key || (key.length === pk.length && key.every((k, i) => k === pk[i]))) return;
  const res = await c.transport.send({
    method: 'POST',
    path: `/${c.settings.table.name}`,
    query: wire.jsonQuery,
    headers: { 'Content-Type': 'application/json', Prefer: wire.jsonPrefer(false) },
    body: '[]',
  });
  if (res.status >= 300) throw faultOf(res);
}

export class Sender {
  private constructor(
    private readonly c: SendContext,
    /** The COPY header line, when the service takes COPY bodies. */
    readonly copyHead: Buffer | null,
    private readonly wire: Wire,
    /** Stored rows are looked up to count updates and leave identical rows alone (JSON bodies only). */
    private readonly lookup: ExistingLookup | null,
    /** The foreign-key check in advance: a dry run's always, a real run's once many rows were refused for their references. */
    private refs: ReferenceCheck | null = null,
  ) {}

  /** Rows the database refused alone with one of CHECKED_CODES, until the check in advance is on. */
  private refusals = 0;
  /** The check a large batch the database refused for its links or references uses before the check is on for every batch (PROBE_ROWS). */
  private probe: ReferenceCheck | null | undefined;

  private prober(): ReferenceCheck | null {
    if (this.probe === undefined) this.probe = ReferenceCheck.for(this.c.transport, this.c.settings.table, this.c.shape.plan.columns, false, this.c.settings.knownIds, !this.c.settings.createMissing);
    return this.probe;
  }

  /** Negotiates the body type and whether lookups are needed. */
  static async open(c: SendContext): Promise<Sender> {
    const plain = wireFor(c.shape, c.settings, false);
    const copyHead = await negotiateCopy(c, plain.copyQuery, plain.copyPrefer);
    const wire = copyHead ? wireFor(c.shape, c.settings, true) : plain;
    if (c.settings.dryRun) await dryRunProbe(c, wire);
    const { keyColumn, columns } = c.shape.plan;
    const lookup = keyColumn && copyHead === null && !(await emptyTable(c)) ? new ExistingLookup(c.transport, c.settings.table.name, keyColumn, columns) : null;
    const refs = c.settings.dryRun ? ReferenceCheck.for(c.transport, c.settings.table, c.shape.plan.columns, true, c.settings.knownIds, !c.settings.createMissing) : null;
    return new Sender(c, copyHead, wire, lookup, refs);
  }

  /** Sends a batch (a dry run only counts it); what landed, what was unchanged, what was rejected. */
  async process(b: Batch): Promise<BatchOutcome> {
    const out: BatchOutcome = { inserted: 0, updated: 0, unchanged: b.unchanged, rejects: b.rejects };
    const changed = this.lookup && b.rows.length ? await this.changedRows(b.rows, out) : b.rows;
    const checked = () => this.checkReferences(changed, out);
    if (this.c.settings.dryRun) {
      for (const r of await checked()) out[r.kind === 'insert' ? 'inserted' : 'updated']++;
      return out;
    }
    await this.c.before?.(); // the match stage's new parents exist before references are checked
    await this.sendRows(await checked(), out);
    return out;
  }

  /**
   * The rows whose references exist (the others go to the rejects), when references are checked.
   * A real run whose check cannot read a parent collection (the token may not, a proxy refuses)
   * stops checking and sends rows as they are: the database still has the last word. A dry run
   * has no other way to know, so its failure is the run's.
   */
  private async checkReferences(rows: PendingRow[], out: BatchOutcome, refs = this.refs): Promise<PendingRow[]> {
    if (!refs || rows.length === 0) return rows;
    try {
      return await refs.keep(rows, (r) => this.c.shape.jsonOf(r), out.rejects);
    } catch (err) {
      // a stop cancels the check's requests too: that is the stop, not a check that cannot be made
      if (this.c.settings.dryRun || this.c.settings.stopping()) throw err;
      if (this.refs === refs || this.probe === refs) {
        this.refs = this.probe = null;
        this.refusals = -Infinity; // not turned on again
        this.c.settings.notice(`references cannot be checked in advance (${(err as Error).message}): rows are sent as they are`);
      }
      return rows;
    }
  }

  /**
   * Rows the database refused for their links or references: alone, or found by the check of a
   * large batch it refused (PROBE_ROWS). Once REFUSALS_TO_CHECK rows were refused, rows are checked
   * in advance (ReferenceCheck): by every later batch, and by a batch in flight the next time the
   * database refuses it so, and such rows are rejected without being bisected out of their batch
   * one request pair at a time.
   */
  private refused(code: string, rows = 1): void {
    if (!CHECKED_CODES.has(code) || this.refs || (this.refusals += rows) < REFUSALS_TO_CHECK) return;
    this.refs = this.prober();
    if (this.refs) this.c.settings.notice(`${this.refusals} rows were refused for their links or references (a record that does not exist: import it first, \`catalog import DIR\` takes files parents first; or a link of the wrong shape): they are now checked before rows are sent`);
  }

  /** The rows that are new or differ from the stored ones (marked insert or update); the rest are counted unchanged. */
  private async changedRows(rows: PendingRow[], out: BatchOutcome): Promise<PendingRow[]> {
    const keys = rows.filter((r) => r.key !== null).map((r) => r.key as string);
    const existing = await this.lookup!.find(keys);
    const { compareColumns } = this.c.shape.plan;
    return rows.filter((r) => {
      const stored = r.key === null ? undefined : existing.get(r.key);
      if (!stored) return true;
      if (this.c.settings.ignoreDuplicates) {
        out.unchanged++;
        return false;
      }
      const row = JSON.parse(this.c.shape.jsonOf(r)) as Record<string, unknown>;
      for (const col of compareColumns) {
        const mine = col.name in row ? row[col.name] : knownDefault(col);
        if (mine === undefined || !sameValue(col, mine, stored[col.name])) {
          r.kind = 'update';
          return true;
        }
      }
      out.unchanged++;
      return false;
    });
  }

  /** Sends rows; a failure about the rows splits them until the bad ones are alone (bisection). */
  private async sendRows(rows: PendingRow[], out: BatchOutcome): Promise<void> {
    if (rows.length === 0) return;
    const res = await this.post(rows);
    if (res.status >= 200 && res.status < 300) {
      const counts = this.copyHead !== null ? serverCounts(res) : null;
      if (counts) {
        out.inserted += counts.inserted;
        out.updated += counts.updated;
        out.unchanged += counts.unchanged;
      } else for (const r of rows) out[r.kind === 'insert' ? 'inserted' : 'updated']++;
      return;
    }
    const f = faultOf(res);
    const shrinkFault = isShrinkFault(res, f);
    if (!shrinkFault && !isRowFault(f)) throw f;
    if (rows.length === 1) {
      const message = res.status === 413 ? `the row alone is larger than the server accepts (${f.message})` : faultMessage(f);
      out.rejects.push({ record: rows[0].record, code: faultCode(f), message });
      this.refused(faultCode(f));
      return;
    }
    const probing = !this.refs && rows.length > PROBE_ROWS && this.refusals >= 0;
    if ((this.refs || probing) && CHECKED_CODES.has(faultCode(f))) {
      // rows are checked now: those naming a missing parent or with links of the wrong shape go, the rest is sent again
      const kept = await this.checkReferences(rows, out, this.refs ?? this.prober());
      if (kept.length < rows.length) {
        if (probing) this.refused(faultCode(f), rows.length - kept.length);
        return this.sendRows(kept, out);
      }
    }
    if (shrinkFault) this.c.shrink(Math.floor(rows.length / 2), Math.floor(rows.reduce((n, r) => n + r.bytes, 2) / 2));
    const mid = Math.ceil(rows.length / 2);
    await this.sendRows(rows.slice(0, mid), out);
    await this.sendRows(rows.slice(mid), out);
  }

  /** One POST of rows: a COPY body when every row is a COPY line, else JSON; keyed (idempotent) posts are retried. */
  private post(rows: PendingRow[]): Promise<HttpResponse> {
    const { wire, copyHead } = this;
    const req =
      copyHead !== null && rows.every((r) => r.copyOut !== null)
        ? { query: wire.copyQuery, headers: { 'Content-Type': COPY_CSV, Prefer: wire.copyPrefer }, body: copyBody(copyHead, rows) }
        : {
            query: wire.jsonQuery,
            headers: { 'Content-Type': 'application/json', Prefer: wire.jsonPrefer(rows.every((r) => r.complete)) },
            body: `[${rows.map((r) => this.c.shape.jsonOf(r)).join(',')}]`,
          };
    const send = () => this.c.transport.send({ method: 'POST', path: `/${this.c.settings.table.name}`, ...req });
    if (!this.c.shape.plan.conflictKey) return send(); // a plain insert is never sent again blindly
    return retried(this.c.settings, send);
  }
}
