import { existsSync, readdirSync, statSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { Command } from 'commander';
import type { ImportOptions, ImportSummary } from '../../import/engine.js';
import type { KeyIndex } from '../../import/match/keys.js';
import type { SyncOptions } from '../../import/match/sync.js';
import { foreignKeyOrder, type TableDef } from '../../schema/model.js';
import type { Context } from '../context.js';
import { Interrupted, PartialFailure, UsageError } from '../errors.js';
import type { ImportFlags } from './import.js';
import { addFlags, type FlagRow, type FlagsOf } from './flag-table.js';
import { type DirectoryFlags, directoryCommand } from './import-flags.js';
import { examples } from './shared.js';

/**
 * `catalog import DIR`: every file named after a collection (plural or singular, any input
 * format) in foreign-key order, parents first, with import's flags; one summary at the end. A file
 * it does not recognise refuses the whole import by name before anything is sent (exit 2) unless
 * `--skip-unknown`. With `--sync --scope all` the records no file has are removed after every file
 * has landed, children before parents. `catalog seed` is this with the bundled sample.
 */

/**
 * The flag `import DIR` has beside import's and DIRECTORY_FLAGS (seed has none): `--plan FILE` (or a
 * catalog-plan.yaml in the directory, found by runImportDir) says how each file becomes a collection.
 * The default names the plan-file names of import/plan/plan-file.ts (PLAN_NAMES) in words: reading
 * that module here would load the YAML parser at start-up.
 */
export const IMPORT_DIR_FLAGS = [
  {
    flag: 'plan',
    value: 'file',
    help: "a YAML plan saying how each file of another system's export becomes a collection: source ids, header map, links, constants",
    fallback: 'catalog-plan.yaml in DIR when there is one; docs/import.md',
  },
] as const satisfies readonly FlagRow[];

export interface ImportDirOptions extends ImportFlags, DirectoryFlags, FlagsOf<typeof IMPORT_DIR_FLAGS> {
  dir: string;
}

/** Input extensions a directory's files may have. */
const EXTENSIONS = ['csv', 'tsv', 'json', 'ndjson', 'jsonl', 'yaml', 'yml', 'xlsx'];
/** Files an import itself leaves beside its input (rejects, checkpoints, a checkpoint being written): never inputs. */
const OWN_FILES = /\.(rejects\.(csv|ndjson)|checkpoint\.json(\.[0-9a-f]+\.tmp)?)$/;

/** The collection a file name stands for (`labels.csv`, `Label.json`), or null. */
function collectionOf(name: string, tables: readonly TableDef[]): TableDef | null {
  const m = /^(.+)\.([a-z]+)$/i.exec(name);
  if (!m || !EXTENSIONS.includes(m[2].toLowerCase())) return null;
  const base = m[1].toLowerCase();
  return tables.find((t) => t.name === base || t.singular === base) ?? null;
}

/** The directory's input files in foreign-key order, and the names it does not recognise (`tables`: the collections the service describes). */
export function directoryFiles(dir: string, tables: readonly TableDef[]): { files: Array<{ table: TableDef; file: string }>; unknown: string[] } {
  const found = new Map<TableDef, string[]>();
  const unknown: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    if (name.startsWith('.') || OWN_FILES.test(name) || !statSync(join(dir, name)).isFile()) continue;
    const table = collectionOf(name, tables);
    if (table) found.set(table, [...(found.get(table) ?? []), name]);
    else unknown.push(name);
  }
  const files: Array<{ table: TableDef; file: string }> = [];
  for (const table of foreignKeyOrder(tables)) {
    const names = found.get(table) ?? [];
    if (names.length > 1) throw new UsageError(`${dir} has ${names.join(' and ')} for ${table.name}: keep one file per collection`);
    if (names.length === 1) files.push({ table, file: join(dir, names[0]) });
  }
  return { files, unknown };
}

/** `catalog import DIR`. */
export function defineImportDir(ctx: Context): Command {
  const cmd = addFlags(
    directoryCommand('import', 'Import a directory: every <collection>.csv|tsv|json|ndjson|yaml|xlsx in it (singular or plural names), parents first, in one run', '<dir>', 'directory of per-collection files'),
    IMPORT_DIR_FLAGS,
  ).action(async (dir: string, opts: Omit<ImportDirOptions, 'dir'>) => {
    await runImportDir({ ...opts, dir }, ctx);
  });
  return examples(cmd, ['catalog import ./export', 'catalog import ./export --dry-run', 'catalog import ./legacy --plan legacy-plan.yaml --dry-run', 'catalog import ./export --sync --scope all --yes']);
}

