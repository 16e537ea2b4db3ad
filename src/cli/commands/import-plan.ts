import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, extname, join } from 'node:path';
import type { Transport } from '../../client/transport.js';
import type { ImportOptions, ImportSummary } from '../../import/engine.js';
import { KeyIndex } from '../../import/match/keys.js';
import { parseRef } from '../../import/match/names.js';
import { type ImportPlan, loadPlan, type PlanEntry, SOURCE_NAME } from '../../import/plan/plan-file.js';
import { type PlanReject, SourceIds, sourceIdsSupported, transformFile } from '../../import/plan/plan-transform.js';
import { RejectsWriter } from '../../import/account/rejects.js';
import type { TableDef } from '../../schema/model.js';
import { renderMatch } from '../../schema/match.js';
import { SOURCE_IDS } from '../../schema/source-ids.js';
import { UsageError } from '../errors.js';

/**
 * `catalog import DIR --plan FILE`: each file of the plan made into a file of ours
 * (src/import/plan/plan-transform.ts) and imported by the engine, in the plan's order (parents first),
 * with the source's ids kept and looked up across files.
 */

/** The command's flags a plan is checked against (import DIR's). */
export interface PlanFlags {
  dir: string;
  source?: string;
  map?: string[];
  ref?: string[];
  key?: string;
  ignoreUnknown?: boolean;
  createMissing?: boolean;
  format?: string;
  delimiter?: string;
  sheet?: string;
  dateFormat?: string;
  encoding?: string;
  resume?: boolean;
  sourceId?: string;
}

/** Flags a plan sets per file: given on the command line as well, they would apply to every file. */
const PER_FILE_FLAGS: Array<[keyof PlanFlags, string]> = [
  ['map', '--map'],
  ['ref', '--ref'],
  ['key', '--key'],
  ['ignoreUnknown', '--ignore-unknown'],
  ['createMissing', '--create-missing'],
  ['format', '--format'],
  ['delimiter', '--delimiter'],
  ['sheet', '--sheet'],
  ['dateFormat', '--date-format'],
  ['encoding', '--encoding'],
  ['resume', '--resume'],
  ['sourceId', '--source-id'],
];

/** Reads and checks the plan and the flags beside it (before anything is read or sent). */
export function checkPlan(planPath: string, opts: PlanFlags, tables: readonly TableDef[]): ImportPlan {
  const given = PER_FILE_FLAGS.filter(([k]) => opts[k] !== undefined && opts[k] !== false).map(([, flag]) => flag);
  if (given.length) throw new UsageError(`${given.join(', ')} cannot go with a plan (${basename(planPath)}): the plan sets ${given.length > 1 ? 'them' : 'it'} per file`, 'put it in the plan under the file it is for (docs/import.md)');
  if (opts.source !== undefined && !SOURCE_NAME.test(opts.source)) throw new UsageError(`--source ${opts.source}: a source name is lower-case letters, digits, _ and -, starting with a letter`);
  try {
    return loadPlan(planPath, tables, opts.dir, opts.source);
  } catch (err) {
    if (err instanceof Error && err.name === 'ImportError') throw new UsageError(err.message);
    throw err;
  }
}

/** A rejects file beside the source file: `Track.csv` → `Track.rejects.csv`. */
const rejectsBeside = (path: string): string => join(dirname(path), `${basename(path, extname(path))}.rejects.csv`);

export interface PlanRun {
  entries: PlanEntry[];
  /** Imports one file of the plan (options: the run's, for that file's collection). */
  importEntry(entry: PlanEntry, options: ImportOptions): Promise<ImportSummary>;
}

/** The run of a checked plan: source ids read once per collection, and grown as files land. */
export async function planRun(planPath: string, dir: string, source: string | undefined, tables: readonly TableDef[], transport: Transport, signal: AbortSignal, madeUp?: MadeUp): Promise<PlanRun> {
  return planRunOf(loadPlan(planPath, tables, dir, source), tables, transport, signal, madeUp);
}

/**
 * `catalog <collection> import FILE --source NAME --source-id COLUMN`: a plan of one file, from the
 * command's flags (its --map, --key, --ref and reader flags are that file's settings).
 */
export function singleFilePlan(o: { file: string; table: TableDef; source: string; sourceId: string; map?: Record<string, string>; key?: string[]; refs: string[]; ignoreUnknown?: boolean; createMissing?: boolean; format?: string; delimiter?: string; sheet?: string; dateFormat?: string }): ImportPlan {
  if (!SOURCE_NAME.test(o.source)) throw new UsageError(`--source ${o.source}: a source name is lower-case letters, digits, _ and -, starting with a letter`);
  if (o.file === '-') throw new UsageError('--source-id reads a file, not stdin: give the file\'s path');
  const entry: PlanEntry = {
    file: basename(o.file),
    path: o.file,
    table: o.table,
    sourceId: o.sourceId,
    key: o.key?.length ? [o.key] : (o.table.naturalKey ?? null),
    map: o.map ?? {},
    ignore: [],
    ignoreUnknown: Boolean(o.ignoreUnknown),
    constants: {},
    refs: o.refs,
    links: [],
    createMissing: Boolean(o.createMissing),
    format: o.format,
    delimiter: o.delimiter,
    sheet: o.sheet,
    dateFormat: o.dateFormat,
  };
  return { path: o.file, dir: dirname(o.file), source: o.source, entries: [entry] };
}

