import { type ByteCsvFile, CopyTranscoder, fieldPlans, RAGGED, REFUSED } from '../pass/copy-transcode.js';
import { KeyScan } from '../pass/key-scan.js';
import { DedupeJudge, type Flagged } from './judge.js';
import { DuplicateFinder } from '../../io/duplicate-finder.js';
import type { DedupePolicy, ImportProgress } from '../options.js';
import { csvKey, keyCellIndexes, keyOf } from '../shape/rows.js';
import { ImportError, type SourceRecord } from '../types.js';
import type { RowFault } from '../shape/check.js';
import { type Cursor, type PassVisitor, runPass } from '../pass/pass.js';
import type { RowShaper } from '../shape/shape.js';
import { byteCheck, type Source, sourceRecords } from '../source/source.js';

/**
 * The dedupe stage. Before anything is sent, the scan pass (a visitor of the pass driver,
 * pass/pass.ts) reads the whole input once: it counts the records, resolves every field (so
 * unknown headers stop the import before any row is sent), checks the bytes are UTF-8 when
 * nothing else did, and notes every conflict key in a Bloom filter (src/io/duplicate-finder.ts);
 * a key that is probably a repeat is kept exactly, with the index of its last valid occurrence and
 * its valid occurrences from the first time it was flagged (what `--dedupe error` needs to know
 * exactly which keys repeat, without reading the file again). In the load pass a `Deduper` then
 * says of each keyed row: send it, skip it, or reject it (`--dedupe error`).
 */
export interface Scan {
  records: number;
  /** Candidate key → index of its last valid occurrence (-1: none after the first). */
  candidates: Map<string, number>;
  /** Candidate key → where the filter first flagged it and its valid occurrences from there on. */
  flagged: Map<string, Flagged>;
  /** CSV's header row; null for self-describing formats. */
  headers: string[] | null;
}

interface ScanContext {
  source: Source;
  shaper: RowShaper;
  keyColumns: string[];
  progress: (p: ImportProgress) => void;
  stopping: () => boolean;
}

/** The scan pass as a visitor of the pass driver. */
class ScanVisitor implements PassVisitor {
  readonly out = null;
  readonly outPos = 0;
  readonly transcoder: CopyTranscoder | null = null;
  /** The transcoder when it is the key reader, which reads plain records in bulk. */
  private readonly keyScan: KeyScan | null = null;
  readonly finder: DuplicateFinder;
  readonly flagged = new Map<string, Flagged>();
  records = 0;
  /** CSV: date fields are read too, so a day-month date refuses the import here, before anything is sent. */
  private readonly dates: boolean = false;
  private keyCells: ReturnType<typeof keyCellIndexes> | undefined;
  headersDone = false;

  constructor(
    private readonly c: ScanContext,
    headers: string[] | null,
  ) {
    this.finder = new DuplicateFinder(c.source.totalBytes);
    if (!headers || c.source.format !== 'csv') return;
    this.resolveHeaders(headers); // CSV: header problems stop the import before any row is read
    const cols = headers.map((h) => c.shaper.resolver.resolve(h));
    const keyed = c.keyColumns.every((k) => cols.some((col) => col?.name === k));
    this.dates = c.shaper.dates !== null && !c.shaper.dates.format && cols.some((col) => col?.type === 'date');
    const plans = fieldPlans(cols, keyed ? c.keyColumns : null);
    const keyLength = keyed ? c.keyColumns.length : 0;
    // one uuid or text key (or none) and no dates: read by native byte search (pass/key-scan.ts)
    if (KeyScan.fits(plans, keyLength, this.dates)) this.transcoder = this.keyScan = new KeyScan(plans, c.shaper.nullToken, keyLength, c.source.delimiter);
    else this.transcoder = new CopyTranscoder(plans, c.shaper.nullToken, keyLength, true, c.source.delimiter, this.dates);
  }

  /**
   * Plain records in bulk (KeyScan.run), their keys noted: each is what visit() would count and
   * note of it. A probable repeat, and every 2000th record (progress, a stop), are visited.
   */
  bulk(file: ByteCsvFile, max: number): number {
    const ks = this.keyScan;
    if (!ks || !file.pastHeader) return 0;
    const read = ks.run(file.buf, file.p, file.buf.length, this.finder, Math.min(max, 1999 - (this.records % 2000)));
    if (read === 0) return 0;
    file.advance(ks.next, ks.lines);
    this.records += read;
    return read;
  }

  visit(at: Cursor): 'stop' | void {
    this.records++;
    if (this.records % 2000 === 0) {
      this.c.progress({ phase: 'scan', bytes: at.bytes(), totalBytes: this.c.source.totalBytes, records: this.records, totalRecords: null, written: 0, rejected: 0 });
      if (this.c.stopping()) return 'stop';
    }
    const tc = at.tc;
    if (!tc) return this.visitRecord(at.record);
    // CSV as bytes: only the key (and dates) were read; a probable repeat's row is shaped
    if (at.status === REFUSED && this.dates) this.c.shaper.dates!.refuse(at.record);
    if (at.status === RAGGED) return;
    const key = tc.notedKey(this.finder);
    if (key !== null) this.keep(key, at.record);
  }

