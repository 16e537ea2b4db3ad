import { CopyTranscoder, fieldPlans, OK } from './copy-transcode.js';
import type { Settings } from '../options.js';
import { keyOf } from '../shape/rows.js';
import type { SourceRecord } from '../types.js';
import type { Account } from '../account/account.js';
import type { Batcher, BatchLimits } from '../batch/batch.js';
import type { Deduper } from '../dedupe/dedupe.js';
import { type Cursor, type PassVisitor, runPass } from './pass.js';
import { CopyRow, type PendingRow, type Shape } from '../shape/shape.js';
import type { Source } from '../source/source.js';
import { type Matcher, REPEAT, repeatFault } from '../match/match.js';
/** What the load pass works with: the stages, wired by importFile (src/import/engine.ts). */
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

/** The load pass's counters, as the helpers below read them. */
interface Pass {
  read: number;
  bytes: () => number;
}

/**
 * Adds a row to its batch; progress after a batch goes out and every 500 records. True when a
 * batch went out; synchronous unless it did (batch.ts).
 */
function addRow(c: LoadContext, pass: Pass, row: PendingRow): boolean | Promise<boolean> {
  const sent = c.batcher.add(row);
  return typeof sent === 'boolean' ? progressAfter(c, pass, sent) : sent.then((s) => progressAfter(c, pass, s));
}

