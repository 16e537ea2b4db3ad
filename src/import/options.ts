import type { Readable } from 'node:stream';
import type { TableDef } from '../schema/catalog.js';
import { DEFAULT_NULL_TOKEN } from '../schema/conventions.js';
import { type DateFormat, parseDateFormat } from './shape/date-format.js';
import type { RowCheck } from './shape/check.js';
import { ImportError, type InputFormat } from './types.js';
import type { RefSpec } from './match/names.js';
import type { SyncOptions, SyncReport } from './match/sync.js';

import { DEDUPE_POLICIES, DEFAULT_BATCH_BYTES, DEFAULT_BATCH_ROWS, DEFAULT_CONCURRENCY, type DedupePolicy } from './defaults.js';

export { DEDUPE_POLICIES, DEFAULT_BATCH_BYTES, DEFAULT_BATCH_ROWS, DEFAULT_CONCURRENCY, DEFAULT_COPY_BATCH_ROWS, DEFAULT_DEDUPE, FIRST_COPY_BATCH_ROWS, type DedupePolicy } from './defaults.js';

export interface ImportOptions {
  table: TableDef;
  /** A file path, or `-` for `stdin`. */
  input: string;
  stdin?: Readable;
  /** csv | json | ndjson | yaml; default from the extension. */
  format?: string;
  /** `--map` entries, source key → field. */
  map?: Record<string, string>;
  ignoreUnknown?: boolean;
  /** CSV cell text meaning SQL null (default `\N`); null turns the marker off. */
  nullToken?: string | null;
  /** `--key COLS`: the natural key rows without an id are matched by (default: the collection's, src/import/match/keys.ts). */
  key?: string[];
  /** `--ref FIELD=COLLECTION.COLUMN`, parsed: text fields resolved to ids by name (besides the defaults). */
  refs?: RefSpec[];
  /** `--create-missing`: a name no parent has creates the parent instead of rejecting the row. */
  createMissing?: boolean;
  /** `--sync`: records in the scope the input does not have are removed (src/import/match/sync.ts). */
  sync?: SyncOptions;
  /** Conflict columns; default the primary key when the input has it. */
  onConflict?: string[];
  ignoreDuplicates?: boolean;
  dedupe?: DedupePolicy;
  /** `--encoding`: how the input's bytes are decoded (default: a BOM, else UTF-8, checked). */
  encoding?: string;
  /** `--delimiter` of a CSV input (default: detected from the header line; tab for .tsv). */
  delimiter?: string;
  /** `--date-format` of date columns (`DD/MM/YYYY`, …); without it a day-month date refuses the import. */
  dateFormat?: string;
  /** `--sheet` of an xlsx input (default the first). */
  sheet?: string;
  /** `--header-row` of an xlsx input: the sheet row holding the header (default the first row with cells). */
  headerRow?: number;
  /** Per-row checks (the check stage, src/import/shape/check.ts): a failing row is rejected. */
  checks?: RowCheck[];
  batchRows?: number;
  batchBytes?: number;
  concurrency?: number;
  /** Rejects file; default `<input>.rejects.csv` (`.ndjson` for JSON/YAML inputs). */
  rejectsPath?: string;
  /** Checkpoint file; default `<input>.checkpoint.json`; none for stdin unless given; null: none. */
  checkpointPath?: string | null;
  resume?: boolean;
  dryRun?: boolean;
  /** Directory for defaults of stdin imports (rejects file). */
  cwd?: string;
  signal?: AbortSignal;
  /** Progress events (a plain callback: the CLI draws them, tests record them). */
  onProgress?: (p: ImportProgress) => void;
  onNotice?: (message: string) => void;
  /** Milliseconds clock (tests may pin it). */
  clock?: () => number;
  /** Pause between retries of a batch after a connection error or 502/503/504. */
  retryDelayMs?: number;
  /**
   * Ids this run has made that the service does not have yet (a dry run of a directory: a parent an
   * earlier file would create); the reference check counts them as present.
   */
  knownIds?: (collection: string, id: string) => boolean;
  /**
   * Records earlier files of a dry run would create (`catalog import DIR --dry-run`): a name this
   * file refers to (a release's `label`) is found among them when the service does not have it yet.
   */
  prospective?: (collection: string) => ReadonlyArray<Readonly<Record<string, string>>>;
  /**
   * `Prefer: match=` alternatives (src/schema/match.ts) the service decides each row's record by
   * where it writes (our service; a plain PostgREST ignores it). Default: the natural key, when
   * rows are matched by it.
   */
  match?: string;
  /**
   * Ask the service first whether nothing has written the catalog since this file was imported
   * with these settings (then send nothing), and record a clean run so a re-run can ask
   * (src/import/account/unchanged.ts). The CLI asks unless `--recheck`; off by default here.
   */
  unchangedRuns?: boolean;
  /** The tool's version: part of a run's fingerprint (another version may write another way). */
  toolVersion?: string;
}

/** What the progress display shows; reported every few hundred records and after each batch. */
export interface ImportProgress {
  phase: 'scan' | 'load';
  bytes: number;
  totalBytes: number;
  records: number;
  totalRecords: number | null;
  /** Rows landed (inserted + updated) so far in this run. */
  written: number;
  rejected: number;
}

