import { writeFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { Command } from 'commander';
import type { TableDef } from '../../schema/model.js';
import type { ImportOptions, ImportSummary } from '../../import/engine.js';
import type { Context } from '../context.js';
import { Interrupted, PartialFailure, UsageError } from '../errors.js';
import { parseMaps } from '../../import/shape/mapping.js';
import { examples, singularOf, titleField } from './shared.js';
import { type ImportFlags, importFlags } from './import-flags.js';
import { type QualityCheck, qualityCheck } from '../import-check.js';
import { todayOf } from '../../check/rules.js';
import { parseRef } from '../../import/match/names.js';
import type { SyncOptions } from '../../import/match/sync.js';
import { parseFilters } from '../flags/query.js';
import { confirmWrite } from './confirm.js';
import { contextTransport } from '../transport.js';
import type { Transport } from '../../client/transport.js';

export type { ImportFlags } from './import-flags.js';

export interface RunImportOptions extends ImportFlags {
  collection: string;
  file: string;
}

/** `catalog <collection> import <file|->`. */
export function defineImport(ctx: Context, table: TableDef): Command {
  const cmd = importFlags(
    new Command('import')
      .description(`Bulk-load ${table.name} from CSV, JSON, NDJSON, YAML or Excel (.xlsx): batched upserts matched by id or natural key, bad rows set aside, resumable`)
      .argument('<file>', 'input file, or - for stdin (then --format is needed)'),
  )
    .action(async (file: string, opts: ImportFlags) => {
      await runImport({ ...opts, file, collection: table.name }, ctx);
    });
  return examples(cmd, [
    `catalog ${table.name} import ${table.name}.csv`,
    `catalog ${table.name} import vendor.csv --map "Title=${titleField(table)}" --ignore-unknown --dry-run`,
    `catalog ${table.name} import ${table.name}.csv --resume     # continue after Ctrl-C or a crash`,
  ]);
}

/**
 * A whole number from a flag.
 * @example positive('--batch-size', '500') // 500
 */
function positive(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text.trim()) || Number(text) < 1) throw new UsageError(`${flag} needs a whole number ≥ 1, not '${text}'`);
  return Number(text);
}

/**
 * A byte size with an optional unit (binary multiples).
 * @example byteSize('--batch-bytes', '4MB') // 4194304
 */
export function byteSize(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const m = /^(\d+(?:\.\d+)?)\s*(b|k|kb|kib|m|mb|mib|g|gb|gib)?$/i.exec(text.trim());
  if (!m) throw new UsageError(`${flag} needs a size such as 512KB or 4MB, not '${text}'`);
  const unit = (m[2] ?? 'b').toLowerCase()[0];
  const mult = unit === 'k' ? 1024 : unit === 'm' ? 1024 ** 2 : unit === 'g' ? 1024 ** 3 : 1;
  return Math.floor(Number(m[1]) * mult);
}

const fmt = (n: number) => n.toLocaleString('en-US');