/** In a directory, `--key COLS` is the key of the collections that have every one of COLS (artists: --key stage_name). */
const keyFits = (table: TableDef, key: string): boolean => key.split(',').every((c) => table.columns.some((col) => col.name === c.trim()));

/** Checks the directory and its files before anything is sent. */
function filesOf(opts: ImportDirOptions, tables: readonly TableDef[]): Array<{ table: TableDef; file: string }> {
  if (!existsSync(opts.dir) || !statSync(opts.dir).isDirectory()) throw new UsageError(`${opts.dir} is not a directory`);
  if (opts.sync && opts.scope !== undefined && opts.scope.trim() !== 'all') {
    throw new UsageError(`--scope ${opts.scope}: a directory syncs every collection it has a file for; give --scope all, or sync one file with catalog <collection> import FILE --sync --scope EXPR`);
  }
  const { files, unknown } = directoryFiles(opts.dir, tables);
  if (unknown.length && !opts.skipUnknown) {
    throw new UsageError(`${opts.dir}: ${unknown.join(', ')} ${unknown.length > 1 ? 'are' : 'is'} named after no collection; nothing was imported`, `name files after a collection (${tables.map((t) => `${t.name}.csv`).join(', ')}, or singular), or pass --skip-unknown`);
  }
  if (opts.key && !files.some((f) => keyFits(f.table, opts.key!))) throw new UsageError(`--key ${opts.key}: no collection in ${opts.dir} has ${opts.key.includes(',') ? 'those fields' : 'that field'}`);
  if (files.length === 0) throw new UsageError(`${opts.dir} has no file named after a collection`, `e.g. ${tables.map((t) => `${t.name}.csv`).join(', ')}`);
  return files;
}

/** Options a caller sets per file (seed: rejects in the working directory). */
type PerFile = (collection: string, file: string) => Partial<ImportOptions>;

/** The import command's run (loaded when a directory is imported, not when the command is defined). */
const importCommand = () => import('./import.js');

/** Imports every file, then (a sync) removes what no file has, children first. */
async function importAll(opts: ImportDirOptions, ctx: Context, tables: readonly TableDef[], dryRun: boolean, extra: Partial<ImportOptions> = {}, perFile: PerFile = () => ({})): Promise<ImportSummary[]> {
  const [{ importFile }, { planSync, runSync }, { importOptions }, { contextTransport }] = await Promise.all([import('../../import/engine.js'), import('../../import/match/sync.js'), importCommand(), import('../transport.js')]);
  const transport = await contextTransport(ctx);
  const abort = new AbortController();
  void ctx.waitForSignal().then(() => abort.abort());
  const summaries: ImportSummary[] = [];
  /** A dry run's records earlier files would create, and the ids made up for them (by name, or by a plan's source ids). */
  const prospective = new Map<string, Array<Record<string, string>>>();
  const madeUp = new Set<string>();
  const matched: Array<{ table: TableDef; index: KeyIndex; rejected: number; summary: ImportSummary; sync: SyncOptions }> = [];
  const plan = opts.plan ? await (await import('./import-plan.js')).planRun(opts.plan, opts.dir, opts.source, tables, transport, abort.signal, dryRun ? (c, id) => madeUp.add(`${c}/${id.toLowerCase()}`) : undefined) : null;
  const jobs = plan ? plan.entries.map((e) => ({ table: e.table, file: e.path, entry: e })) : filesOf(opts, tables).map((f) => ({ ...f, entry: null }));
  for (const { table, file, entry } of jobs) {
    const key = opts.key && keyFits(table, opts.key) ? opts.key : undefined;
    const base = importOptions({ ...opts, key, file, collection: table.name, scope: opts.sync ? 'all' : undefined }, table, tables, ctx);
    let got: { index: KeyIndex; rejected: number } | null = null;
    const sync = base.sync ? { ...base.sync, deferred: (index: KeyIndex, rejected: number) => void (got = { index, rejected }) } : undefined;
    const options = {
      ...base,
      ...extra,
      ...perFile(table.name, file),
      dryRun,
      sync,
      // a directory's files are one run (links and removals after every file): each is compared
      unchangedRuns: false,
      signal: abort.signal,
      clock: () => ctx.clock.now(),
      onNotice: (m: string) => void ctx.note(ctx.style().dim(`${table.name}: ${m}`)),
      ...(dryRun ? { prospective: (c: string) => prospective.get(c) ?? [], knownIds: (c: string, id: string) => madeUp.has(`${c}/${id.toLowerCase()}`) } : {}),
    };
    const run = plan && entry ? plan.importEntry(entry, options) : importFile(options, transport);
    const s = await run.catch((err: unknown) => {
      // an error names its file once
      if (err instanceof Error && err.name === 'ImportError' && !err.message.startsWith(`${entry?.file ?? file}: `)) err.message = `${entry?.file ?? file}: ${err.message}`;
      throw err;
    });
    // a dry run: the names this file would add are there for the next files' references
    if (dryRun && REFERRED_BY_NAME.includes(table.name)) {
      const { parseMaps } = await import('../../import/shape/mapping.js');
      const how = entry ?? { ...opts, map: opts.map ? parseMaps(opts.map) : {} };
      prospective.set(table.name, await namesIn(file, table, how, (id) => madeUp.add(`${table.name}/${id}`)));
    }
    const done = got as { index: KeyIndex; rejected: number } | null;
    if (done && base.sync) matched.push({ table, ...done, summary: s, sync: base.sync });
    summaries.push(s);
    if (s.interrupted) throw new Interrupted(`interrupted in ${file}: the files before it are imported; run the same command again`);
  }
  // Removals are planned for the whole run before any is applied, and held everywhere if any
  // file had a rejected row: a release held back must not lose the tracks another file dropped.
  const rejected = summaries.reduce((n, s) => n + s.rejected, 0);
  const plans = [];
  for (const m of matched.reverse()) {
    const held = rejected > 0 && m.rejected === 0 ? rejected : m.rejected;
    const plan = await planSync(transport, m.table, m.index, m.sync, held, !dryRun, !dryRun);
    if (rejected > 0 && m.rejected === 0 && plan.report.held) plan.report.held = `${fmt(rejected)} row${rejected > 1 ? 's' : ''} of this run (${rejectedFiles(summaries)}) ${rejected > 1 ? 'were' : 'was'} rejected: nothing is removed until every file loads whole`;
    plans.push({ m, plan });
  }
  for (const { m, plan } of plans) {
    if (!dryRun) await runSync(transport, m.table, plan, m.sync, abort.signal);
    m.summary.sync = plan.report;
  }
  return summaries;
}

