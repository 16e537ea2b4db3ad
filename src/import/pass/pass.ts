import { ByteCsvFile, type CopyTranscoder, END, MALFORMED, MORE, OK, OVERFLOW } from './copy-transcode.js';
import { csvRecordAt } from '../readers/csv.js';
import type { ByteCheck } from '../readers/input.js';
import { ImportError, type SourceRecord } from '../types.js';
import { type Source, sourceRecords } from '../source/source.js';
import { nextTurn, SLICE_RECORDS } from '../../shared/turns.js';

/**
 * The one pass driver of an import. A pass reads the source from its start, CSV as bytes through
 * the COPY transcoder (src/import/pass/copy-transcode.ts), any other format through its reader, and
 * hands each record to a visitor. The scan (dedupe/dedupe.ts) and the load (pass/load.ts) are
 * its two visitors, so an import reads its file twice: once to scan (the UTF-8 check, the
 * duplicate keys and their exact counts, the record count, the header and the dates, all before
 * anything is sent) and once to load.
 */

/** What every record of a CSV file shares: its header row and its delimiter. */
export interface CsvForm {
  readonly headers: string[];
  readonly delimiter: string;
}

/**
 * A CSV record: its bytes, and its cells decoded from them only when something asks (a reject, a
 * JSON row, a check). While its pass stands on it the cells come from the transcoder's field
 * bounds; later (a row in a batch) from the bytes again.
 */
export class CsvBytesRecord implements SourceRecord {
  private decoded: string[] | null = null;

  constructor(
    readonly index: number,
    readonly line: number,
    private readonly buf: Buffer,
    private readonly start: number,
    private readonly end: number,
    private readonly form: CsvForm,
    /** The transcoder that just read the record, while the pass stands on it; null after. */
    public live: CopyTranscoder | null = null,
  ) {}

  get headers(): string[] {
    return this.form.headers;
  }

  get cells(): string[] {
    this.decoded ??= this.live ? this.live.cells(this.buf) : csvRecordAt(this.buf.toString('utf8', this.start, this.end), this.headers, this.index, this.line, this.form.delimiter).cells!;
    return this.decoded;
  }

  get values(): Record<string, unknown> {
    const values: Record<string, unknown> = {};
    const cells = this.cells;
    const n = Math.min(cells.length, this.headers.length);
    for (let i = 0; i < n; i++) values[this.headers[i]] = cells[i];
    return values;
  }

  get error(): string | undefined {
    const n = this.cells.length;
    return n === this.headers.length ? undefined : `expected ${this.headers.length} fields as in the header, found ${n}`;
  }
}

/** Where a pass stands: the record just read. One per pass, reused for every record. */
export class Cursor {
  index = -1;
  line = 0;
  /** What the transcoder found (OK, REFUSED, NEEDS_JSON, RAGGED: copy-transcode.ts); OK for a record a reader gave. */
  status = OK;
  /** CSV: the record's bytes are `buf[start, end)`. */
  buf: Buffer = Buffer.alloc(0);
  start = 0;
  end = 0;
  private rec: SourceRecord | null = null;
  private csv: CsvBytesRecord | null = null;

  constructor(
    /** CSV: the transcoder that reads the records (its key, key parts, COPY line end); null for other formats. */
    readonly tc: CopyTranscoder | null,
    /** CSV: the header row and delimiter every record shares. */
    readonly form: CsvForm,
    /** Bytes of the input read so far (progress). */
    readonly bytes: () => number,
  ) {}

  /** The record, decoded only now (CSV: its cells from the transcoder's field bounds). */
  get record(): SourceRecord {
    if (this.rec) return this.rec;
    this.csv = new CsvBytesRecord(this.index, this.line, this.buf, this.start, this.end, this.form, this.tc);
    this.rec = this.csv;
    return this.rec;
  }

  /** The CSV record if something asked for it while the pass stood on it, else null (a row then makes it from the bytes only if asked). */
  get decoded(): CsvBytesRecord | null {
    return this.csv;
  }

  /** Stands on the next CSV record. */
  at(index: number, line: number, status: number, buf: Buffer, start: number, end: number): void {
    this.leave();
    this.index = index;
    this.line = line;
    this.status = status;
    this.buf = buf;
    this.start = start;
    this.end = end;
  }

  /** Stands on a record a reader gave. */
  on(rec: SourceRecord): void {
    this.index = rec.index;
    this.line = rec.line;
    this.rec = rec;
  }