/** A run's end as people read it: `2026-11-28 15:31 UTC` (the text as given when it is not a time). */
function whenText(iso: string): string {
  const t = new Date(iso);
  return Number.isNaN(t.getTime()) ? iso : `${t.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** The summary lines for stderr. */
export function summaryText(s: ImportSummary): string[] {
  const source = s.input === '-' ? 'stdin' : basename(s.input);
  const counts = `${fmt(s.inserted)} inserted, ${fmt(s.updated)} updated, ${fmt(s.unchanged)} unchanged, ${fmt(s.rejected)} rejected, ${fmt(s.deduped)} deduped`;
  // after Ctrl-C: the rows this run got through, of those the input holds
  const rows = s.processed < s.records - s.resumedFrom ? `${fmt(s.processed)} of ${fmt(s.records)} rows` : `${fmt(s.records)} row${s.records === 1 ? '' : 's'}`;
  const speed = `${rows} in ${s.seconds.toFixed(1)} s, ${fmt(s.rowsPerSecond)} rows/s`;
  const lines = [
    s.dryRun
      ? `${source} → ${s.table} (dry run, nothing written): would insert ${fmt(s.inserted)}, update ${fmt(s.updated)}; ${fmt(s.unchanged)} unchanged, ${fmt(s.rejected)} rejected, ${fmt(s.deduped)} deduped (${speed})`
      : `${source} → ${s.table}: ${counts} (${speed})`,
  ];
  if (s.resumedFrom > 0) lines.push(`  resumed at record ${fmt(s.resumedFrom + 1)}; counts include the earlier run`);
  if (s.naturalKey) lines.push(`  rows matched by ${s.naturalKey.map((a) => a.join('+')).join(', else ')} (no id in the input)`);
  for (const [collection, n] of Object.entries(s.created ?? {})) lines.push(`  ${s.dryRun ? 'would create' : 'created'} ${fmt(n)} ${collection} for names that had none (--create-missing)`);
  if (s.sync) lines.push(...syncLines(s));
  const removed = s.sync && !s.sync.held ? s.sync.deletes : 0;
  if (s.unchangedSince) lines.push(`  nothing changed: nothing has written the catalog since this file was imported with these settings (${whenText(s.unchangedSince)}), so nothing was sent (--recheck compares every row)`);
  else if (!s.dryRun && s.inserted + s.updated + removed === 0 && s.rejected === 0 && s.records > 0 && !s.interrupted) lines.push('  nothing changed: the catalog already matches the input');
  if (s.rejected > 0) {
    lines.push(`  rejected rows${s.rejectsFile ? ` (all in ${s.rejectsFile})` : ''}:`);
    for (const r of s.rejectedRows.slice(0, 10)) lines.push(`    line ${r.line}: ${r.code} ${r.message}`);
    if (s.rejected > 10) lines.push(`    … and ${fmt(s.rejected - 10)} more`);
  }
  return lines;
}

/** The sync's part of the summary: what was (or would be) removed, with examples. */
function syncLines(s: ImportSummary): string[] {
  const y = s.sync!;
  if (y.held) return [`  sync (${y.scope}): ${fmt(y.deletes)} to remove, none removed: ${y.held}`];
  const verb = s.dryRun ? 'would remove' : 'removed';
  const lines = [`  sync (${y.scope}): ${verb} ${fmt(y.deletes)} ${y.deletes === 1 ? singularOf(s.table) : s.table} the input does not have`];
  for (const e of y.examples) lines.push(`    ${e.id}${e.name ? ` “${e.name}”` : ''}`);
  if (y.deletes > y.examples.length) lines.push(`    … and ${fmt(y.deletes - y.examples.length)} more`);
  for (const [collection, n] of Object.entries(y.cascaded)) lines.push(`    ${verb} first (--cascade): ${fmt(n)} ${collection} that refer to them`);
  return lines;
}

/** The level `--check [level]` names (error when bare). */
function checkLevel(value: boolean | string): 'error' | 'warning' {
  if (value === true || value === 'error') return 'error';
  if (value === 'warning') return 'warning';
  throw new UsageError(`--check takes error or warning, not '${String(value)}'`, 'e.g. --check (errors only) or --check warning');
}

/** Builds the engine's options from the flags, for `table` among the collections the service describes (`tables`). */
export function importOptions(opts: RunImportOptions, table: TableDef, tables: readonly TableDef[], ctx: Context): ImportOptions {
  return {
    table,
    input: opts.file,
    stdin: ctx.io.stdin.stream,
    format: opts.format,
    map: opts.map ? parseMaps(opts.map) : undefined,
    ignoreUnknown: opts.ignoreUnknown,
    nullToken: opts.null,
    onConflict: opts.onConflict ? opts.onConflict.split(',').map((s) => s.trim()).filter(Boolean) : undefined,
    ignoreDuplicates: opts.ignoreDuplicates,
    dedupe: opts.dedupe as ImportOptions['dedupe'],
    batchRows: positive('--batch-size', opts.batchSize),
    batchBytes: byteSize('--batch-bytes', opts.batchBytes),
    concurrency: positive('--concurrency', opts.concurrency),
    rejectsPath: opts.rejects,
    checkpointPath: opts.checkpoint,
    resume: opts.resume,
    dryRun: opts.dryRun,
    encoding: opts.encoding,
    delimiter: opts.delimiter,
    dateFormat: opts.dateFormat,
    sheet: opts.sheet,
    headerRow: positive('--header-row', opts.headerRow),
    checks: opts.check ? [qualityCheck(table.name, todayOf(ctx.clock.now()), checkLevel(opts.check))] : undefined,
    key: opts.key ? opts.key.split(',').map((s) => s.trim()).filter(Boolean) : undefined,
    refs: (opts.ref ?? []).map((r) => parseRef(table, r, tables)),
    createMissing: opts.createMissing,
    sync: syncOptions(opts, tables),
    unchangedRuns: !opts.recheck,
    toolVersion: ctx.version,
  };
}

/** `--sync --scope EXPR|all [--cascade]`, checked. */
export function syncOptions(opts: ImportFlags, tables: readonly TableDef[]): SyncOptions | undefined {
  if (!opts.sync) {
    const stray = opts.scope !== undefined ? '--scope' : opts.cascade ? '--cascade' : null;
    if (stray) throw new UsageError(`${stray} goes with --sync`);
    return undefined;
  }
  if (opts.scope === undefined || opts.scope.trim() === '') {
    throw new UsageError('--sync needs --scope: the records the input stands for', "e.g. --scope 'label=Chinook Records', or --scope all for the whole collection");
  }
  if (opts.resume) throw new UsageError('--sync cannot --resume: run the sync again from the start (rows already sent are left alone)');
  const all = opts.scope.trim() === 'all';
  return { scope: all ? 'all' : parseFilters([opts.scope]), scopeText: opts.scope.trim(), cascade: Boolean(opts.cascade), tables };
}

/** Asks before a sync writes (a terminal), or insists on --yes. */
export async function confirmSync(ctx: Context, plan: ImportSummary): Promise<boolean> {
  const n = plan.sync && !plan.sync.held ? plan.sync.deletes : 0;
  const what = `insert ${fmt(plan.inserted)}, update ${fmt(plan.updated)} and remove ${fmt(n)} ${plan.table}`;
  return confirmWrite(ctx, `Go ahead: ${what}?`, `this sync would ${what}`, false);
}

/** With `--source-id`: the import of a one-file plan (src/cli/commands/import-plan.ts), else null. */
async function sourceRun(opts: RunImportOptions, table: TableDef, tables: readonly TableDef[], transport: Transport, signal: AbortSignal): Promise<((o: ImportOptions) => Promise<ImportSummary>) | null> {
  if (opts.source === undefined && opts.sourceId === undefined) return null;
  if (opts.source === undefined || opts.sourceId === undefined) throw new UsageError(`${opts.source === undefined ? '--source-id' : '--source'} goes with ${opts.source === undefined ? '--source NAME' : '--source-id COLUMN'}: the system the file comes from, and the column holding its ids`);
  if (opts.resume) throw new UsageError('--source-id cannot --resume: run the same import again (rows already sent are left alone)');
  const { planRunOf, singleFilePlan } = await import('./import-plan.js');
  const plan = singleFilePlan({
    file: opts.file,
    table,
    source: opts.source,
    sourceId: opts.sourceId,
    map: opts.map ? parseMaps(opts.map) : undefined,
    key: opts.key ? opts.key.split(',').map((k) => k.trim()).filter(Boolean) : undefined,
    refs: opts.ref ?? [],
    ignoreUnknown: opts.ignoreUnknown,
    createMissing: opts.createMissing,
    format: opts.format,
    delimiter: opts.delimiter,
    sheet: opts.sheet,
    dateFormat: opts.dateFormat,
  });
  const run = await planRunOf(plan, tables, transport, signal);
  return (o) => run.importEntry(plan.entries[0], o);
}

/**
 * Whether the service says nothing has written the catalog since this file was imported with these
 * settings (src/import/account/unchanged.ts): a sync then has nothing to plan or ask about.
 */
async function unchangedSinceRun(o: ImportOptions, transport: Transport, planned: boolean): Promise<boolean> {
  const { unchangedNow } = await import('../../import/account/unchanged.js');
  if (planned || o.input === '-') return false;
  return unchangedNow(o, o.input, transport);
}

/** Runs an import: the engine with progress on stderr, the summary, the exit status. */
export async function runImport(opts: RunImportOptions, ctx: Context): Promise<ImportSummary> {
  const [{ importFile }, { createProgress }, { boundHeapGrowth }] = await Promise.all([
    import('../../import/engine.js'),
    import('../progress.js'),
    import('../memory.js'),
  ]);
  boundHeapGrowth();
  // every file this command writes (the engine checks its own two again, for other callers)
  const { refuseOutputsOverInput } = await import('../../import/output-paths.js');
  await refuseOutputsOverInput(opts.file, [{ flag: '--rejects', path: opts.rejects }, { flag: '--checkpoint', path: opts.checkpoint }, { flag: '--summary', path: opts.summary }]);
  // the global --dry-run means "send nothing"; an import's dry run still reads which keys exist
  const dryRun = Boolean(opts.dryRun || ctx.globals.dryRun);
  if (ctx.globals.dryRun) ctx.globals.dryRun = false;
  // the service's description of the collection (fields, types, keys), not the binary's
  const table = await ctx.table(opts.collection);
  const tables = await ctx.tables();

  const abort = new AbortController();
  void ctx.waitForSignal().then(() => abort.abort());
  const source = opts.file === '-' ? 'stdin' : basename(opts.file);
  const progress = await createProgress(ctx.io.stderr, { quiet: ctx.globals.quiet, clock: () => ctx.clock.now(), label: `${source} → ${table.name}` });
  let summary: ImportSummary;
  const base = importOptions(opts, table, tables, ctx);
  try {
    const engineOpts: ImportOptions = {
      ...base,
      dryRun,
      signal: abort.signal,
      clock: () => ctx.clock.now(),
      onNotice: (m) => {
        progress.pause();
        void ctx.note(ctx.style().dim(m));
      },
      onProgress: (p) => progress.update({ phase: p.phase === 'scan' ? 'checking' : dryRun ? 'comparing' : 'importing', rows: p.records, bytes: p.bytes, totalBytes: p.totalBytes }),
    };
    const transport = await contextTransport(ctx);
    const withSource = await sourceRun(opts, table, tables, transport, abort.signal);
    const importOne = (o: ImportOptions) => (withSource ? withSource(o) : importFile(o, transport));
    if (base.sync && !dryRun && !opts.yes && !(await unchangedSinceRun(engineOpts, transport, withSource !== null))) {
      // the plan first: the same import as a dry run (reads only), then the question
      const plan = await importOne({ ...engineOpts, dryRun: true, checkpointPath: null, onProgress: undefined });
      progress.done();
      for (const line of summaryText(plan)) await ctx.note(line);
      if (!(await confirmSync(ctx, plan))) {
        await ctx.note('Nothing written');
        return plan;
      }
    }
    summary = await importOne(engineOpts);
  } catch (err) {
    progress.done();
    // a stop before the first batch cancels the import's opening requests: nothing was sent yet
    if (abort.signal.aborted && (err as Error)?.name === 'AbortError') throw new Interrupted('interrupted before any row was sent: nothing was written');
    throw err;
  }
  progress.done();
  if (opts.summary) await writeFile(opts.summary, `${JSON.stringify(summary, null, 2)}\n`);
  for (const line of summaryText(summary)) await ctx.note(line);
  const warned = [...((base.checks?.[0] as QualityCheck | undefined)?.warned ?? [])];
  if (warned.length) {
    const list = warned.map(([rule, n]) => `${rule} ${fmt(n)}`).join(', ');
    await ctx.note(`  let in with warnings: ${list} (catalog check ${table.name} lists them; --check warning rejects them)`);
  }
  if (summary.interrupted && summary.records === 0 && !summary.checkpointFile) throw new Interrupted('interrupted before any row was read: nothing was written');
  if (summary.interrupted) {
    throw new Interrupted(
      `interrupted: every row before line ${summary.stoppedAtLine} is committed; run the same command with --resume to continue${summary.checkpointFile ? ` (checkpoint: ${summary.checkpointFile})` : ''}`,
    );
  }
  if (summary.rejected > 0 && !dryRun) {
    throw new PartialFailure(`${fmt(summary.rejected)} row${summary.rejected === 1 ? ' was' : 's were'} rejected; they are in ${summary.rejectsFile}`);
  }
  if (summary.rejected > 0 && dryRun) throw new PartialFailure(`${fmt(summary.rejected)} row${summary.rejected === 1 ? ' would be' : 's would be'} rejected`);
  return summary;
}