const fmt = (n: number) => n.toLocaleString('en-US');

/** Collections other files name by text (a release's label, genre, subgenre). */
const REFERRED_BY_NAME = ['labels', 'genres', 'subgenres'];

/**
 * The id, name and genre of each row of a parent file (its header matched to fields as import
 * matches them), an id made up where the file has none: what a dry run of the next files sees.
 */
async function namesIn(
  file: string,
  table: TableDef,
  how: { map: Record<string, string>; format?: string; delimiter?: string; sheet?: string },
  made: (id: string) => void,
): Promise<Array<Record<string, string>>> {
  const [{ detectFormat, openReader }, { normalizeName }, { randomUUID }] = await Promise.all([import('../../import/readers/index.js'), import('../../import/shape/mapping.js'), import('node:crypto')]);
  const { map } = how;
  const fieldOf = (h: string) => map[h] ?? table.columns.find((c) => c.name === h || normalizeName(c.name) === normalizeName(h))?.name;
  const rows: Array<Record<string, string>> = [];
  const reader = openReader(file, detectFormat(file, how.format), { delimiter: how.delimiter, sheet: how.sheet, name: file });
  for await (const rec of reader.records()) {
    const row: Record<string, string> = {};
    for (const [h, v] of Object.entries(rec.values)) {
      const f = fieldOf(h);
      if (f && (f === 'id' || f === 'name' || f === 'genre') && v !== null && v !== undefined) row[f] = String(v);
    }
    if (!row.name) continue;
    if (!row.id) {
      row.id = randomUUID();
      made(row.id);
    }
    rows.push(row);
  }
  return rows;
}

/** The files of a run that had rejected rows, for a message. */
const rejectedFiles = (summaries: ImportSummary[]): string => summaries.filter((s) => s.rejected > 0).map((s) => `${basename(s.input)}: ${fmt(s.rejected)}`).join(', ');