  /** The pass moves on: a record kept decodes from its bytes from now on. */
  leave(): void {
    if (this.csv) this.csv.live = null;
    this.csv = null;
    this.rec = null;
  }
}

/** One pass's reading of the source, as the visitor sees it. */
export interface PassVisitor {
  /** CSV: the transcoder to read with (its plan says what it checks and which key parts it notes). */
  readonly transcoder: CopyTranscoder | null;
  /** CSV: the buffer to write the record's COPY line into (the load with COPY bodies), else null. */
  readonly out: Buffer | null;
  /** Where in `out` the line goes. */
  readonly outPos: number;
  /** `out` is too small for the record: make room (the record is read again after). */
  overflow?(): Promise<void>;
  /** One record; 'stop' ends the pass (a stop request, a failed batch). */
  visit(at: Cursor): 'stop' | void | Promise<'stop' | void>;
  /**
   * CSV: reads up to `max` records of `file` at once, without a visit each (the scan's KeyScan.run);
   * returns how many, 0 when the next record is for a visit.
   */
  bulk?(file: ByteCsvFile, max: number): number;
}

export interface PassOptions {
  /** CSV's header row (read by the scan first). */
  headers: string[];
  /** The scan: nothing keeps a record's bytes once the pass moves on, so one read buffer serves the whole file. */
  reuse?: boolean;
  /** Every byte read goes through it (the scan's UTF-8 check). */
  check?: ByteCheck | null;
}

/** How a pass ended. */
export interface PassResult {
  /** Records read. */
  read: number;
  /** Bytes of the input read. */
  bytes: number;
  /** The header row (CSV's, an xlsx sheet's); null for self-describing formats. */
  headers: string[] | null;
}

/** A pass over a CSV file's bytes; see runPass. */
async function csvPass(source: Source, v: PassVisitor, o: PassOptions, tc: CopyTranscoder): Promise<PassResult> {
  const file = await ByteCsvFile.open(source.path, { reuse: o.reuse, check: o.check ?? undefined });
  const at = new Cursor(tc, { headers: o.headers, delimiter: source.delimiter }, () => file.bytesRead());
  let read = 0;
  try {
    for (;;) {
      // (a record at a slice's end is always visited, and the turn taken after it)
      const bulk = v.bulk ? v.bulk(file, SLICE_RECORDS - 1 - (read % SLICE_RECORDS)) : 0;
      if (bulk > 0) {
        read += bulk;
        continue;
      }
      const status = file.read(tc, v.out, v.outPos);
      if (status === MORE) {
        await file.fill();
        continue;
      }
      if (status === END) break;
      if (status === OVERFLOW) {
        await v.overflow!();
        continue;
      }
      if (status === MALFORMED) return await malformed(source, file.recLine);
      at.at(read++, file.recLine, status, file.buf, file.recStart, file.p);
      const r = v.visit(at);
      const result = r === undefined ? r : await r;
      // before the next read: the transcoder's field bounds are this record's no more
      at.leave();
      if (result === 'stop') break;
      // a megabyte read in is ~25 ms of records: the event loop turns between slices (shared/turns.ts)
      if (read % SLICE_RECORDS === 0) await nextTurn();
    }
  } finally {
    at.leave();
    await file.close();
  }
  return { read, bytes: file.bytesRead(), headers: o.headers };
}

/**
 * CSV the tokenizer cannot read: the record reader, over the same tokenizer, says why and where.
 * (A third read of the file, on this error path only.)
 */
async function malformed(source: Source, line: number): Promise<never> {
  for await (const _ of sourceRecords(source).records()) {
    // the reader throws where the bytes stop being CSV
  }
  throw new ImportError(`${source.input === '-' ? 'stdin' : source.input}: CSV is malformed near line ${line}`, 'usage');
}

/**
 * Reads the source once from its start and hands every record to `v`: CSV as bytes (the visitor's
 * transcoder), other formats through their reader.
 */
export async function runPass(source: Source, v: PassVisitor, o: PassOptions): Promise<PassResult> {
  if (v.transcoder) return csvPass(source, v, o, v.transcoder);
  const reader = sourceRecords(source, o.check ?? undefined);
  const at = new Cursor(null, { headers: o.headers, delimiter: source.delimiter }, () => reader.bytesRead());
  let read = 0;
  for await (const rec of reader.records()) {
    read++;
    at.on(rec);
    const r = v.visit(at);
    if ((r === undefined ? r : await r) === 'stop') break;
  }
  return { read, bytes: reader.bytesRead(), headers: reader.headers };
}
