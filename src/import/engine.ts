import type { Transport } from '../client/transport.js';
import { FieldResolver } from './shape/mapping.js';
import { ImportError, withHint } from './types.js';
import { DEFAULT_COPY_BATCH_ROWS, FIRST_COPY_BATCH_ROWS, type ImportOptions, type ImportSummary, settle } from './options.js';
import { Account, rejectsPathOf, resumePoint, summarize, unchangedRun } from './account/account.js';
import { Batcher, type BatchLimits } from './batch/batch.js';
import { Deduper, type Scan, scanInput } from './dedupe/dedupe.js';
import { loadInput } from './pass/load.js';
import { Sender } from './send/send.js';
import { RowShaper, Shape, planShape } from './shape/shape.js';
import { DateCells } from './shape/dates.js';
import { openSource } from './source/source.js';
import { renderMatch } from '../schema/match.js';
import { Matcher } from './match/match.js';
import { planSync, runSync } from './match/sync.js';
import { refuseOutputsOverInput } from './output-paths.js';
import { askUnchanged, type CountedRun, endRun, recordClean, type RunTransport, tagged } from './account/unchanged.js';

export * from './options.js';

/** A transport that counts the requests it sends (the summary reports them) and cancels them with `signal`. */
function counting(t: Transport, signal: AbortSignal): Transport & { count: number; run: CountedRun | null } {
  const c = { count: 0, run: null as CountedRun | null, send: (req: Parameters<Transport['send']>[0]) => (c.count++, t.send(tagged({ ...req, signal }, c.run))) };
  return c;
}

/**
 * How long a stop lets batches in flight finish before cancelling them, when the rows have no
 * conflict key: a cancelled plain insert may have committed just before, and `--resume` would send
 * it again. Keyed batches are upserts (a resend is harmless): cancelled at once.
 */
const PLAIN_INSERT_GRACE_MS = 1000;

/**
 * The stop of an import (`opts.signal`) as the cancellation of its requests: at once, or after
 * PLAIN_INSERT_GRACE_MS once `plain` says the rows are plain inserts. The service cancels the
 * statement of a request whose client went away, so a stop does not wait on the database.
 */
function cancellation(stop: AbortSignal | undefined): { signal: AbortSignal; plain: (yes: boolean) => void; dispose: () => void } {
  const cancel = new AbortController();
  let grace = 0;
  let timer: NodeJS.Timeout | undefined;
  const onStop = () => {
    timer = setTimeout(() => cancel.abort(), grace);
  };
  if (stop?.aborted) cancel.abort();
  else stop?.addEventListener('abort', onStop, { once: true });
  return {
    signal: cancel.signal,
    plain: (yes) => void (grace = yes ? PLAIN_INSERT_GRACE_MS : 0),
    dispose: () => {
      clearTimeout(timer);
      stop?.removeEventListener('abort', onStop);
    },
  };
}

/**
 * The question and the scan pass side by side: when nothing has written the catalog since this
 * file's last run with these settings (account/unchanged.ts), nothing is sent. The scan starts at
 * once (the question's round trip left both cores idle), and holds still as soon as the probe
 * names a recorded run: the file's hash then decides, and a scan running beside the hash held the
 * answer back on a loaded machine (an unchanged 100k re-run took 1.6-3.6 s instead of 0.5). When
 * the hash says the file changed after all, the scan reads it again from the start.
 */
async function scanAsking(opts: ImportOptions, c: Parameters<typeof scanInput>[0], transport: RunTransport): Promise<{ scan: Scan } | { same: { records: number; finished: string } }> {
  let held = false;
  const scanning = scanInput({ ...c, stopping: () => held || c.stopping() });
  scanning.catch(() => {}); // awaited below unless the run is unchanged
  const same = await askUnchanged(opts, c.source.rawPath, transport, () => void (held = true));
  if (same) return { same };
  if (!held) return { scan: await scanning };
  await scanning.catch(() => {});
  return { scan: await scanInput(c) };
}

/**
 * Imports a file into a table through a Transport, as a pipeline of stages (a folder each in
 * src/import/, described in src/import/README.md): source → shape (and checks) → dedupe → batch →
 * send → account. A scan pass first validates every record and finds duplicate conflict keys; the load
 * pass then streams rows in batches as upserts; bad rows go to the rejects file, and a checkpoint
 * lets an interrupted import resume where it stopped.
 */
