import { ByteCsvFile, CopyTranscoder, END, fieldPlans, MALFORMED, MORE, OK, OVERFLOW } from '../copy-transcode.js';
import type { Settings } from '../options.js';
import { csvRecordAt } from '../readers/csv.js';
import { keyOf } from '../rows.js';
import { ImportError, type SourceRecord } from '../types.js';
import type { Account } from './account.js';
import type { Batcher, BatchLimits } from './batch.js';
import type { Deduper } from './dedupe.js';
import { CopyRow, type PendingRow, type Shape } from './shape.js';
import { type Source, sourceRecords } from './source.js';
import { type Matcher, REPEAT, repeatFault } from './match.js';

/**
 * The load pass: reads the source again and moves every record through the stages in order,
 * shape (and checks) → dedupe → batch; the batch stage hands full batches to send and account.
 * A CSV file sent as COPY bodies takes the byte path (`loadCopyLines`), where the transcoder
 * (src/import/copy-transcode.ts) writes each record's COPY line straight into its batch's buffer
 * without strings or objects per cell; every other input takes the record path.
 */
export interface LoadContext {
  source: Source;
  shape: Shape;
  deduper: Deduper;
  batcher: Batcher;
  account: Account;
  settings: Settings;
  /** The resume point: records before it were committed by an earlier run. */
  start: number;
  /** Records in the input (the scan's count), for progress. */
  records: number;
  /** CSV's header row (the byte path). */
  headers: string[] | null;
  /** The COPY header line when the service takes COPY bodies (the byte path), else null. */
  copyHead: Buffer | null;
  /** The match stage (natural keys, references by name, a sync's marks), when the import has one. */
  matcher: Matcher | null;
}

/** How the load pass ended. */
export interface LoadResult {
  interrupted: boolean;
  /** Records read (the resumed part included). */
  read: number;
  bytes: number;
}

/** Per-pass counters shared by the helpers below. */
interface Pass {
  read: number;
  bytes: () => number;
}

/** Adds a row to its batch; progress after a batch goes out and every 500 records. True when a batch went out. */
async function addRow(c: LoadContext, pass: Pass, row: PendingRow): Promise<boolean> {
  const sent = await c.batcher.add(row);
  if (sent || pass.read % 500 === 0) c.account.progress(pass.bytes(), pass.read, c.records);
  return sent;
}

/** A record the ordinary way (shaped and checked): a reject, a dedupe skip, or a JSON row of the open batch. */
async function addRecord(c: LoadContext, pass: Pass, rec: SourceRecord): Promise<void> {
  const built = c.shape.shaper.shape(rec);
  if (!built.ok) return c.batcher.reject(rec, built);
  const conflictKey = c.shape.plan.conflictKey;
  if (c.matcher) {
    const m = c.matcher;
    const text = (v: unknown): string | null => (v === undefined || v === null ? null : typeof v === 'string' ? v : JSON.stringify(v));
    const own = m.natural ? null : text(built.row.id);
    const values = m.assign((i) => text(built.row[m.needs[i]]), own);
    if (values === REPEAT) return c.settings.dedupe === 'error' ? c.batcher.reject(rec, repeatFault()) : c.batcher.skip();
    if (!Array.isArray(values)) return c.batcher.reject(rec, values);
    m.injected.forEach((col, i) => (built.row[col] = values[i]));
    if (m.unchanged(built.row)) return c.batcher.same();
  }
  const key = conflictKey ? keyOf(built.row, conflictKey) : null;
  const verdict = c.matcher?.natural ? null : c.deduper.admit(key, rec.index);
  if (verdict === 'skip') return c.batcher.skip();
  if (verdict) return c.batcher.reject(rec, verdict);
  await addRow(c, pass, c.shape.jsonRow(rec, built.row, key));
}

/** The record path: every record through the format's reader. */
export async function loadRecords(c: LoadContext): Promise<LoadResult> {
  const reader = sourceRecords(c.source);
  const pass: Pass = { read: 0, bytes: () => reader.bytesRead() };
  const conflictKey = c.shape.plan.conflictKey;
  let interrupted = false;
  for await (const rec of reader.records()) {
    pass.read++;
    if (rec.index < c.start) {
      // a resumed `--dedupe first` must still know which keys the committed part already sent
      if (c.deduper.tracksSkipped) c.deduper.skipped(c.shape.shaper.keyOf(rec, conflictKey!), rec.index);
      continue;
    }
    if (c.settings.stopping()) {
      interrupted = true;
      break;
    }
    if (c.batcher.fatal) break;
    c.batcher.begin(rec.index, rec.line);
    await addRecord(c, pass, rec);
  }
  return { interrupted, read: pass.read, bytes: pass.bytes() };
}