/** Told each id a dry run makes up for a new record (the run's knownIds count them as present in later files). */
export type MadeUp = (collection: string, id: string) => void;

/** The run of a plan already read and checked. */
export async function planRunOf(plan: ImportPlan, tables: readonly TableDef[], transport: Transport, signal: AbortSignal, madeUp?: MadeUp): Promise<PlanRun> {
  const { importFile } = await import('../../import/engine.js');
  const sources = new Map<string, Promise<SourceIds>>();
  let supported: Promise<void> | null = null;
  const tmp = mkdtempSync(join(tmpdir(), 'catalog-plan-'));
  process.once('exit', () => rmSync(tmp, { recursive: true, force: true }));
  return {
    entries: plan.entries,
    async importEntry(entry, options) {
      const source = plan.source;
      if (source && (entry.sourceId || entry.links.some((l) => l.source))) {
        supported ??= sourceIdsSupported(transport, entry.table.name).then((s) => {
          if (!s.ok) throw new UsageError(`this service does not keep source ids (${s.why}): a plan with source ids needs catalog serve (schema version 6 or later)`, 'a plain PostgREST has no place for them; leave source and source_id out of the plan and match by natural key');
        });
        await supported;
      }
      const sourcesOf = (collection: string): Promise<SourceIds> => {
        let p = sources.get(collection);
        if (!p) {
          const table = tables.find((t) => t.name === collection)!;
          p = SourceIds.load(transport, table, source!);
          sources.set(collection, p);
        }
        return p;
      };
      const natural = entry.sourceId && entry.key ? await KeyIndex.load(transport, entry.table.name, entry.key) : null;
      const transformed = await transformFile(entry, source, sourcesOf, natural, tmp, signal, madeUp && ((id) => madeUp(entry.table.name, id)));
      const rejectsPath = options.rejectsPath && !options.rejectsPath.startsWith(entry.path) ? options.rejectsPath : rejectsBeside(entry.path);
      // the file of ours carries each row's source id in the service's source_ids field
      const own = Boolean(source && entry.sourceId);
      const table = own ? { ...entry.table, columns: [...entry.table.columns, { name: SOURCE_IDS, type: 'jsonb', nullable: true }] } : entry.table;
      const keyAlts = (entry.key ?? []).map((columns) => ({ kind: 'key' as const, columns: [...columns] }));
      const summary = await importFile(
        {
          ...options,
          table,
          // where the service writes, a row is its source id's record, else its natural key's
          match: own ? renderMatch([{ kind: 'source', source: source! }, ...keyAlts]) : undefined,
          input: transformed.path,
          format: 'csv',
          delimiter: ',',
          encoding: undefined,
          sheet: undefined,
          map: undefined,
          ignoreUnknown: entry.ignoreUnknown,
          // rows with the source's ids carry our ids (decided in the transform); others match by natural key
          key: entry.sourceId ? undefined : entry.key?.[0] ? [...entry.key[0]] : undefined,
          refs: entry.refs.map((r) => parseRef(entry.table, r, tables)),
          createMissing: entry.createMissing,
          dateFormat: entry.dateFormat,
          rejectsPath,
          checkpointPath: null,
          // the file sent is a transform made from the catalog's source ids: always compared
          unchangedRuns: false,
        },
        transport,
      );
      summary.input = entry.path;
      if (transformed.rejected > 0) await addRejects(summary, transformed.rejects, transformed.rejected, transformed.headers, rejectsPath, entry);
      summary.records += transformed.rejected;
      return summary;
    },
  };
}

/** The plan's own refusals beside the engine's: counted, listed in line order, and in the same rejects file. */
async function addRejects(summary: ImportSummary, rejects: PlanReject[], total: number, headers: string[], path: string, entry: PlanEntry): Promise<void> {
  summary.rejected += total;
  summary.rejectedRows = [...summary.rejectedRows, ...rejects.map((r) => ({ line: r.record.line, code: r.code, message: r.message }))].sort((a, b) => a.line - b.line).slice(0, 100);
  const writer = new RejectsWriter(path, 'csv', () => headers, summary.rejectsFile !== null);
  // a refused row in the columns of the rejects file: its source cells under the names the plan gives them
  const cellsOf = (r: PlanReject): string[] =>
    headers.map((h) => {
      if (h === 'source_ids' && entry.sourceId) return JSON.stringify({ [h]: r.record.values[entry.sourceId] ?? '' });
      const link = entry.links.find((l) => l.field === h);
      const from = link ? link.from : (Object.entries(entry.map).find(([, to]) => to === h)?.[0] ?? h);
      const v = link || h !== 'id' ? r.record.values[from] : '';
      return v === null || v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v);
    });
  await writer.write(rejects.map((r) => ({ record: { ...r.record, cells: cellsOf(r) }, code: r.code, message: r.message })));
  summary.rejectsFile = path;
}