export async function importFile(opts: ImportOptions, baseTransport: Transport): Promise<ImportSummary> {
  const settings = settle(opts);
  const cancel = cancellation(opts.signal);
  const transport = counting(baseTransport, cancel.signal);
  const started = settings.clock();
  await refuseOutputsOverInput(opts.input, [{ flag: '--rejects', path: opts.rejectsPath }, { flag: '--checkpoint', path: opts.checkpointPath ?? undefined }]).catch((err: unknown) => {
    cancel.dispose();
    throw err;
  });
  const source = await openSource({ ...opts, signal: opts.signal }).catch((err: unknown) => {
    cancel.dispose();
    throw err;
  });
  try {
    const resume = await resumePoint(opts, source, settings.notice);
    const resolver = new FieldResolver(settings.table, { map: opts.map, ignoreUnknown: opts.ignoreUnknown });
    const dates = new DateCells(resolver, settings.dateFormat, opts.input === '-' ? 'stdin' : opts.input);
    const shaper = new RowShaper(resolver, source.format === 'csv' || source.format === 'xlsx', settings.nullToken, settings.checks, dates);
    if (source.interrupted) {
      // stopped while waiting for a stream (a FIFO with no writer): nothing was read or written
      const account = new Account(settings, source, resume, rejectsPathOf(opts, source), () => null, false);
      const plan = { conflictKey: null, columns: [], ignoredFields: [] };
      const limits = { rows: settings.batchRows, bytes: settings.batchBytes };
      return summarize({ opts, source, account, resume, records: 0, finished: false, interrupted: true, plan, limits, requests: 0, seconds: (settings.clock() - started) / 1000 });
    }
    const scanned = await scanAsking(opts, { source, shaper, ...settings }, transport);
    if ('same' in scanned) return unchangedRun(opts, source.format, scanned.same, transport.count, (settings.clock() - started) / 1000);
    const { scan } = scanned;
    const shaped = planShape(settings.table, shaper.resolver, settings.keyColumns, { onConflict: opts.onConflict, ignoreDuplicates: settings.ignoreDuplicates });
    const matcher = await Matcher.open(transport, settings.table, shaped, { key: opts.key, refs: opts.refs, createMissing: opts.createMissing, sync: Boolean(opts.sync), prospective: opts.prospective });
    const plan = matcher ? matcher.adjust(shaped, settings.table) : shaped;
    // the service decides each row's record where it writes (concurrent imports of the same keys never duplicate)
    settings.match = opts.match ?? (matcher?.natural ? renderMatch((opts.key ? [opts.key] : (settings.table.naturalKey ?? [])).map((columns) => ({ kind: 'key' as const, columns: [...columns] }))) : undefined);
    if (opts.sync && opts.resume) throw new ImportError('--sync cannot --resume: run the sync again from the start (rows already sent are left alone)', 'usage');
    const shape = new Shape(shaper, plan);
    if (plan.ignoredFields.length) settings.notice(`ignoring unknown field${plan.ignoredFields.length > 1 ? 's' : ''}: ${plan.ignoredFields.join(', ')}`);
    const deduper = Deduper.open(settings.dedupe, scan, matcher?.natural ? null : plan.conflictKey);
    const account = new Account(settings, source, resume, rejectsPathOf(opts, source), () => scan.headers, plan.conflictKey !== null);
    const limits: BatchLimits = { rows: settings.batchRows, bytes: settings.batchBytes };
    let batcher: Batcher | null = null;
    // COPY bodies are CSV's byte path; an xlsx input's rows go as JSON
    const sender = await Sender.open({ transport, shape, settings, headers: source.format === 'csv' ? scan.headers : null, shrink: (r, b) => settings.notice(batcher!.shrink(r, b)), before: matcher && !settings.dryRun ? () => matcher.flush(transport) : undefined });
    // a service that compares COPY bodies itself (ours) is sent every matched row; any other gets only changed ones
    await matcher?.load(transport, sender.copyHead === null);
    // COPY bodies carry no per-row JSON or lookups: larger batches halve the per-request cost (a small first one starts the database sooner)
    if (sender.copyHead && !settings.batchRowsGiven) Object.assign(limits, { rows: DEFAULT_COPY_BATCH_ROWS, first: FIRST_COPY_BATCH_ROWS });
    cancel.plain(!plan.conflictKey);
    if (!plan.conflictKey && plan.columns.length > 0) {
      // a collection without a natural key (artists: names repeat) can still be matched by its title, when the user says so
      const title = settings.table.naturalKey ? undefined : settings.table.title;
      const hint = title ? `; give --key COLS (e.g. --key ${title}) to match stored ${settings.table.name}` : '; give --key COLS to match stored rows';
      settings.notice(`no ${settings.keyColumns.join(', ')} field in the input and no natural key: rows are inserted as new${hint}`);
    }
    await account.start();
    batcher = new Batcher(limits, settings.concurrency, resume, (b) => sender.process(b), (b, o, at) => account.batchDone(b, o, at));
    const ctx = { source, shape, deduper, batcher, account, settings, start: resume.index, records: scan.records, headers: scan.headers, copyHead: sender.copyHead, matcher };
    const load = await loadInput(ctx);
    await batcher.finish(!load.interrupted);
    // a stop wins over the failure of a batch it cancelled (or that failed meanwhile): that batch
    // is not committed, the checkpoint stays before it
    const interrupted = load.interrupted || settings.stopping();
    const finished = !interrupted && !batcher.fatal;
    await account.close(finished, finished ? batcher.position : batcher.committed());
    account.progress(load.bytes, load.read, scan.records);
    if (batcher.fatal && !interrupted) throw withHint(batcher.fatal, opts.sync ? null : account.resumeHint());
    if (opts.sync?.deferred && finished && matcher?.index) opts.sync.deferred(matcher.index, account.totals.rejected);
    const sync = opts.sync && !opts.sync.deferred && finished && matcher?.index ? await planSync(transport, settings.table, matcher.index, opts.sync, account.totals.rejected, true, !settings.dryRun) : null;
    if (sync && !settings.dryRun) await runSync(transport, settings.table, sync, opts.sync!, opts.signal);
    const recorded = await recordClean(transport, finished && account.totals.rejected === 0, scan.records);
    const summary = summarize({ opts, source, account, resume, records: scan.records, finished, interrupted, plan, limits, requests: transport.count, seconds: (settings.clock() - started) / 1000, recorded });
    summary.created = matcher?.created() ?? {};
    summary.naturalKey = matcher?.natural ? matcher.index!.spec.map((a) => [...a]) : null;
    if (sync) summary.sync = sync.report;
    return summary;
  } finally {
    endRun(transport);
    cancel.dispose();
    await source.cleanup();
  }
}