/**
 * The buffers the transcoder writes COPY lines into, one per batch: sized for the rows a batch
 * takes at the average line length so far (a whole `--batch-bytes` per batch would allocate ~10×
 * what is used and make V8 collect for the external memory); a buffer that fills up sends its
 * batch early. Each starts with the COPY header line, so a batch whose lines fill one buffer in
 * order (the usual case) is sent as that buffer's first bytes, without copying it into a body.
 */
class LineBuffers {
  out: Buffer;
  pos: number;
  private copied = 0;
  private copiedRows = 0;

  constructor(
    private readonly head: Buffer,
    private readonly limits: BatchLimits,
  ) {
    this.out = this.fresh(this.size());
    this.pos = head.length;
  }

  private size(): number {
    const avg = this.copiedRows > 100 ? this.copied / this.copiedRows : 1024;
    return Math.min(Math.max(this.limits.bytes, 64 * 1024), Math.max(64 * 1024, Math.ceil(this.limits.rows * avg * 1.25) + 16 * 1024));
  }

  private fresh(size: number): Buffer {
    const b = Buffer.allocUnsafe(size + this.head.length);
    this.head.copy(b, 0);
    return b;
  }

  /** A new buffer (the batch went out: its rows keep their bytes); `grow` doubles it for a line too long for the current one. */
  renew(grow = false): void {
    this.out = this.fresh(grow ? this.out.length * 2 : this.size());
    this.pos = this.head.length;
  }

  /** The row's line is `out[pos, end)`: it is the row's, and the next line goes after it. */
  take(row: PendingRow, end: number): void {
    row.copyOut = this.out;
    row.copyAt = this.pos;
    row.bytes = end - this.pos;
    this.copied += row.bytes;
    this.copiedRows++;
    this.pos = end;
  }
}

/** A record the transcoder wrote as a COPY line: checked, judged, and added with its line. True when its batch went out. */
async function addLine(c: LoadContext, pass: Pass, row: CopyRow, lines: LineBuffers, end: number, matched = false, checked = false): Promise<boolean> {
  if (c.settings.checks.length > 0 && !checked) {
    // checks see shaped rows: only then is a COPY line's record decoded and shaped again
    const shaped = c.shape.shaper.shape(row.record);
    if (!shaped.ok) {
      c.batcher.reject(row.record, shaped);
      return false;
    }
  }
  // a row matched by natural key was judged by the match stage (a repeated key is its fault)
  const verdict = matched ? null : c.deduper.admit(row.key, row.index);
  if (verdict === 'skip') {
    c.batcher.skip();
    return false;
  }
  if (verdict) {
    c.batcher.reject(row.record, verdict);
    return false;
  }
  lines.take(row, end);
  return addRow(c, pass, row);
}

/** Whether a COPY line's record, shaped the ordinary way with its injected ids, equals its stored row. */
function unchangedLine(c: LoadContext, m: Matcher, values: Array<string | null>, rec: SourceRecord): boolean {
  const shaped = c.shape.shaper.shape(rec);
  if (!shaped.ok) return false;
  m.injected.forEach((col, i) => (shaped.row[col] = values[i]));
  return m.unchanged(shaped.row);
}

/** The row's own key from the transcoder's first `n` key parts (parts joined by NUL), or null. */
function leadKey(tc: CopyTranscoder, n: number): string | null {
  let key = '';
  for (let k = 0; k < n; k++) {
    const part = tc.part(k);
    if (part === null) return null;
    key = k === 0 ? part : `${key}\u0000${part}`;
  }
  return key;
}

/**
 * Writes the match stage's cells (`id,label_id,`) before a COPY line the transcoder wrote
 * `reserve` bytes after the line's start, and closes the gap: the line stays one contiguous
 * range after the one before it. Returns the line's new end.
 */
function injectCells(lines: LineBuffers, prefix: string, reserve: number, end: number): number {
  const at = lines.pos;
  const n = lines.out.write(prefix, at, 'latin1');
  if (n < reserve) lines.out.copyWithin(at + n, at + reserve, end);
  return end - (reserve - n);
}

/** One byte-path pass: what its helpers share, set once per pass. */
interface BytePass extends Pass {
  c: LoadContext;
  file: ByteCsvFile;
  tc: CopyTranscoder;
  lines: LineBuffers;
  headers: string[];
  /** The row's own key columns the transcoder notes first (none with a natural key). */
  lead: string[];
  /** Bytes left before each line for the match stage's cells. */
  reserve: number;
}