/** One summary for the directory: a line per file (its details when it has some), then the totals. */
async function report(ctx: Context, summaries: ImportSummary[]): Promise<void> {
  const { summaryText } = await importCommand();
  for (const s of summaries) {
    const removed = s.sync ? `, ${fmt(s.sync.held ? 0 : s.sync.deletes)} ${s.dryRun ? 'to remove' : 'removed'}` : '';
    const rejected = s.rejected ? `, ${fmt(s.rejected)} rejected${s.rejectsFile ? ` (${s.rejectsFile})` : ''}` : '';
    await ctx.note(`${s.table.padEnd(10)} ${String(s.records).padStart(6)} ${s.records === 1 ? 'row: ' : 'rows:'} ${fmt(s.inserted)} ${s.dryRun ? 'to insert' : 'inserted'}, ${fmt(s.updated)} ${s.dryRun ? 'to update' : 'updated'}, ${fmt(s.unchanged)} unchanged${rejected}${removed}`);
    // the file's details (rejected lines, created parents, what a sync removes), without its own count line
    for (const line of summaryText(s).slice(1)) if (!/^ {2}(rows matched by|nothing changed)/.test(line)) await ctx.note(line);
  }
  const t = summaries.reduce((a, s) => ({ i: a.i + s.inserted, u: a.u + s.updated, n: a.n + s.unchanged, r: a.r + s.rejected, d: a.d + (s.sync && !s.sync.held ? s.sync.deletes : 0) }), { i: 0, u: 0, n: 0, r: 0, d: 0 });
  const dry = summaries[0]?.dryRun ? ' (dry run, nothing written)' : '';
  const total = `${fmt(t.i)} inserted, ${fmt(t.u)} updated, ${fmt(t.n)} unchanged, ${fmt(t.r)} rejected${summaries.some((s) => s.sync) ? `, ${fmt(t.d)} removed` : ''}`;
  const same = !dry && t.i + t.u + t.d + t.r === 0 ? '; nothing changed: the catalog already matches the files' : '';
  await ctx.note(`${summaries.length} file${summaries.length === 1 ? '' : 's'}${dry}: ${total}${same}`);
}

/** Runs `catalog import DIR` (and `seed`): the plan and a question first when it syncs. */
export async function runImportDir(opts: ImportDirOptions, ctx: Context, extra: Partial<ImportOptions> = {}, perFile?: PerFile): Promise<ImportSummary[]> {
  const { boundHeapGrowth } = await import('../memory.js');
  boundHeapGrowth();
  const dryRun = Boolean(opts.dryRun || ctx.globals.dryRun);
  if (ctx.globals.dryRun) ctx.globals.dryRun = false;
  if (!existsSync(opts.dir) || !statSync(opts.dir).isDirectory()) throw new UsageError(`${opts.dir} is not a directory`);
  // the collections the service describes, parents first: the files are matched against these
  const tables = foreignKeyOrder(await ctx.tables());
  const { findPlan } = await import('../../import/plan/plan-file.js');
  const planPath = findPlan(opts.dir, opts.plan);
  if (planPath) {
    // the plan is checked whole (files, fields, links) before anything is read or sent
    const { checkPlan } = await import('./import-plan.js');
    checkPlan(planPath, opts, tables);
    opts = { ...opts, plan: planPath };
  } else {
    if (opts.source !== undefined || opts.sourceId !== undefined) throw new UsageError(`${opts.sourceId !== undefined ? '--source-id' : '--source'} in a directory needs a plan: which column holds the source's id differs per file`, 'give --plan FILE (or put catalog-plan.yaml in the directory) with source_id: COLUMN per file; docs/import.md');
    filesOf(opts, tables);
  }
  if (opts.sync && !dryRun && !opts.yes) {
    const plan = await importAll(opts, ctx, tables, true, { ...extra, checkpointPath: null }, perFile);
    await report(ctx, plan);
    const total = { ...plan[0], table: 'records', inserted: 0, updated: 0, sync: { ...plan[0].sync!, deletes: 0, held: null } } as ImportSummary;
    for (const s of plan) {
      total.inserted += s.inserted;
      total.updated += s.updated;
      total.sync!.deletes += s.sync && !s.sync.held ? s.sync.deletes : 0;
    }
    if (!(await (await importCommand()).confirmSync(ctx, total))) {
      await ctx.note('Nothing written');
      return plan;
    }
  }
  const summaries = await importAll(opts, ctx, tables, dryRun, extra, perFile);
  await report(ctx, summaries);
  if (opts.summary) await writeFile(opts.summary, `${JSON.stringify({ files: summaries }, null, 2)}\n`);
  const rejected = summaries.reduce((n, s) => n + s.rejected, 0);
  if (rejected > 0) throw new PartialFailure(`${fmt(rejected)} row${rejected === 1 ? '' : 's'} ${dryRun ? 'would be' : rejected === 1 ? 'was' : 'were'} rejected`);
  return summaries;
}
