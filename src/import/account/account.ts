import { resolve as resolvePath } from 'node:path';
import { type CarriedCounts, type Checkpoint, type Fingerprint, fingerprint, fingerprintMismatch, readCheckpoint, removeCheckpoint, writeCheckpoint } from './checkpoint.js';
import type { ImportOptions, ImportSummary, RejectedRow, Settings } from '../options.js';
import { type Reject, RejectsWriter } from './rejects.js';
import { ImportError } from '../types.js';
import type { Batch, BatchOutcome, Position } from '../batch/batch.js';
import type { Source } from '../source/source.js';

/**
 * The account stage: counts, the rejects file, the checkpoint and progress. It hears of every
 * batch that completes (with the committed position after it) and writes what it must in order
 * (rejects when their batch completes, so a resume never writes a reject twice; the checkpoint
 * atomically, at most every 250 ms while keyed batches complete). At the end it gives the summary.
 */

/** Where an import starts: a fresh one at record 0, a resumed one where its checkpoint says. */
export interface ResumePoint {
  index: number;
  line: number;
  carried: CarriedCounts;
  /** Checkpoint file and the input's fingerprint, when this run keeps one. */
  checkpointPath: string | null;
  fingerprint: Fingerprint | null;
}

const NO_COUNTS: CarriedCounts = { inserted: 0, updated: 0, unchanged: 0, rejected: 0, deduped: 0 };

/** Reads the checkpoint (with `--resume`) and checks it belongs to this input and table. */
export async function resumePoint(opts: ImportOptions, source: Source, notice: (m: string) => void): Promise<ResumePoint> {
  const checkpointPath = opts.dryRun || opts.checkpointPath === null ? null : (opts.checkpointPath ?? (source.input === '-' ? null : `${opts.input}.checkpoint.json`));
  const fp = checkpointPath && !source.interrupted ? await fingerprint(source.rawPath) : null;
  const fresh: ResumePoint = { index: 0, line: 1, carried: NO_COUNTS, checkpointPath, fingerprint: fp };
  if (!checkpointPath || !fp) return fresh;
  const cp = await readCheckpoint(checkpointPath);
  if (!opts.resume) {
    if (cp) notice(`an interrupted import left ${checkpointPath}; starting from the beginning (pass --resume to continue it)`);
    return fresh;
  }
  if (!cp) {
    notice(`no checkpoint at ${checkpointPath}: starting from the beginning`);
    return fresh;
  }
  const table = opts.table.name;
  if (cp.table !== table) throw new ImportError(`the checkpoint ${checkpointPath} is for ${cp.table}, not ${table}`, 'usage');
  const why = source.streamed ? (cp.fingerprint.size !== fp.size || cp.fingerprint.head !== fp.head ? 'the input differs' : null) : fingerprintMismatch(cp.fingerprint, fp);
  if (why) throw new ImportError(`cannot resume: ${opts.input} is not the file the checkpoint was made for (${why}). Run without --resume to import it from the start (upserts make that safe).`, 'usage');
  notice(`resuming ${opts.input} at line ${cp.line} (record ${cp.committed + 1}); ${cp.counts.inserted + cp.counts.updated} rows were already written`);
  return { index: cp.committed, line: cp.line, carried: cp.counts, checkpointPath, fingerprint: fp };
}

/** The rejects file's path: the option, else beside the input (stdin: in the working directory). */
export function rejectsPathOf(opts: ImportOptions, source: Source): string {
  if (opts.rejectsPath) return opts.rejectsPath;
  if (source.input === '-') return resolvePath(opts.cwd ?? '.', `${opts.table.name}.rejects.csv`);
  return `${opts.input}.rejects.${source.format === 'csv' || source.format === 'xlsx' ? 'csv' : 'ndjson'}`;
}

export class Account {
  readonly totals: CarriedCounts;
  readonly rejectedRows: RejectedRow[] = [];
  private written = 0;
  private rejectedNow = 0;
  private committed: Position;
  private chain: Promise<void> = Promise.resolve();
  private lastSave = 0;
  private readonly rejects: RejectsWriter;

  constructor(
    private readonly settings: Settings,
    private readonly source: Source,
    private readonly resume: ResumePoint,
    rejectsPath: string,
    headers: () => string[] | null,
    /** Keyed imports save the checkpoint at most every 250 ms (a re-sent batch is harmless). */
    private readonly keyed: boolean,
  ) {
    this.totals = { ...resume.carried };
    this.committed = { index: resume.index, line: resume.line };
    const kind = (source.format === 'csv' || source.format === 'xlsx') && !/\.(ndjson|jsonl)$/i.test(rejectsPath) ? 'csv' : 'ndjson';
    // CSV rejects in the input's own dialect (an xlsx input's rejects are plain UTF-8 CSV)
    const enc = source.encoding;
    const dialect = { delimiter: source.delimiter, encoding: enc?.encoding ?? 'utf-8', bom: Boolean(enc?.fromBom) };
    this.rejects = new RejectsWriter(rejectsPath, kind, headers, resume.index > 0, dialect);
  }

  /** Clears a rejects file an earlier run left (unless resuming). */
  async start(): Promise<void> {
    if (!this.settings.dryRun) await this.rejects.reset();
  }

