import { ByteCsvFile, CopyTranscoder, END, fieldPlans, MALFORMED, MORE, RAGGED, REFUSED } from '../copy-transcode.js';
import { DedupeJudge } from '../dedupe.js';
import { DuplicateFinder } from '../../io/duplicate-finder.js';
import type { DedupePolicy, ImportProgress } from '../options.js';
import { csvRecordAt } from '../readers/csv.js';
import { csvKey, keyCellIndexes, keyOf } from '../rows.js';
import type { SourceRecord } from '../types.js';
import type { RowFault } from './check.js';
import type { RowShaper } from './shape.js';
import { type Source, sourceRecords } from './source.js';

/**
 * The dedupe stage. Before anything is sent, a scan pass reads the whole input once: it counts the
 * records, resolves every field (so unknown headers stop the import before any row is sent) and
 * notes every conflict key in a Bloom filter (src/io/duplicate-finder.ts); a key that is probably a
 * repeat is kept exactly, with the index of its last valid occurrence. In the load pass a
 * `Deduper` then says of each keyed row: send it, skip it, or reject it (`--dedupe error`).
 */
export interface Scan {
  records: number;
  /** Candidate key → index of its last valid occurrence (-1: none after the first). */
  candidates: Map<string, number>;
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

const scanProgress = (c: ScanContext, bytes: number, records: number): void =>
  c.progress({ phase: 'scan', bytes, totalBytes: c.source.totalBytes, records, totalRecords: null, written: 0, rejected: 0 });

/** A probable repeat is kept as a candidate, with its index when the row is valid (-1 marks a key seen invalid only). */
function keepCandidate(finder: DuplicateFinder, shaper: RowShaper, key: string, rec: SourceRecord): void {
  if (shaper.shape(rec).ok) finder.candidates.set(key, rec.index);
  else if (!finder.candidates.has(key)) finder.candidates.set(key, -1);
}

/**
 * The scan of a CSV file as bytes: counts the records and notes every key; a key that is
 * (probably) a repeat has its row validated, so a dedupe never picks an invalid occurrence. Null
 * when the file is not well-formed CSV (the ordinary scan then says where).
 */
async function byteScan(c: ScanContext, headers: string[]): Promise<Scan | null> {
  const cols = headers.map((h) => c.shaper.resolver.resolve(h));
  const keyed = c.keyColumns.every((k) => cols.some((col) => col?.name === k));
  // without --date-format, date fields are read too: a day-month date refuses the import here, before anything is sent
  const dates = c.shaper.dates !== null && !c.shaper.dates.format && cols.some((col) => col?.type === 'date');
  const tc = new CopyTranscoder(fieldPlans(cols, keyed ? c.keyColumns : null), c.shaper.nullToken, keyed ? c.keyColumns.length : 0, true, c.source.delimiter, dates);
  const recordAt = (index: number) => csvRecordAt(file.buf.toString('utf8', file.recStart, file.p), headers, index, file.recLine, c.source.delimiter);
  const finder = new DuplicateFinder(c.source.totalBytes);
  const file = await ByteCsvFile.open(c.source.path, { reuse: true });
  let records = 0;
  try {
    for (;;) {
      const status = file.read(tc, null, 0);
      if (status === MORE) {
        await file.fill();
        continue;
      }
      if (status === END) break;
      if (status === MALFORMED) return null;
      const index = records++;
      if (records % 2000 === 0) {
        scanProgress(c, file.bytesRead(), records);
        if (c.stopping()) break;
      }
      if (status === REFUSED && dates) c.shaper.dates!.refuse(recordAt(index));
      if (status === RAGGED || tc.key === null || !finder.note(tc.key)) continue;
      keepCandidate(finder, c.shaper, tc.key, recordAt(index));
    }
  } finally {
    await file.close();
  }
  if (dates) c.shaper.dates!.settle();
  return { records, candidates: finder.candidates, headers };
}

/** The scan through the format's ordinary reader (JSON, NDJSON, YAML, and CSV the byte scan could not read). */
async function recordScan(c: ScanContext): Promise<Scan> {
  const { shaper } = c;
  const finder = new DuplicateFinder(c.source.totalBytes);
  const reader = sourceRecords(c.source);
  let records = 0;
  let headersDone = false;
  let keyCells: ReturnType<typeof keyCellIndexes> | undefined;
  for await (const rec of reader.records()) {
    if (!headersDone && reader.headers) {
      for (const h of reader.headers) shaper.resolver.resolve(h);
      shaper.resolver.finish(); // CSV: header problems stop the import before any row is read
      headersDone = true;
    }
    records++;
    if (records % 2000 === 0) {
      scanProgress(c, reader.bytesRead(), records);
      if (c.stopping()) break;
    }
    shaper.dates?.refuse(rec); // notes day-month dates; settle() refuses them after the scan
    if (rec.cells && rec.headers) {
      // CSV: coerce only the key cells; the whole row is shaped only when its key is a probable repeat
      if (rec.error) continue;
      keyCells ??= keyCellIndexes(rec.headers, shaper.resolver, c.keyColumns);
      const key = keyCells ? csvKey(rec.cells, keyCells, shaper.fromText, shaper.nullToken) : null;
      if (key !== null && finder.note(key)) keepCandidate(finder, shaper, key, rec);
      continue;
    }
    const built = shaper.shape(rec);
    if (!built.ok) continue; // rejected in the load pass; invalid rows never win a dedupe
    const key = keyOf(built.row, c.keyColumns);
    if (key !== null && finder.note(key)) finder.candidates.set(key, rec.index);
  }
  if (!headersDone && reader.headers) for (const h of reader.headers) shaper.resolver.resolve(h);
  shaper.resolver.finish();
  shaper.dates?.settle(); // a day-month date without --date-format: refused before anything is sent
  return { records, candidates: finder.candidates, headers: reader.headers };
}

/** The scan pass: the header first for CSV (its checks and messages), then the records as bytes when it can. */
export async function scanInput(c: ScanContext): Promise<Scan> {
  if (c.source.format === 'csv') {
    const headerReader = sourceRecords(c.source);
    for await (const _ of headerReader.records()) break;
    const headers = headerReader.headers;
    if (headers) {
      for (const h of headers) c.shaper.resolver.resolve(h);
      c.shaper.resolver.finish(); // CSV: header problems stop the import before any row is read
      const scan = await byteScan(c, headers);
      if (scan) return scan;
    }
  }
  return recordScan(c);
}

/** Exact counts of the candidate keys (`--dedupe error` rejects every row of a repeated key): one more read, only when there are candidates. */
async function candidateCounts(source: Source, shaper: RowShaper, conflictKey: string[], candidates: Map<string, number>, stopping: () => boolean): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for await (const rec of sourceRecords(source).records()) {
    if (rec.index % 2000 === 0 && stopping()) break; // the load pass then stops at once
    const key = shaper.keyOf(rec, conflictKey);
    if (key !== null && candidates.has(key)) counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

/** The load pass's verdict on each keyed row: null (send it), 'skip' (another occurrence wins) or a fault (reject it). */
export class Deduper {
  private constructor(
    private readonly judge: DedupeJudge,
    private readonly conflictKey: string[] | null,
    /** A resumed `--dedupe first` must still see the keys the committed part sent. */
    readonly tracksSkipped: boolean,
  ) {}

  static async open(policy: DedupePolicy, scan: Scan, conflictKey: string[] | null, source: Source, shaper: RowShaper, stopping: () => boolean = () => false): Promise<Deduper> {
    const counted = conflictKey && policy === 'error' && scan.candidates.size > 0;
    const counts = counted ? await candidateCounts(source, shaper, conflictKey, scan.candidates, stopping) : null;
    const tracks = Boolean(conflictKey) && policy === 'first' && scan.candidates.size > 0;
    return new Deduper(new DedupeJudge(policy, scan.candidates, counts), conflictKey, tracks);
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

  /** A record before the resume point: only remembered, for `--dedupe first`. */
  skipped(key: string | null, index: number): void {
    if (this.tracksSkipped && key !== null) this.judge.judge(key, index);
  }
}