/** addRow's progress once the row is in: after a batch went out (`sent`), and every 500 records. */
function progressAfter(c: LoadContext, pass: Pass, sent: boolean): boolean {
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

/** A record the transcoder wrote as a COPY line: checked, judged, and added with its line. */
function addLine(c: LoadContext, pass: Pass, row: CopyRow, lines: LineBuffers, end: number, matched = false, checked = false): void | Promise<void> {
  if (c.settings.checks.length > 0 && !checked) {
    // checks see shaped rows: only then is a COPY line's record decoded and shaped again
    const shaped = c.shape.shaper.shape(row.record);
    if (!shaped.ok) {
      c.batcher.reject(row.record, shaped);
      return;
    }
  }
  // a row matched by natural key was judged by the match stage (a repeated key is its fault)
  const verdict = matched ? null : c.deduper.admit(row.key, row.index);
  if (verdict === 'skip') {
    c.batcher.skip();
    return;
  }
  if (verdict) {
    c.batcher.reject(row.record, verdict);
    return;
  }
  lines.take(row, end);
  // the batch went out: its rows keep their bytes, the next line goes in a fresh buffer
  const sent = addRow(c, pass, row);
  if (sent === true) lines.renew();
  else if (sent !== false) return sent.then((s) => (s ? lines.renew() : undefined));
}

/** Whether a COPY line's record, shaped the ordinary way with its injected ids, equals its stored row. */
function unchangedLine(c: LoadContext, m: Matcher, values: Array<string | null>, rec: SourceRecord): boolean {
  const shaped = c.shape.shaper.shape(rec);
  if (!shaped.ok) return false;
  m.injected.forEach((col, i) => (shaped.row[col] = values[i]));
  return m.unchanged(shaped.row);
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

/**
 * The load pass as a visitor of the pass driver (pass/pass.ts). With COPY bodies a CSV record
 * the transcoder could write is a COPY line already in its batch's buffer (the byte way: no
 * strings or objects per cell); every other record (another format, JSON bodies, a value to
 * check, a default to fill) is shaped and checked (the record way).
 */
class LoadVisitor implements PassVisitor, Pass {
  read = 0;
  interrupted = false;
  readonly transcoder: CopyTranscoder | null = null;
  /** The buffers COPY lines go into (COPY bodies only). */
  private readonly lines: LineBuffers | null = null;
  /** The row's own key columns the transcoder notes first (none with a natural key). */
  private readonly lead: string[] = [];
  /** Bytes left before each line for the match stage's cells. */
  private readonly reserve: number;
  bytes: () => number = () => 0;

  constructor(private readonly c: LoadContext) {
    const m = c.matcher;
    this.reserve = m?.reserve ?? 0;
    if (c.source.format !== 'csv' || !c.headers) return;
    const { resolver, nullToken } = c.shape.shaper;
    const cols = c.headers.map((h) => resolver.resolve(h));
    if (!c.copyHead) {
      // JSON bodies: the transcoder only finds each record's bounds; its cells are decoded for the row
      this.transcoder = new CopyTranscoder(fieldPlans(cols, null), nullToken, 0, true, c.source.delimiter);
      return;
    }
    // the key parts the transcoder notes: the row's own key (not with a natural key: it has none), then what the match stage reads;
    // none when nothing reads them (no match stage, and the scan found no key twice: every row is sent), so no key becomes a string
    this.lead = m?.natural ? [] : (c.shape.plan.conflictKey ?? []);
    const keyCols = m ? [...this.lead, ...m.needs] : c.deduper.judgesKeys ? c.shape.plan.conflictKey : null;
    this.transcoder = new CopyTranscoder(fieldPlans(cols, keyCols), nullToken, keyCols?.length ?? 0, false, c.source.delimiter);
    this.lines = new LineBuffers(c.copyHead, c.batcher.limits);
  }

  get out(): Buffer | null {
    return this.lines?.out ?? null;
  }

  get outPos(): number {
    return this.lines ? this.lines.pos + this.reserve : 0;
  }

  /** A line too long for the buffer: the open batch goes out and the line gets a fresh buffer (twice the size when the batch was empty). */
  async overflow(): Promise<void> {
    this.lines!.renew(!(await this.c.batcher.sendOpen()));
  }

  visit(at: Cursor): 'stop' | void | Promise<void> {
    const { c } = this;
    this.read++;
    this.bytes = at.bytes;
    if (at.index < c.start) return this.before(at);
    if (c.settings.stopping()) {
      this.interrupted = true;
      return 'stop';
    }
    if (c.batcher.fatal) return 'stop';
    c.batcher.begin(at.index, at.line);
    if (!this.lines || at.status !== OK) return addRecord(c, this, at.record);
    return this.line(at);
  }

  /**
   * A record before the resume point: a resumed `--dedupe first` or `error` must still know the
   * keys the committed part sent, of valid rows only (the judge takes its first call for a key as
   * a valid occurrence). A COPY line the transcoder wrote with no checks to run is valid, and its
   * own key is the transcoder's first key parts (the match stage's follow); any other record is
   * shaped to know.
   */
  private before(at: Cursor): void {
    const { c } = this;
    if (!c.deduper.tracksSkipped) return;
    const asLine = at.tc !== null && this.lines !== null && at.status === OK && c.settings.checks.length === 0;
    const key = asLine ? at.tc!.leadKey(this.lead.length) : c.shape.shaper.keyOf(at.record, c.shape.plan.conflictKey!);
    c.deduper.skipped(key, at.index);
  }

  /** A record the transcoder wrote as a COPY line: the match stage's cells, the checks and the dedupe verdict, then its batch. */
  private line(at: Cursor): Promise<void> | void {
    const { c } = this;
    const tc = at.tc!;
    const m = c.matcher;
    const checked = m !== null && c.settings.checks.length > 0;
    if (checked && this.rejectedByChecks(at)) return;
    let end = tc.outEnd;
    let key = tc.key;
    if (m) {
      const matched = this.match(at, m, end);
      if (!matched) return;
      ({ end, key } = matched);
    }
    const row = new CopyRow(key, at.index, at.line, at.buf, at.start, at.end, at.form, at.decoded);
    return addLine(c, this, row, this.lines!, end, m?.natural === true, checked);
  }

  /** Checks judge a row before the match stage does (a repeated key is a check's finding first); true when they rejected it. */
  private rejectedByChecks(at: Cursor): boolean {
    const shaped = this.c.shape.shaper.shape(at.record);
    if (shaped.ok) return false;
    this.c.batcher.reject(at.record, shaped);
    return true;
  }

  /**
   * The match stage on a COPY line: its cells written before the line, with the line's new end
   * and the row's key; null when the record was skipped, rejected or found unchanged.
   */
  private match(at: Cursor, m: Matcher, end: number): { end: number; key: string | null } | null {
    const { c, lead } = this;
    const tc = at.tc!;
    const own = lead.length === 0 ? null : tc.leadKey(lead.length);
    const values = m.assign((i) => tc.part(lead.length + i), own);
    if (values === REPEAT && c.settings.dedupe !== 'error') {
      c.batcher.skip();
      return null;
    }
    if (!Array.isArray(values)) {
      c.batcher.reject(at.record, values === REPEAT ? repeatFault() : values);
      return null;
    }
    if (m.comparing && unchangedLine(c, m, values, at.record)) {
      c.batcher.same();
      if (this.read % 500 === 0) c.account.progress(this.bytes(), this.read, c.records);
      return null;
    }
    return { end: injectCells(this.lines!, m.prefix(values), this.reserve, end), key: m.natural ? values[0] : own };
  }
}

/**
 * The load pass: reads the source again (the pass driver) and moves every record through the
 * stages in order, shape (and checks) → dedupe → batch; the batch stage hands full batches to send
 * and account.
 */
export async function loadInput(c: LoadContext): Promise<LoadResult> {
  const v = new LoadVisitor(c);
  const pass = await runPass(c.source, v, { headers: c.headers ?? [] });
  return { interrupted: v.interrupted, read: v.read, bytes: pass.bytes };
}
