import type { Reject } from '../account/rejects.js';
import type { SourceRecord } from '../types.js';
import type { RowFault } from '../shape/check.js';
import type { PendingRow } from '../shape/shape.js';

/**
 * The batch stage: rows go into batches bounded by rows and bytes; a full batch is handed to the
 * send stage while the next one fills, with at most `concurrency` in flight (the reader waits for
 * a free slot: backpressure). It knows the committed position: batches start in record order, so
 * every record before the smallest start still in flight (or still open) is done.
 */
export interface Batch {
  /** First record index the batch accounts for (rejected and deduped records included). */
  start: number;
  /** Line of that record. */
  line: number;
  /** One past the last record index it accounts for. */
  end: number;
  rows: PendingRow[];
  bytes: number;
  rejects: Reject[];
  deduped: number;
  /** Records equal to their stored rows, found before sending (natural keys): not sent. */
  unchanged: number;
}

/** How a batch went: counts and the rows that did not land. */
export interface BatchOutcome {
  inserted: number;
  updated: number;
  unchanged: number;
  rejects: Reject[];
}

/** Rows and bytes a batch may hold; the send stage may shrink them (413, statement timeout). */
export interface BatchLimits {
  rows: number;
  bytes: number;
  /** Rows the first batch goes out at, when fewer than `rows`: the database starts on it while the next fills. */
  first?: number;
}

/** A record position: its index and the line it starts on. */
export interface Position {
  index: number;
  line: number;
}

const newBatch = (index: number, line: number): Batch => ({ start: index, line, end: index + 1, rows: [], bytes: 2, rejects: [], deduped: 0, unchanged: 0 });

export class Batcher {
  private open: Batch | null = null;
  private readonly inflight = new Map<Batch, Promise<void>>();
  /** Batches that failed are not committed: the position must stay at or before their start. */
  private readonly failed: Batch[] = [];
  /** The record after the last one begun, and its line (two numbers: `begin` runs once per record). */
  private nextIndex: number;
  private nextLine = 1;
  /** The first failure of a batch (auth, outage): nothing more is sent. */
  fatal: unknown = null;
  /** Batches handed to the send stage so far. */
  private dispatched = 0;

  constructor(
    readonly limits: BatchLimits,
    private readonly concurrency: number,
    start: Position,
    /** The send stage. */
    private readonly process: (b: Batch) => Promise<BatchOutcome>,
    /** The account stage, with the committed position after the batch. */
    private readonly done: (b: Batch, outcome: BatchOutcome, committed: Position) => void,
  ) {
    this.nextIndex = start.index;
  }

  /** A record at `index` begins: it belongs to the open batch (one opens when none is). */
  begin(index: number, line: number): void {
    this.nextIndex = index + 1;
    this.nextLine = line + 1;
    if (!this.open) this.open = newBatch(index, line);
    this.open.end = index + 1;
  }

  /** The record just begun is rejected (its batch writes it to the rejects file when it completes). */
  reject(record: SourceRecord, fault: RowFault): void {
    this.open!.rejects.push({ record, code: fault.code, message: fault.message });
  }

  /** The record just begun is dropped as a duplicate. */
  skip(): void {
    this.open!.deduped++;
  }

  /** The record just begun equals its stored row: counted, not sent. */
  same(): void {
    this.open!.unchanged++;
  }

  /**
   * Adds the record just begun as a row: true when its batch (or the one before it) went out.
   * Synchronous while the open batch has room (every record but one in a batch: no promise per
   * record); a promise, which resolves when another may be added, when a batch went out.
   */
  add(row: PendingRow): boolean | Promise<boolean> {
    const open = this.open!;
    // this row would overflow: send what we have, the row opens the next batch
    if (open.rows.length > 0 && open.bytes + row.bytes > this.limits.bytes) return this.addAfterSend(open, row);
    open.rows.push(row);
    open.bytes += row.bytes;
    const { rows, first = rows } = this.limits;
    if (open.rows.length < (this.dispatched === 0 ? Math.min(first, rows) : rows)) return false;
    this.open = null;
    this.dispatch(open);
    return this.inflight.size < this.concurrency || this.slot().then(() => true);
  }

  /** `add` when the open batch has no room for the row: it goes out, and the row opens the next one. */
  private async addAfterSend(full: Batch, row: PendingRow): Promise<boolean> {
    const index = full.end - 1;
    full.end = index;
    this.dispatch(full);
    this.open = newBatch(index, this.nextLine - 1);
    await this.slot();
    // the new batch is empty: the row goes in (and the batch out, when one row fills it)
    await this.add(row);
    return true;
  }

  /** Sends the open batch now if it has rows (its buffer is full); false when it has none. */
  async sendOpen(): Promise<boolean> {
    if (!this.open || this.open.rows.length === 0) return false;
    const b = this.open;
    this.open = null;
    this.dispatch(b);
    await this.slot();
    return true;
  }

  /** The end of the input (or a stop): sends the open batch unless stopping, then waits for every batch. */
  async finish(send: boolean): Promise<void> {
    if (send && !this.fatal && this.open) {
      const b = this.open;
      this.open = null;
      this.dispatch(b);
    }
    while (this.inflight.size) await Promise.race(this.inflight.values());
  }

  /** Smaller batches from now on (at most `rows` / `bytes`, never below 1 row or 1 KB); says what changed. */
  shrink(rows: number, bytes: number): string {
    const l = this.limits;
    const before = `${l.rows} rows / ${l.bytes} bytes`;
    l.rows = Math.max(1, Math.min(l.rows, rows));
    l.bytes = Math.max(1024, Math.min(l.bytes, bytes));
    return `the server refused a batch as too large or too slow: batches shrink from ${before} to ${l.rows} rows / ${l.bytes} bytes`;
  }

  /** Every record before this position is done (sent, rejected or skipped). */
  committed(): Position {
    let min = this.open ? { index: this.open.start, line: this.open.line } : this.position;
    for (const b of [...this.inflight.keys(), ...this.failed]) if (b.start < min.index) min = { index: b.start, line: b.line };
    return min;
  }

  /** The position after the last record begun (the end, once the input is read). */
  get position(): Position {
    return { index: this.nextIndex, line: this.nextLine };
  }

  private async slot(): Promise<void> {
    while (this.inflight.size >= this.concurrency) await Promise.race(this.inflight.values());
  }

  private dispatch(b: Batch): void {
    this.dispatched++;
    const p = this.process(b).then(
      (outcome) => {
        this.inflight.delete(b);
        this.done(b, outcome, this.committed());
      },
      (err) => {
        this.inflight.delete(b);
        this.failed.push(b);
        this.fatal ??= err;
      },
    );
    this.inflight.set(b, p);
  }
}
