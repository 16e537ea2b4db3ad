import { stat } from 'node:fs/promises';
import { resolve as resolvePath } from 'node:path';
import type { Readable } from 'node:stream';
import type { ColumnDef, TableDef } from '../schema/catalog.js';
import {
  type CarriedCounts,
  type Checkpoint,
  type Fingerprint,
  fingerprint,
  fingerprintMismatch,
  readCheckpoint,
  removeCheckpoint,
  writeCheckpoint,
} from './checkpoint.js';
import { DEFAULT_NULL_TOKEN } from './coerce.js';
import { ExistingLookup, LookupError, knownDefault, sameValue } from './existing.js';
import { DedupeJudge, DuplicateFinder } from './dedupe.js';
import { FieldResolver } from './mapping.js';
import { detectFormat, openReader } from './readers/index.js';
import { type Reject, RejectsWriter } from './rejects.js';
import { COPY_CSV } from '../grammar/media.js';
import { ByteCsvFile, CopyTranscoder, END, fieldPlans, MALFORMED, MORE, OK, OVERFLOW, RAGGED } from './copy-transcode.js';
import { csvRecordAt } from './readers/csv.js';
import { buildRow, csvKey, keyCellIndexes, keyOf } from './rows.js';
import { spoolToFile } from './spool.js';
import { type HttpResponse, type ServiceFault, type Transport, faultOf } from './transport.js';
import { ImportError, type InputFormat, type SourceRecord } from './types.js';

export type DedupePolicy = 'last' | 'first' | 'error';
export const DEDUPE_POLICIES: readonly DedupePolicy[] = ['last', 'first', 'error'];

/** Defaults: 1,000 rows (5,000 as COPY bodies) or 4 MB a batch (whichever first), 3 batches in flight. */
export const DEFAULT_BATCH_ROWS = 1000;
/** The default when the service takes COPY bodies (our own service): 5,000 rows (still ≤ 4 MB). */
export const DEFAULT_COPY_BATCH_ROWS = 5000;
export const DEFAULT_BATCH_BYTES = 4 * 1024 * 1024;
export const DEFAULT_CONCURRENCY = 3;

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
  /** Conflict columns; default the primary key when the input has it. */
  onConflict?: string[];
  ignoreDuplicates?: boolean;
  dedupe?: DedupePolicy;
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
  onProgress?: (p: ImportProgress) => void;
  onNotice?: (message: string) => void;
  /** Milliseconds clock (tests may pin it). */
  clock?: () => number;
  /** Pause between retries of a batch after a connection error or 502/503/504. */
  retryDelayMs?: number;
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
}

interface PendingRow {
  record: SourceRecord;
  /** The row as a JSON body carries it (null until needed when `copy` is set); parsed back only to compare with a stored row. */
  json: string | null;
  /**
   * The buffer holding the row as a COPY CSV line (at `copyAt`, `bytes` long), when the service
   * takes COPY bodies and the row can be one. Offsets, not a view per row: 100k Buffer views were
   * a fifth of an import's garbage.
   */
  copyOut: Buffer | null;
  copyAt: number;
  bytes: number;
  key: string | null;
  kind: 'insert' | 'update';
  /** Every column of the request is in the row (left-out cells filled with known constant defaults). */
  complete: boolean;
}

/** The source record of a CSV record's bytes `src[a, z)` (its cells decoded the ordinary way). */
function recordOf(src: Buffer, a: number, z: number, headers: string[], index: number, line: number): SourceRecord {
  return csvRecordAt(src.toString('utf8', a, z), headers, index, line);
}

/** A row the transcoder wrote as a COPY line; its source record is decoded again only for a reject. */
class CopyRow implements PendingRow {
  json: string | null = null;
  kind: 'insert' | 'update' = 'insert';
  complete = true;
  copyOut: Buffer | null = null;
  copyAt = 0;
  bytes = 0;
  private rec: SourceRecord | null = null;
  constructor(
    readonly key: string | null,
    private readonly src: Buffer,
    private readonly a: number,
    private readonly z: number,
    readonly index: number,
    readonly line: number,
    private readonly headers: string[],
  ) {}

  get record(): SourceRecord {
    this.rec ??= recordOf(this.src, this.a, this.z, this.headers, this.index, this.line);
    return this.rec;
  }
}

interface Batch {
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
}

interface BatchOutcome {
  inserted: number;
  updated: number;
  unchanged: number;
  rejects: Reject[];
}

/** A batch failure that is not about its rows (auth, unknown column, server down): the import stops. */
export class BatchError extends Error {
  constructor(readonly fault: ServiceFault) {
    super(`the server refused a batch: ${fault.status} ${fault.code}: ${fault.message}${fault.details ? ` (${fault.details})` : ''}`);
    this.name = 'BatchError';
  }
}