/** The record the byte reader stands on, decoded the ordinary way (the record way, a reject, a comparison). */
function currentRecord(b: BytePass, index: number): SourceRecord {
  const { file } = b;
  return csvRecordAt(file.buf.toString('utf8', file.recStart, file.p), b.headers, index, file.recLine, b.c.source.delimiter);
}

/** Checks judge a row before the match stage does (a repeated key is a check's finding first); true when they rejected it. */
function rejectedByChecks(b: BytePass, index: number): boolean {
  const rec = currentRecord(b, index);
  const shaped = b.c.shape.shaper.shape(rec);
  if (shaped.ok) return false;
  b.c.batcher.reject(rec, shaped);
  return true;
}

/**
 * The match stage on a COPY line: its cells written before the line, with the line's new end
 * and the row's key; null when the record was skipped, rejected or found unchanged.
 */
function matchLine(b: BytePass, m: Matcher, index: number, end: number): { end: number; key: string | null } | null {
  const { c, tc, lead } = b;
  const own = lead.length === 0 ? null : leadKey(tc, lead.length);
  const values = m.assign((i) => tc.part(lead.length + i), own);
  if (values === REPEAT && c.settings.dedupe !== 'error') {
    c.batcher.skip();
    return null;
  }
  if (!Array.isArray(values)) {
    c.batcher.reject(currentRecord(b, index), values === REPEAT ? repeatFault() : values);
    return null;
  }
  if (m.comparing && unchangedLine(c, m, values, currentRecord(b, index))) {
    c.batcher.same();
    if (b.read % 500 === 0) c.account.progress(b.bytes(), b.read, c.records);
    return null;
  }
  return { end: injectCells(b.lines, m.prefix(values), b.reserve, end), key: m.natural ? values[0] : own };
}

/**
 * The byte path: CSV bytes → COPY lines (no strings or objects per cell); a record the
 * transcoder cannot write as a line (a value to check, a default to fill) takes the record way.
 */
export async function loadCopyLines(c: LoadContext): Promise<LoadResult> {
  const headers = c.headers ?? [];
  const { resolver, nullToken } = c.shape.shaper;
  const m = c.matcher;
  // the key parts the transcoder notes: the row's own key (not with a natural key: it has none), then what the match stage reads
  const lead = m?.natural ? [] : (c.shape.plan.conflictKey ?? []);
  const keyCols = m ? [...lead, ...m.needs] : c.shape.plan.conflictKey;
  const delimiter = c.source.delimiter;
  const tc = new CopyTranscoder(fieldPlans(headers.map((h) => resolver.resolve(h)), keyCols), nullToken, keyCols?.length ?? 0, false, delimiter);
  const file = await ByteCsvFile.open(c.source.path);
  const lines = new LineBuffers(c.copyHead!, c.batcher.limits);
  const b: BytePass = { c, file, tc, lines, headers, lead, reserve: m?.reserve ?? 0, read: 0, bytes: () => file.bytesRead() };
  let interrupted = false;
  try {
    for (let index = 0; ; ) {
      const status = file.read(tc, lines.out, lines.pos + b.reserve);
      if (status === MORE) {
        await file.fill();
        continue;
      }
      if (status === END) break;
      if (status === OVERFLOW) {
        lines.renew(!(await c.batcher.sendOpen()));
        continue;
      }
      const recIndex = index++;
      b.read++;
      if (recIndex < c.start) {
        c.deduper.skipped(tc.key, recIndex); // a resumed `--dedupe first` must still know the keys sent
        continue;
      }
      if (c.settings.stopping()) {
        interrupted = true;
        break;
      }
      if (c.batcher.fatal) break;
      if (status === MALFORMED) throw new ImportError(`${c.source.input}: CSV is malformed near line ${file.recLine}`, 'usage');
      c.batcher.begin(recIndex, file.recLine);
      if (status !== OK) {
        await addRecord(c, b, currentRecord(b, recIndex));
        continue;
      }
      const checked = m !== null && c.settings.checks.length > 0;
      if (checked && rejectedByChecks(b, recIndex)) continue;
      let end = tc.outEnd;
      let key = tc.key;
      if (m) {
        const matched = matchLine(b, m, recIndex, end);
        if (!matched) continue;
        ({ end, key } = matched);
      }
      const row = new CopyRow(key, file.buf, file.recStart, file.p, recIndex, file.recLine, headers, delimiter);
      if (await addLine(c, b, row, lines, end, m?.natural === true, checked)) lines.renew();
    }
  } finally {
    await file.close();
  }
  return { interrupted, read: b.read, bytes: b.bytes() };
}