  /** A record a reader gave (JSON, NDJSON, YAML, xlsx). */
  private visitRecord(rec: SourceRecord): void {
    const { shaper } = this.c;
    shaper.dates?.refuse(rec); // notes day-month dates; settle() refuses them after the scan
    if (rec.cells && rec.headers) {
      // cells (xlsx): coerce only the key cells; the whole row is shaped only when its key is a probable repeat
      if (!this.headersDone) this.resolveHeaders(rec.headers, rec.advice);
      if (rec.error) return;
      this.keyCells ??= keyCellIndexes(rec.headers, shaper.resolver, this.c.keyColumns);
      const key = this.keyCells ? csvKey(rec.cells, this.keyCells, shaper.fromText, shaper.nullToken) : null;
      if (key !== null && this.finder.note(key)) this.keep(key, rec);
      return;
    }
    const built = shaper.shape(rec);
    if (!built.ok) return; // rejected in the load pass; invalid rows never win a dedupe
    const key = keyOf(built.row, this.c.keyColumns);
    if (key !== null && this.finder.note(key)) this.keep(key, rec, true);
  }

  /** Header problems stop the import before any row is read; `advice` (a workbook's: its header row, its sheets) goes with them. */
  resolveHeaders(headers: string[], advice?: string): void {
    this.headersDone = true;
    try {
      for (const h of headers) this.c.shaper.resolver.resolve(h);
      this.c.shaper.resolver.finish();
    } catch (err) {
      if (advice && err instanceof ImportError) throw new ImportError(`${err.message}\n  hint: ${advice}`, err.kind);
      throw err;
    }
  }

  /**
   * A probable repeat: kept as a candidate, with its index when the row is valid (-1 marks a key
   * seen invalid only), and counted from where the filter first flagged it.
   */
  private keep(key: string, rec: SourceRecord, valid = this.c.shaper.shape(rec).ok): void {
    const { candidates } = this.finder;
    if (valid) candidates.set(key, rec.index);
    else if (!candidates.has(key)) candidates.set(key, -1);
    let f = this.flagged.get(key);
    if (!f) this.flagged.set(key, (f = { at: rec.index, valid: 0 }));
    if (valid) f.valid++;
  }
}

/**
 * The header row of a CSV source, read first (its checks and messages are the record reader's), 4 KiB
 * at a time: the reader parses every record of what it read, and 64 KiB of them cost ~5 ms before the scan.
 */
async function csvHeaders(source: Source): Promise<string[] | null> {
  const reader = sourceRecords(source, byteCheck(source) ?? undefined, 4096);
  for await (const _ of reader.records()) break;
  return reader.headers;
}

/**
 * The scan pass: the header first for CSV, then every record through the pass driver, the bytes
 * checked as UTF-8 on the way when nothing else did.
 */
export async function scanInput(c: ScanContext): Promise<Scan> {
  const headers = c.source.format === 'csv' ? await csvHeaders(c.source) : null;
  const v = new ScanVisitor(c, headers);
  const pass = await runPass(c.source, v, { headers: headers ?? [], reuse: true, check: byteCheck(c.source) });
  if (pass.headers && !v.headersDone) v.resolveHeaders(pass.headers); // an xlsx sheet without rows
  c.shaper.resolver.finish();
  c.shaper.dates?.settle(); // a day-month date without --date-format: refused before anything is sent
  return { records: v.records, candidates: v.finder.candidates, flagged: v.flagged, headers: headers ?? pass.headers };
}

/** The load pass's verdict on each keyed row: null (send it), 'skip' (another occurrence wins) or a fault (reject it). */
export class Deduper {
  private constructor(
    private readonly judge: DedupeJudge,
    private readonly conflictKey: string[] | null,
    /** A resumed `--dedupe first` must still see the keys the committed part sent. */
    readonly tracksSkipped: boolean,
    /** Whether any key can get a verdict other than "send": the scan found a probable repeat. */
    readonly judgesKeys: boolean,
  ) {}

  static open(policy: DedupePolicy, scan: Scan, conflictKey: string[] | null): Deduper {
    // `first` and `error` judge a key at its first valid occurrence, which may be before the resume point
    const tracks = Boolean(conflictKey) && policy !== 'last' && scan.candidates.size > 0;
    return new Deduper(new DedupeJudge(policy, scan.candidates, scan.flagged), conflictKey, tracks, scan.candidates.size > 0);
  }

  /** The verdict for the row at `index` with conflict key `key` (null key: always sent). */
  admit(key: string | null, index: number): null | 'skip' | RowFault {
    if (key === null) return null;
    const verdict = this.judge.judge(key, index);
    if (verdict === 'send') return null;
    if (verdict === 'skip') return 'skip';
    return {
      code: '23505',
      message: `the key (${this.conflictKey!.join(', ')})=(${key.replace(/\u0000/g, ', ')}) appears more than once in the input; --dedupe error rejects every occurrence`,
    };
  }

  /** A valid record before the resume point: only remembered, for `--dedupe first` and `error`. */
  skipped(key: string | null, index: number): void {
    if (this.tracksSkipped && key !== null) this.judge.judge(key, index);
  }
}