/** SQLSTATE classes that blame the data of some row: split the batch to find it. */
function isRowFault(f: ServiceFault): boolean {
  return /^(22|23|P0001|21000)/.test(f.code);
}

function isShrinkFault(res: HttpResponse, f: ServiceFault): boolean {
  return res.status === 413 || f.code === '57014' || f.code === '54000';
}

function isTransient(res: HttpResponse): boolean {
  return res.status === 502 || res.status === 503 || res.status === 504;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The rows' COPY lines after `head`, as one buffer. Lines that follow each other in one buffer are
 * taken as one range; every batch buffer starts with `head` (see `freshOut`), so a batch whose
 * lines are one range from just after it (the usual case) is that buffer's first bytes, uncopied.
 */
function copyBody(head: Buffer, rows: PendingRow[]): Buffer {
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
function serverCounts(res: HttpResponse): { inserted: number; updated: number; unchanged: number } | null {
  const h = res.headers['catalog-counts'];
  if (!h) return null;
  const out = { inserted: 0, updated: 0, unchanged: 0 };
  for (const part of h.split(',')) {
    const [k, v] = part.trim().split('=');
    if ((k === 'inserted' || k === 'updated' || k === 'unchanged') && /^\d+$/.test(v ?? '')) out[k] = Number(v);
  }
  return out;
}

/** `Key (id)=(…)`-style details make the reject message self-contained. */
function faultMessage(f: ServiceFault): string {
  return f.details ? `${f.message} (${f.details})` : f.message;
}

/**
 * Imports a file into a table through a Transport: a scan pass validates every record and finds
 * duplicate conflict keys, then a load pass streams rows in batches (rows and bytes bounded, a few
 * in flight) as merge-duplicates upserts. A failing batch is bisected down to its bad rows, which
 * go to the rejects file; 413/statement-timeout halve the batch size. A checkpoint records how far
 * every batch is committed, so an interrupted import resumes where it stopped.
 */
export async function importFile(opts: ImportOptions, baseTransport: Transport): Promise<ImportSummary> {
  let requests = 0;
  const transport: Transport = {
    send(req) {
      requests++;
      return baseTransport.send(req);
    },
  };
  const clock = opts.clock ?? (() => performance.now());
  const started = clock();
  const table = opts.table;
  const notice = opts.onNotice ?? (() => {});
  const format = detectFormat(opts.input, opts.format);
  const fromStdin = opts.input === '-';
  const nullToken = opts.nullToken === undefined ? DEFAULT_NULL_TOKEN : opts.nullToken;
  const dedupe = opts.dedupe ?? 'last';
  if (!DEDUPE_POLICIES.includes(dedupe)) throw new ImportError(`--dedupe must be one of ${DEDUPE_POLICIES.join(', ')}`, 2);
  const concurrency = Math.max(1, Math.floor(opts.concurrency ?? DEFAULT_CONCURRENCY));
  const limits = {
    rows: Math.max(1, Math.floor(opts.batchRows ?? DEFAULT_BATCH_ROWS)),
    bytes: Math.max(1024, Math.floor(opts.batchBytes ?? DEFAULT_BATCH_BYTES)),
  };
  for (const c of opts.onConflict ?? []) {
    if (!table.columns.some((col) => col.name === c)) {
      throw new ImportError(`--on-conflict ${c}: ${table.name} has no field "${c}"`, 2);
    }
  }

  let spool: { path: string; cleanup(): Promise<void> } | null = null;
  try {
    let path = opts.input;
    if (fromStdin) {
      if (!opts.stdin) throw new ImportError('no stdin to read', 2);
      spool = await spoolToFile(opts.stdin, format);
      path = spool.path;
    } else {
      await stat(path).catch(() => {
        throw new ImportError(`cannot read ${path}: no such file`, 2);
      });
    }
    const totalBytes = (await stat(path)).size;
    const cwd = opts.cwd ?? '.';
    const rejectsPath = opts.rejectsPath ?? (fromStdin ? resolvePath(cwd, `${table.name}.rejects.csv`) : `${opts.input}.rejects.${format === 'csv' ? 'csv' : 'ndjson'}`);
    const checkpointPath =
      opts.dryRun || opts.checkpointPath === null ? null : (opts.checkpointPath ?? (fromStdin ? null : `${opts.input}.checkpoint.json`));
    const fp: Fingerprint | null = checkpointPath ? await fingerprint(path) : null;

    // ---------------------------------------------------------------- resume
    let startAt = 0;
    let startLine = 1;
    let carried: CarriedCounts = { inserted: 0, updated: 0, unchanged: 0, rejected: 0, deduped: 0 };
    if (checkpointPath && fp) {
      const cp = await readCheckpoint(checkpointPath);
      if (opts.resume) {
        if (!cp) notice(`no checkpoint at ${checkpointPath}: starting from the beginning`);
        else {
          if (cp.table !== table.name) throw new ImportError(`the checkpoint ${checkpointPath} is for ${cp.table}, not ${table.name}`, 2);
          const why = fromStdin ? (cp.fingerprint.size !== fp.size || cp.fingerprint.head !== fp.head ? 'the input differs' : null) : fingerprintMismatch(cp.fingerprint, fp);
          if (why) throw new ImportError(`cannot resume: ${opts.input} is not the file the checkpoint was made for (${why}). Run without --resume to import it from the start (upserts make that safe).`, 2);
          startAt = cp.committed;
          startLine = cp.line;
          carried = cp.counts;
          notice(`resuming ${opts.input} at line ${cp.line} (record ${cp.committed + 1}); ${cp.counts.inserted + cp.counts.updated} rows were already written`);
        }
      } else if (cp) {
        notice(`an interrupted import left ${checkpointPath}; starting from the beginning (pass --resume to continue it)`);
      }
    }

    // ---------------------------------------------------------------- scan
    const resolver = new FieldResolver(table, { map: opts.map, ignoreUnknown: opts.ignoreUnknown });
    const fromText = format === 'csv';
    const keyColumns = opts.onConflict && opts.onConflict.length ? opts.onConflict : table.primaryKey;
    let finder = new DuplicateFinder(totalBytes);
    let records = 0;
    let keyCells: Array<{ index: number; col: ColumnDef }> | null | undefined;
    let scanHeaders: string[] | null = null;
    let scanned = false;
    if (format === 'csv') {
      // the header through the ordinary reader (its checks and messages), then the records as bytes
      const headerReader = openReader(path, format);
      for await (const _ of headerReader.records()) break;
      scanHeaders = headerReader.headers;
      if (scanHeaders) {
        for (const h of scanHeaders) resolver.resolve(h);
        resolver.finish(); // CSV: header problems stop the import before any row is read
        scanned = await byteScan(scanHeaders);
      }
    }
    /**
     * The duplicate-key scan of a CSV file as bytes: counts the records and notes every key; a key
     * that is (probably) a repeat has its row validated, so a dedupe never picks an invalid
     * occurrence. False when the file is not well-formed CSV (the ordinary scan then says where).
     */
    async function byteScan(headers: string[]): Promise<boolean> {
      const cols = headers.map((h) => resolver.resolve(h));
      const keyed = keyColumns.every((k) => cols.some((c) => c?.name === k));
      const tc = new CopyTranscoder(fieldPlans(cols, keyed ? keyColumns : null), nullToken, keyed ? keyColumns.length : 0, true);
      const file = await ByteCsvFile.open(path, { reuse: true });
      try {
        for (;;) {
          const status = file.read(tc, null, 0);
          if (status === MORE) {
            await file.fill();
            continue;
          }
          if (status === END) return true;
          if (status === MALFORMED) return false;
          const index = records++;
          if (records % 2000 === 0) {
            opts.onProgress?.({ phase: 'scan', bytes: file.bytesRead(), totalBytes, records, totalRecords: null, written: 0, rejected: 0 });
            if (opts.signal?.aborted) return true;
          }
          if (status === RAGGED || tc.key === null || !finder.note(tc.key)) continue;
          const rec = recordOf(file.buf, file.recStart, file.p, headers, index, file.recLine);
          if (buildRow(rec, resolver, fromText, nullToken).ok) finder.candidates.set(tc.key, index);
          else if (!finder.candidates.has(tc.key)) finder.candidates.set(tc.key, -1);
        }
      } finally {
        await file.close();
      }
    }
    if (!scanned) {
      records = 0;
      finder = new DuplicateFinder(totalBytes);
      const reader = openReader(path, format);
      let headersDone = false;
      for await (const rec of reader.records()) {
        if (!headersDone && reader.headers) {
          for (const h of reader.headers) resolver.resolve(h);
          resolver.finish(); // CSV: header problems stop the import before any row is read
          headersDone = true;
        }
        records++;
        if (records % 2000 === 0) {
          opts.onProgress?.({ phase: 'scan', bytes: reader.bytesRead(), totalBytes, records, totalRecords: null, written: 0, rejected: 0 });
          if (opts.signal?.aborted) break;
        }
        if (rec.cells && rec.headers) {
          // CSV: coerce only the key cells; the whole row is validated only when its key is
          // (probably) a repeat, so a dedupe never picks an invalid occurrence
          if (rec.error) continue;
          keyCells ??= keyCellIndexes(rec.headers, resolver, keyColumns);
          if (!keyCells) continue;
          const key = csvKey(rec.cells, keyCells, fromText, nullToken);
          if (key === null || !finder.note(key)) continue;
          if (buildRow(rec, resolver, fromText, nullToken).ok) finder.candidates.set(key, rec.index);
          else if (!finder.candidates.has(key)) finder.candidates.set(key, -1);
          continue;
        }
        const built = buildRow(rec, resolver, fromText, nullToken);
        if (!built.ok) continue; // rejected in the load pass; invalid rows never win a dedupe
        const key = keyOf(built.row, keyColumns);
        if (key !== null && finder.note(key)) finder.candidates.set(key, rec.index);
      }
      if (!headersDone && reader.headers) {
        for (const h of reader.headers) resolver.resolve(h);
      }
      resolver.finish();
      scanHeaders = reader.headers;
    }
    const fields = [...resolver.fields.values()];
    const columns = table.columns.filter((c) => fields.includes(c)).map((c) => c.name);
    const ignoredFields = resolver.ignored;
    if (ignoredFields.length) notice(`ignoring unknown field${ignoredFields.length > 1 ? 's' : ''}: ${ignoredFields.join(', ')}`);
    if (opts.onConflict?.length) {
      const missing = opts.onConflict.filter((c) => !columns.includes(c));
      if (missing.length) throw new ImportError(`--on-conflict ${opts.onConflict.join(',')}: the input has no ${missing.join(', ')} field`, 2);
    }
    const keyed = keyColumns.every((c) => columns.includes(c));
    if (opts.ignoreDuplicates && !keyed) {
      throw new ImportError(`--ignore-duplicates needs the conflict key (${keyColumns.join(', ')}) in the input`, 2);
    }
    const conflictKey = keyed ? keyColumns : null;
    const keyColumn: ColumnDef | null = keyed && keyColumns.length === 1 ? (table.columns.find((c) => c.name === keyColumns[0]) ?? null) : null;
    const compareColumns = table.columns.filter((c) => columns.includes(c.name));
    const lookup = keyColumn ? new ExistingLookup(transport, table.name, keyColumn, columns) : null;

    // --dedupe error rejects every row of a repeated key, so it needs exact counts of the
    // candidates the scan found (one more read, only when there are candidates)
    let counts: Map<string, number> | null = null;
    if (conflictKey && dedupe === 'error' && finder.candidates.size > 0) {
      counts = new Map();
      for await (const rec of openReader(path, format).records()) {
        const built = buildRow(rec, resolver, fromText, nullToken);
        const key = built.ok ? keyOf(built.row, conflictKey) : null;
        if (key !== null && finder.candidates.has(key)) counts.set(key, (counts.get(key) ?? 0) + 1);
      }
    }
    const judge = new DedupeJudge(dedupe, finder.candidates, counts);

    // COPY bodies: CSV rows go to the service as COPY CSV lines (no JSON, no objects), and the
    // service leaves identical rows alone and says how many rows it inserted, updated or left
    // unchanged (`Catalog-Counts`), so no lookups are needed. An empty body (the header alone) asks
    // whether this service takes them; a PostgREST that does not answers 400/415 and the import
    // sends JSON as before.
    const copyQuery = conflictKey ? `on_conflict=${conflictKey.map(encodeURIComponent).join(',')}` : '';
    const preferCopy = [
      ...(conflictKey ? [`resolution=${opts.ignoreDuplicates ? 'ignore-duplicates' : 'merge-duplicates'}`, 'unchanged=skip'] : []),
      'return=minimal',
    ].join(', ');
    /** The COPY header line, once the service has said it takes COPY bodies. */
    let copyHead: Buffer | null = null;
    if (fromText && !opts.dryRun && columns.length > 0 && scanHeaders) {
      const head = `${scanHeaders.map((h) => resolver.resolve(h)?.name).filter((n) => n !== undefined).join(',')}\n`;
      const res = await transport.send({ method: 'POST', path: `/${table.name}`, query: copyQuery, headers: { 'Content-Type': COPY_CSV, Prefer: preferCopy }, body: head });
      if (res.status >= 200 && res.status < 300) {
        copyHead = Buffer.from(head);
        // COPY bodies carry no per-row JSON or lookups: larger batches halve the per-request cost
        // (commits, round trips; on PGlite a quarter of its CPU per 100k rows)
        if (opts.batchRows === undefined) limits.rows = DEFAULT_COPY_BATCH_ROWS;
      } else {
        const f = faultOf(res);
        if (!((res.status === 400 || res.status === 415) && (f.code === 'PGRST102' || f.code === 'PGRST107' || f.code.startsWith('HTTP')))) throw new BatchError(f);
      }
    }

    // An empty table cannot hold any of the file's keys, and after dedupe no two batches share a
    // key: the lookups of an initial load can all be skipped (one probe instead of one per batch).
    let emptyAtStart = false;
    if (keyColumn && copyHead === null) {
      const probe = await transport.send({ method: 'GET', path: `/${table.name}`, query: `select=${encodeURIComponent(keyColumn.name)}&limit=1`, headers: { Accept: 'application/json' } });
      emptyAtStart = probe.status === 200 && probe.body.trim() === '[]';
      if (probe.status >= 400) throw new BatchError(faultOf(probe));
    }
    const trackFirst = Boolean(conflictKey) && dedupe === 'first' && finder.candidates.size > 0;
    if (!keyed && columns.length > 0) {
      notice(`no ${keyColumns.join(', ')} field in the input: rows are inserted as new (an interrupted import is only exact to resume after Ctrl-C)`);
    }

    // ---------------------------------------------------------------- load
    const rejects = new RejectsWriter(rejectsPath, format === 'csv' && !/\.(ndjson|jsonl)$/i.test(rejectsPath) ? 'csv' : 'ndjson', () => scanHeaders, startAt > 0);
    if (!opts.dryRun) await rejects.reset();
    const totals = { ...carried };
    const rejectedRows: RejectedRow[] = [];
    let writtenThisRun = 0;
    let rejectedThisRun = 0;
    let interrupted = false;
    let fatal: unknown = null;
    const retryDelay = opts.retryDelayMs ?? 500;

    const query = [
      `columns=${columns.map(encodeURIComponent).join(',')}`,
      ...(conflictKey ? [`on_conflict=${conflictKey.map(encodeURIComponent).join(',')}`] : []),
    ].join('&');
    const preferWith = (missing: boolean) =>
      [
        ...(conflictKey ? [`resolution=${opts.ignoreDuplicates ? 'ignore-duplicates' : 'merge-duplicates'}`] : []),
        ...(missing ? ['missing=default'] : []),
        'return=minimal',
      ].join(', ');
    // A batch whose rows carry every column needs no `missing=default`, which costs the server a
    // per-row presence check (measured 2.5x slower in PostgreSQL than json_populate_recordset).
    const preferMissing = preferWith(true);
    const preferComplete = preferWith(false);
    // Left-out cells of columns with a constant default (NULL, '', false) are filled in with it;
    // only volatile defaults (now(), gen_random_uuid()) must be left to the server.
    const fill = compareColumns.map((col) => ({ name: col.name, value: knownDefault(col) }));

    /** Fills the cells the row left out with their known constant defaults; false when a volatile one is left to the service. */
    function fillDefaults(row: Record<string, unknown>): boolean {
      let complete = true;
      for (const f of fill) {
        if (f.name in row) continue;
        if (f.value === undefined) complete = false;
        else row[f.name] = f.value;
      }
      return complete;
    }

    /** The JSON text of a row that was encoded for COPY only (a batch that must go as JSON). */
    function jsonOf(r: PendingRow): string {
      if (r.json !== null) return r.json;
      const built = buildRow(r.record, resolver, fromText, nullToken);
      if (!built.ok) throw new Error(`line ${r.record.line}: ${built.message}`); // the transcoder accepted it: cannot happen
      if (!fillDefaults(built.row)) r.complete = false;
      r.json = JSON.stringify(built.row);
      return r.json;
    }

    function request(rows: PendingRow[]): { headers: Record<string, string>; body: string | Buffer; query: string } {
      if (copyHead !== null && rows.every((r) => r.copyOut !== null)) {
        const body = copyBody(copyHead, rows);
        return { headers: { 'Content-Type': COPY_CSV, Prefer: preferCopy }, body, query: copyQuery };
      }
      const body = `[${rows.map(jsonOf).join(',')}]`;
      const prefer = rows.every((r) => r.complete) ? preferComplete : preferMissing;
      return { headers: { 'Content-Type': 'application/json', Prefer: copyHead !== null ? `${prefer}, unchanged=skip` : prefer }, body, query };
    }

    async function post(rows: PendingRow[]): Promise<HttpResponse> {
      const { headers, body, query: q } = request(rows);
      for (let attempt = 0; ; attempt++) {
        try {
          const res = await transport.send({
            method: 'POST',
            path: `/${table.name}`,
            query: q,
            headers,
            body,
          });
          // only an idempotent (keyed) batch may be sent again after an unclear failure
          if (isTransient(res) && conflictKey && attempt < 2) {
            await sleep(retryDelay * 2 ** attempt);
            continue;
          }
          return res;
        } catch (err) {
          if (!conflictKey || attempt >= 2) throw err;
          await sleep(retryDelay * 2 ** attempt);
        }
      }
    }

    function shrink(rows: PendingRow[]): void {
      const bytes = rows.reduce((n, r) => n + r.bytes, 2);
      const before = `${limits.rows} rows / ${limits.bytes} bytes`;
      limits.rows = Math.max(1, Math.min(limits.rows, Math.floor(rows.length / 2)));
      limits.bytes = Math.max(1024, Math.min(limits.bytes, Math.floor(bytes / 2)));
      notice(`the server refused a batch as too large or too slow: batches shrink from ${before} to ${limits.rows} rows / ${limits.bytes} bytes`);
    }

    async function sendRows(rows: PendingRow[], out: BatchOutcome): Promise<void> {
      if (rows.length === 0) return;
      const res = await post(rows);
      if (res.status >= 200 && res.status < 300) {
        const counts = copyHead !== null ? serverCounts(res) : null;
        if (counts) {
          out.inserted += counts.inserted;
          out.updated += counts.updated;
          out.unchanged += counts.unchanged;
        } else for (const r of rows) out[r.kind === 'insert' ? 'inserted' : 'updated']++;
        return;
      }
      const f = faultOf(res);
      const shrinkFault = isShrinkFault(res, f);
      if (!shrinkFault && !isRowFault(f)) throw new BatchError(f);
      if (rows.length === 1) {
        const message = res.status === 413 ? `the row alone is larger than the server accepts (${f.message})` : faultMessage(f);
        out.rejects.push({ record: rows[0].record, code: f.code, message });
        return;
      }
      if (shrinkFault) shrink(rows);
      const mid = Math.ceil(rows.length / 2);
      await sendRows(rows.slice(0, mid), out);
      await sendRows(rows.slice(mid), out);
    }

    async function processBatch(b: Batch): Promise<BatchOutcome> {
      const out: BatchOutcome = { inserted: 0, updated: 0, unchanged: 0, rejects: b.rejects };
      let rows = b.rows;
      // with COPY bodies the service itself leaves identical rows alone and counts them
      if (keyColumn && rows.length && !emptyAtStart && copyHead === null) {
        const keys = rows.filter((r) => r.key !== null).map((r) => r.key as string);
        let existing: Map<string, Record<string, unknown>>;
        try {
          existing = await lookup!.find(keys);
        } catch (err) {
          if (err instanceof LookupError) throw new BatchError({ status: err.status, code: err.code, message: err.message, details: null, hint: null });
          throw err;
        }
        rows = rows.filter((r) => {
          const stored = r.key === null ? undefined : existing.get(r.key);
          if (!stored) return true;
          if (opts.ignoreDuplicates) {
            out.unchanged++;
            return false;
          }
          const row = JSON.parse(jsonOf(r)) as Record<string, unknown>;
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
      if (opts.dryRun) {
        for (const r of rows) out[r.kind === 'insert' ? 'inserted' : 'updated']++;
        return out;
      }
      await sendRows(rows, out);
      return out;
    }

    // in-flight bookkeeping: batches start in record order, so the committed position is the
    // smallest start still in flight (or the open batch, or the next record to read)
    const inflight = new Map<Batch, Promise<void>>();
    // batches that failed are not committed: the checkpoint must stay at or before their start
    const failed: Batch[] = [];
    let open: Batch | null = null;
    let nextIndex = startAt;
    let nextLine = 1;
    let committed = startAt;
    let committedLine = startLine;
    let chain: Promise<void> = Promise.resolve();
    let lastSave = 0;

    function committedNow(): { index: number; line: number } {
      let min = open ? { index: open.start, line: open.line } : { index: nextIndex, line: nextLine };
      for (const b of [...inflight.keys(), ...failed]) if (b.start < min.index) min = { index: b.start, line: b.line };
      return min;
    }

    function saveCheckpoint(force: boolean): void {
      if (!checkpointPath || !fp || opts.dryRun) return;
      const now = clock();
      if (!force && conflictKey && now - lastSave < 250) return;
      lastSave = now;
      const cp: Checkpoint = {
        version: 1,
        table: table.name,
        fingerprint: fp,
        committed,
        line: committedLine,
        counts: { ...totals },
        savedAt: new Date().toISOString(),
      };
      chain = chain.then(() => writeCheckpoint(checkpointPath, cp));
    }

    function progress(bytes: number, recordsRead: number): void {
      opts.onProgress?.({ phase: 'load', bytes, totalBytes, records: recordsRead, totalRecords: records, written: writtenThisRun, rejected: rejectedThisRun });
    }

    function dispatch(b: Batch): void {
      const p = processBatch(b).then(
        (o) => {
          inflight.delete(b);
          totals.inserted += o.inserted;
          totals.updated += o.updated;
          totals.unchanged += o.unchanged;
          totals.rejected += o.rejects.length;
          totals.deduped += b.deduped;
          writtenThisRun += o.inserted + o.updated;
          rejectedThisRun += o.rejects.length;
          for (const r of o.rejects) if (rejectedRows.length < 100) rejectedRows.push({ line: r.record.line, code: r.code, message: r.message });
          if (!opts.dryRun && o.rejects.length) {
            const rs = o.rejects;
            chain = chain.then(() => rejects.write(rs));
          }
          const c = committedNow();
          if (c.index > committed) {
            committed = c.index;
            committedLine = c.line;
            saveCheckpoint(false);
          }
        },
        (err) => {
          inflight.delete(b);
          failed.push(b);
          fatal ??= err;
        },
      );
      inflight.set(b, p);
    }

    let recordsRead = 0;
    let bytesNow = () => 0;
    const newBatch = (index: number, line: number): Batch => ({ start: index, line, end: index, rows: [], bytes: 2, rejects: [], deduped: 0 });

    /** The dedupe verdict for a row about to be added; true when the row goes on. */
    function admit(rec: { index: number; line: number }, key: string | null, holder: { readonly record: SourceRecord }): boolean {
      if (key === null) return true;
      const verdict = judge.judge(key, rec.index);
      if (verdict === 'reject') {
        open!.rejects.push({
          record: holder.record,
          code: '23505',
          message: `the key (${conflictKey!.join(', ')})=(${key.replace(/\u0000/g, ', ')}) appears more than once in the input; --dedupe error rejects every occurrence`,
        });
        return false;
      }
      if (verdict === 'skip') {
        open!.deduped++;
        return false;
      }
      return true;
    }

    /** A row built the ordinary way (mapped, coerced, constant defaults filled) as a JSON row. */
    function jsonRow(rec: SourceRecord, row: Record<string, unknown>, key: string | null): PendingRow {
      const complete = fillDefaults(row);
      const json = JSON.stringify(row);
      return { record: rec, json, copyOut: null, copyAt: 0, bytes: Buffer.byteLength(json) + 1, key, kind: 'insert', complete };
    }

    /** Adds a row to the open batch, sending batches that are full; resolves when another may be added. */
    async function addRow(index: number, line: number, row: PendingRow): Promise<void> {
      if (open!.rows.length > 0 && open!.bytes + row.bytes > limits.bytes) {
        // this row would overflow: send what we have, the row opens the next batch
        open!.end = index;
        dispatch(open!);
        open = newBatch(index, line);
        open.end = index + 1;
        while (inflight.size >= concurrency) await Promise.race(inflight.values());
      }
      open!.rows.push(row);
      open!.bytes += row.bytes;
      if (open!.rows.length >= limits.rows) {
        const b = open!;
        open = null;
        dispatch(b);
        progress(bytesNow(), recordsRead);
        while (inflight.size >= concurrency) await Promise.race(inflight.values());
      } else if (recordsRead % 500 === 0) {
        progress(bytesNow(), recordsRead);
      }
    }

    /** A record the ordinary way (mapped and coerced): a reject, a dedupe skip, or a JSON row of the open batch. */
    async function addRecord(rec: SourceRecord): Promise<void> {
      const built = buildRow(rec, resolver, fromText, nullToken);
      if (!built.ok) {
        open!.rejects.push({ record: rec, code: built.code, message: built.message });
        return;
      }
      const key = conflictKey ? keyOf(built.row, conflictKey) : null;
      if (admit(rec, key, { record: rec })) await addRow(rec.index, rec.line, jsonRow(rec, built.row, key));
    }

    if (copyHead !== null) {
      // ---- CSV bytes → COPY lines, no strings or objects per cell (src/import/copy-transcode.ts)
      const headers = scanHeaders ?? [];
      const plans = fieldPlans(headers.map((h) => resolver.resolve(h)), conflictKey);
      const tc = new CopyTranscoder(plans, nullToken, conflictKey?.length ?? 0);
      const file = await ByteCsvFile.open(path);
      // a batch's COPY lines go into one buffer: sized for the rows a batch takes at the average
      // line length so far (a whole `--batch-bytes` per batch would allocate ~10× what is used and
      // make V8 collect for the external memory); a buffer that fills up sends its batch early
      let copied = 0;
      let copiedRows = 0;
      const outSize = () => {
        const avg = copiedRows > 100 ? copied / copiedRows : 1024;
        return Math.min(Math.max(limits.bytes, 64 * 1024), Math.max(64 * 1024, Math.ceil(limits.rows * avg * 1.25) + 16 * 1024));
      };
      // each buffer starts with the COPY header line: a batch whose lines fill one buffer in order
      // (the usual case) is sent as that buffer's first bytes, without copying it into a body
      const head = copyHead;
      const freshOut = (size: number): Buffer => {
        const b = Buffer.allocUnsafe(size + head.length);
        head.copy(b, 0);
        return b;
      };
      let out = freshOut(outSize());
      let outPos = head.length;
      let index = 0;
      bytesNow = () => file.bytesRead();
      try {
        for (;;) {
          const status = file.read(tc, out, outPos);
          if (status === MORE) {
            await file.fill();
            continue;
          }
          if (status === END) break;
          if (status === OVERFLOW) {
            if (open && open.rows.length > 0) {
              const b = open;
              open = null;
              dispatch(b);
              while (inflight.size >= concurrency) await Promise.race(inflight.values());
              out = freshOut(outSize());
            } else out = freshOut(out.length * 2);
            outPos = head.length;
            continue;
          }
          const recIndex = index++;
          const recLine = file.recLine;
          const src = file.buf;
          const a = file.recStart;
          const z = file.p;
          recordsRead++;
          if (recIndex < startAt) {
            // a resumed `--dedupe first` must still know which keys the committed part already sent
            if (trackFirst && tc.key !== null) judge.judge(tc.key, recIndex);
            continue;
          }
          if (opts.signal?.aborted) {
            interrupted = true;
            break;
          }
          if (fatal) break;
          if (status === MALFORMED) throw new ImportError(`${opts.input}: CSV is malformed near line ${recLine}`);
          nextIndex = recIndex + 1;
          nextLine = recLine + 1;
          if (!open) open = newBatch(recIndex, recLine);
          open.end = recIndex + 1;
          if (status !== OK) {
            await addRecord(recordOf(src, a, z, headers, recIndex, recLine));
            continue;
          }
          const row = new CopyRow(tc.key, src, a, z, recIndex, recLine, headers);
          if (!admit(row, tc.key, row)) continue;
          const end = tc.outEnd;
          row.copyOut = out;
          row.copyAt = outPos;
          row.bytes = end - outPos;
          copied += row.bytes;
          copiedRows++;
          outPos = end;
          const before: Batch | null = open;
          await addRow(recIndex, recLine, row);
          if (open !== before) {
            // the batch went out: its rows keep their bytes; the next batch writes elsewhere
            out = freshOut(outSize());
            outPos = head.length;
          }
        }
      } finally {
        await file.close();
      }
    } else {
      const reader = openReader(path, format);
      bytesNow = () => reader.bytesRead();
      for await (const rec of reader.records()) {
        recordsRead++;
        if (rec.index < startAt) {
          // a resumed `--dedupe first` must still know which keys the committed part already sent
          if (trackFirst) {
            const built = buildRow(rec, resolver, fromText, nullToken);
            const key = built.ok ? keyOf(built.row, conflictKey!) : null;
            if (key !== null) judge.judge(key, rec.index);
          }
          continue;
        }
        if (opts.signal?.aborted) {
          interrupted = true;
          break;
        }
        if (fatal) break;
        nextIndex = rec.index + 1;
        nextLine = rec.line + 1;
        if (!open) open = newBatch(rec.index, rec.line);
        open.end = rec.index + 1;
        await addRecord(rec);
      }
    }
    if (!interrupted && !fatal && open) {
      const b = open;
      open = null;
      dispatch(b);
    }
    while (inflight.size) await Promise.race(inflight.values());
    await chain;

    const finished = !interrupted && !fatal;
    if (finished) {
      committed = nextIndex;
      if (checkpointPath) await removeCheckpoint(checkpointPath);
    } else {
      const c = committedNow();
      committed = c.index;
      committedLine = c.line;
      saveCheckpoint(true);
      await chain;
    }
    progress(bytesNow(), recordsRead);
    if (fatal) throw fatal;

    rejectedRows.sort((a, b) => a.line - b.line); // batches finish out of order
    const seconds = (clock() - started) / 1000;
    const processed = (finished ? records : committed) - startAt;
    return {
      table: table.name,
      input: opts.input,
      format,
      dryRun: Boolean(opts.dryRun),
      records,
      inserted: totals.inserted,
      updated: totals.updated,
      unchanged: totals.unchanged,
      rejected: totals.rejected,
      deduped: totals.deduped,
      rejectedRows,
      rejectsFile: !opts.dryRun && totals.rejected > 0 ? rejectsPath : null,
      conflictKey,
      columns,
      ignoredFields,
      interrupted,
      stoppedAtLine: finished ? null : committedLine,
      resumedFrom: startAt,
      checkpointFile: finished ? null : checkpointPath,
      batchRows: limits.rows,
      batchBytes: limits.bytes,
      requests,
      seconds: Math.round(seconds * 1000) / 1000,
      rowsPerSecond: seconds > 0 ? Math.round(processed / seconds) : processed,
    };
  } finally {
    await spool?.cleanup();
  }
}