  /** A batch completed: its counts and rejects, and the checkpoint when the committed position moved. */
  batchDone(b: Batch, o: BatchOutcome, committed: Position): void {
    const t = this.totals;
    t.inserted += o.inserted;
    t.updated += o.updated;
    t.unchanged += o.unchanged;
    t.rejected += o.rejects.length;
    t.deduped += b.deduped;
    this.written += o.inserted + o.updated;
    this.rejectedNow += o.rejects.length;
    for (const r of o.rejects) if (this.rejectedRows.length < 100) this.rejectedRows.push({ line: r.record.line, code: r.code, message: r.message });
    if (!this.settings.dryRun && o.rejects.length) this.writeRejects(o.rejects);
    if (committed.index > this.committed.index) {
      this.committed = committed;
      this.save(false);
    }
  }

  private writeRejects(rs: Reject[]): void {
    this.chain = this.chain.then(() => this.rejects.write(rs));
  }

  private save(force: boolean): void {
    const { checkpointPath, fingerprint: fp } = this.resume;
    if (!checkpointPath || !fp || this.settings.dryRun) return;
    const now = this.settings.clock();
    if (!force && this.keyed && now - this.lastSave < 250) return;
    this.lastSave = now;
    const cp: Checkpoint = {
      version: 1,
      table: this.settings.table.name,
      fingerprint: fp,
      committed: this.committed.index,
      line: this.committed.line,
      counts: { ...this.totals },
      savedAt: new Date().toISOString(),
    };
    this.chain = this.chain.then(() => writeCheckpoint(checkpointPath, cp));
  }

  /** A progress event of the load pass. */
  progress(bytes: number, records: number, totalRecords: number): void {
    const p = { phase: 'load' as const, bytes, totalBytes: this.source.totalBytes, records, totalRecords, written: this.written, rejected: this.rejectedNow };
    this.settings.progress(p);
  }

  /** The end: a finished import removes its checkpoint, a stopped one saves it at `committed`. */
  async close(finished: boolean, committed: Position): Promise<void> {
    await this.chain;
    if (finished) {
      if (this.resume.checkpointPath) await removeCheckpoint(this.resume.checkpointPath);
      return;
    }
    this.committed = committed;
    this.save(true);
    await this.chain;
  }

  /** How to go on after a failure stopped the run (shown under the error), or null when this run keeps no checkpoint. */
  resumeHint(): string | null {
    const { checkpointPath, fingerprint: fp } = this.resume;
    if (!checkpointPath || !fp || this.settings.dryRun) return null;
    return `every row before line ${this.committed.line} is committed; run the same command with --resume to continue (checkpoint: ${checkpointPath})`;
  }

  /** Where a stopped import stands. */
  get position(): Position {
    return this.committed;
  }

  get rejectsFile(): string {
    return this.rejects.path;
  }
}

/** The summary of a run, from what the stages report at the end. */
export function summarize(parts: {
  opts: ImportOptions;
  source: Source;
  account: Account;
  resume: ResumePoint;
  records: number;
  finished: boolean;
  interrupted: boolean;
  plan: { conflictKey: string[] | null; columns: string[]; ignoredFields: string[] };
  limits: { rows: number; bytes: number };
  requests: number;
  seconds: number;
  /** Whether the run was recorded for unchanged re-runs (undefined: not asked, unchanged.ts). */
  recorded?: boolean;
}): ImportSummary {
  const { opts, account, resume, finished } = parts;
  const t = account.totals;
  const processed = (finished ? parts.records : account.position.index) - resume.index;
  return {
    table: opts.table.name,
    input: opts.input,
    format: parts.source.format,
    dryRun: Boolean(opts.dryRun),
    records: parts.records,
    processed,
    ...t,
    rejectedRows: [...account.rejectedRows].sort((a, b) => a.line - b.line), // batches finish out of order
    rejectsFile: !opts.dryRun && t.rejected > 0 ? account.rejectsFile : null,
    conflictKey: parts.plan.conflictKey,
    columns: parts.plan.columns,
    ignoredFields: parts.plan.ignoredFields,
    interrupted: parts.interrupted,
    stoppedAtLine: finished ? null : account.position.line,
    resumedFrom: resume.index,
    checkpointFile: finished || !resume.fingerprint ? null : resume.checkpointPath, // none for an input never read
    batchRows: parts.limits.rows,
    batchBytes: parts.limits.bytes,
    requests: parts.requests,
    seconds: Math.round(parts.seconds * 1000) / 1000,
    rowsPerSecond: parts.seconds > 0 ? Math.round(processed / parts.seconds) : processed,
    ...(parts.recorded === undefined ? {} : { recorded: parts.recorded }),
  };
}

/**
 * The summary of a run that sent nothing: the service says nothing has written the catalog since
 * the same file was imported with the same settings (unchanged.ts), so each of its rows is unchanged.
 */
export function unchangedRun(opts: ImportOptions, format: ImportSummary['format'], check: { records: number; finished: string }, requests: number, seconds: number): ImportSummary {
  const n = check.records;
  return {
    table: opts.table.name,
    input: opts.input,
    format,
    dryRun: false,
    records: n,
    processed: n,
    inserted: 0,
    updated: 0,
    unchanged: n,
    rejected: 0,
    deduped: 0,
    rejectedRows: [],
    rejectsFile: null,
    conflictKey: null,
    columns: [],
    ignoredFields: [],
    interrupted: false,
    stoppedAtLine: null,
    resumedFrom: 0,
    checkpointFile: null,
    batchRows: 0,
    batchBytes: 0,
    requests,
    seconds: Math.round(seconds * 1000) / 1000,
    rowsPerSecond: seconds > 0 ? Math.round(n / seconds) : n,
    unchangedSince: check.finished,
  };
}