/** One rejected row as the summary reports it. */
export interface RejectedRow {
  line: number;
  code: string;
  message: string;
}

/** The result of an import (also written as JSON with `--summary`). */
export interface ImportSummary {
  table: string;
  input: string;
  format: InputFormat;
  dryRun: boolean;
  /** Records in the input. */
  records: number;
  /** Records this run got through (fewer than `records` when it was interrupted or stopped). */
  processed: number;
  inserted: number;
  updated: number;
  /** Rows already stored with the same values (not sent). */
  unchanged: number;
  rejected: number;
  /** Records dropped because another record has the same conflict key. */
  deduped: number;
  /** The first 100 rejected rows. */
  rejectedRows: RejectedRow[];
  rejectsFile: string | null;
  conflictKey: string[] | null;
  columns: string[];
  ignoredFields: string[];
  /** True when stopped by a signal; a checkpoint was written. */
  interrupted: boolean;
  /** When interrupted: the line a `--resume` continues from. */
  stoppedAtLine: number | null;
  /** Record index a resumed import started from (0 for a fresh one). */
  resumedFrom: number;
  checkpointFile: string | null;
  /** Batch limits at the end (smaller than asked if the server forced a shrink). */
  batchRows: number;
  batchBytes: number;
  requests: number;
  seconds: number;
  rowsPerSecond: number;
  /** The natural key rows were matched by (alternatives), or null. */
  naturalKey?: string[][] | null;
  /** Parent records created for unknown names (`--create-missing`), per collection. */
  created?: Record<string, number>;
  /** A sync's deletes (planned in a dry run). */
  sync?: SyncReport;
  /**
   * When nothing was sent because nothing has written the catalog since this file was imported
   * with these settings: when that run finished (its rows are all counted as unchanged).
   */
  unchangedSince?: string;
  /** Whether this run was recorded, so that an unchanged re-run sends nothing. */
  recorded?: boolean;
}

/** The options every stage reads, checked and with their defaults. */
export interface Settings {
  table: TableDef;
  nullToken: string | null;
  dedupe: DedupePolicy;
  /** The conflict key asked for (`--on-conflict`) or the primary key. */
  keyColumns: string[];
  checks: RowCheck[];
  /** `--date-format`, parsed. */
  dateFormat: DateFormat | null;
  concurrency: number;
  batchRows: number;
  /** The batch size was given (a COPY service does not raise it then). */
  batchRowsGiven: boolean;
  batchBytes: number;
  ignoreDuplicates: boolean;
  dryRun: boolean;
  retryDelayMs: number;
  clock: () => number;
  notice: (message: string) => void;
  progress: (p: ImportProgress) => void;
  /** True once the import was asked to stop. */
  stopping: () => boolean;
  /** ImportOptions.knownIds. */
  knownIds?: (collection: string, id: string) => boolean;
  /** ImportOptions.createMissing: credit names no artist has are made, not refused. */
  createMissing: boolean;
  /** The `match=` preference of upserts (ImportOptions.match, else the natural key the rows are matched by), or undefined. */
  match?: string;
}

/** Checks the options that need no input and fills in the defaults. */
export function settle(opts: ImportOptions): Settings {
  const table = opts.table;
  const dedupe = opts.dedupe ?? 'last';
  if (!DEDUPE_POLICIES.includes(dedupe)) throw new ImportError(`--dedupe must be one of ${DEDUPE_POLICIES.join(', ')}`, 'usage');
  for (const c of opts.onConflict ?? []) {
    if (!table.columns.some((col) => col.name === c)) throw new ImportError(`--on-conflict ${c}: ${table.name} has no field "${c}"`, 'usage');
  }
  const signal = opts.signal;
  return {
    table,
    nullToken: opts.nullToken === undefined ? DEFAULT_NULL_TOKEN : opts.nullToken,
    dedupe,
    keyColumns: opts.onConflict && opts.onConflict.length ? opts.onConflict : table.primaryKey,
    checks: opts.checks ?? [],
    dateFormat: opts.dateFormat ? parseDateFormat(opts.dateFormat) : null,
    concurrency: Math.max(1, Math.floor(opts.concurrency ?? DEFAULT_CONCURRENCY)),
    batchRows: Math.max(1, Math.floor(opts.batchRows ?? DEFAULT_BATCH_ROWS)),
    batchRowsGiven: opts.batchRows !== undefined,
    batchBytes: Math.max(1024, Math.floor(opts.batchBytes ?? DEFAULT_BATCH_BYTES)),
    ignoreDuplicates: Boolean(opts.ignoreDuplicates),
    dryRun: Boolean(opts.dryRun),
    retryDelayMs: opts.retryDelayMs ?? 500,
    clock: opts.clock ?? (() => performance.now()),
    notice: opts.onNotice ?? (() => {}),
    progress: opts.onProgress ?? (() => {}),
    stopping: () => Boolean(signal?.aborted),
    knownIds: opts.knownIds,
    createMissing: Boolean(opts.createMissing),
  };
}
