import { basename, extname } from 'node:path';
import { Command } from 'commander';
import { DEFAULT_PAGE } from '../../client/pages.js';
import type { TableDef } from '../../schema/catalog.js';
import type { InputFormat } from '../../format/types.js';
import type { Context } from '../context.js';
import { Interrupted, UsageError } from '../errors.js';
import { buildReadQuery, count } from '../flags/query.js';
import { addFlags, type FlagRow, type FlagsOf } from './flag-table.js';
import { addReadFlags, examples, type ReadFlags } from './shared.js';

const EXPORT_FORMATS = ['csv', 'json', 'ndjson', 'yaml', 'xlsx'] as const satisfies readonly InputFormat[];

/**
 * Export's own flags, one row each (the read flags come from READ_FLAGS): its commander chain and
 * ExportFlags come from them. `safeFormulas` is true with --safe-formulas, false with
 * --no-safe-formulas, undefined (as --bom says) with neither.
 */
export const EXPORT_FLAGS = [
  { flag: 'format', value: 'format', choices: EXPORT_FORMATS, help: 'csv, json, ndjson, yaml or xlsx', fallback: 'from the file name, else csv' },
  { flag: 'delimiter', value: 'c', help: 'CSV field separator, one character', fallback: 'a tab for .tsv and .tab files, else a comma' },
  { flag: 'null', value: 'token', help: 'CSV text for null', fallback: 'empty where that reads back as null, else \\N' },
  // without --page-size the export reads pages of the client's own size (client/pages.ts)
  { flag: 'page-size', value: 'n', help: 'rows per request', fallback: String(DEFAULT_PAGE) },
  { flag: 'bom', help: 'CSV for Excel: start with a UTF-8 byte order mark (so Excel reads UTF-8); implies --safe-formulas' },
  { flag: 'safe-formulas', help: "make cells that start with = + - @, a tab or CR text for spreadsheets (a leading ', quoted; OWASP CSV injection)" },
  { flag: 'safe-formulas', negate: true, help: 'with --bom: leave formula cells as they are' },
] as const satisfies readonly FlagRow[];

/** The flags of `catalog <collection> export`, as commander parses them: READ_FLAGS and EXPORT_FLAGS. */
export type ExportFlags = ReadFlags & FlagsOf<typeof EXPORT_FLAGS>;

export interface RunExportOptions extends ExportFlags {
  collection: string;
  /** Output file; undefined or `-` for stdout. */
  file?: string;
}
const BY_EXTENSION: Record<string, InputFormat> = { '.csv': 'csv', '.tsv': 'csv', '.tab': 'csv', '.json': 'json', '.ndjson': 'ndjson', '.jsonl': 'ndjson', '.yaml': 'yaml', '.yml': 'yaml', '.xlsx': 'xlsx' };

/** `catalog <collection> export [file]`. */
export function defineExport(ctx: Context, table: TableDef): Command {
  const cmd = addFlags(
    addReadFlags(
      new Command('export')
        .description(`Write every matching ${table.singular} to a file (or stdout) page by page, in a format import reads back`)
        .argument('[file]', 'output file (default: stdout); the format follows its extension'),
    ),
    EXPORT_FLAGS,
  )
    .addHelpText(
      'after',
      "\nPlain CSV (no --bom or --safe-formulas) is byte-faithful: it imports back to the same rows. A file made\nwith --bom or --safe-formulas is for spreadsheets: a ' added to a formula cell is kept if it is imported.\n",
    )
    .action(async (file: string | undefined, opts: ExportFlags) => {
      await runExport({ ...opts, file, collection: table.name }, ctx);
    });
  return examples(cmd, [
    `catalog ${table.name} export ${table.name}.csv`,
    `catalog ${table.name} export --where 'created>=2024-01-01' --format ndjson > recent.ndjson`,
    `catalog ${table.name} export backup.yaml && catalog ${table.name} import backup.yaml`,
  ]);
}

/** The export format: --format, the file's extension, -o when it names one of ours, else csv. */
async function exportFormat(opts: RunExportOptions, ctx: Context): Promise<InputFormat> {
  if (opts.format) return opts.format;
  if (opts.file && opts.file !== '-') {
    const byExt = BY_EXTENSION[extname(opts.file).toLowerCase()];
    if (byExt) return byExt;
  }
  const o = ctx.globals.output;
  if (o && (EXPORT_FORMATS as readonly string[]).includes(o)) return o as InputFormat;
  return 'csv';
}

/** What --bom and --safe-formulas ask for (CSV only); undefined for a plain, byte-faithful export. */
function spreadsheetOptions(opts: RunExportOptions, format: InputFormat): { bom: boolean; safeFormulas: boolean } | undefined {
  const bom = Boolean(opts.bom);
  const safeFormulas = opts.safeFormulas ?? bom;
  if (!bom && !safeFormulas) return undefined;
  if (format !== 'csv') {
    const flag = bom ? '--bom' : '--safe-formulas';
    throw new UsageError(`${flag} is for CSV exports, not ${format}`, format === 'xlsx' ? 'an xlsx export already keeps text as text' : 'drop the flag, or export CSV');
  }
  return { bom, safeFormulas };
}

/** CSV's separator: --delimiter (one character), a tab for a .tsv or .tab file, else a comma. */
function exportDelimiter(opts: RunExportOptions, format: InputFormat): string {
  if (opts.delimiter !== undefined) {
    const d = opts.delimiter === '\\t' ? '\t' : opts.delimiter;
    if (format !== 'csv') throw new UsageError(`--delimiter applies to CSV exports, not ${format}`);
    if ([...d].length !== 1 || /["\r\n]/.test(d)) throw new UsageError(`--delimiter takes one character other than a quote or a line end, not ${JSON.stringify(opts.delimiter)}`, "e.g. --delimiter ';' or --delimiter '\\t'");
    return d;
  }
  return opts.file && /\.(tsv|tab)$/i.test(opts.file) ? '\t' : ',';
}

/** Streams the rows of a collection into a file or stdout; returns the number written. */
export async function runExport(opts: RunExportOptions, ctx: Context): Promise<number> {
  const [{ exportTable }, { fileSink, textSink }, { createProgress }, { contextTransport }, { boundHeapGrowth }] = await Promise.all([
    import('../../export/export.js'),
    import('../../export/sink.js'),
    import('../progress.js'),
    import('../transport.js'),
    import('../memory.js'),
  ]);
  boundHeapGrowth();
  // the service's description of the collection: its fields make the header, its types the cells
  const table = await ctx.table(opts.collection);
  const query = buildReadQuery(opts, table, await ctx.schema(), ctx.removedFields(table.name), ctx.clock.now());
  const pageSize = count('--page-size', opts.pageSize);
  if (pageSize === 0) throw new UsageError('--page-size must be at least 1');
  const format = await exportFormat(opts, ctx);
  const spreadsheet = spreadsheetOptions(opts, format);
  const toFile = opts.file !== undefined && opts.file !== '-';
  // a workbook is a zip: it goes to a file, never through the text output
  if (format === 'xlsx' && !toFile) throw new UsageError(`an xlsx export goes to a file: name one, e.g. catalog ${table.name} export ${table.name}.xlsx`);
  if (ctx.dryRun) {
    await ctx.send({ method: 'GET', path: `/${table.name}`, query: (await import('../../grammar/compile.js')).compileQuery(query) });
    return 0;
  }
  const delimiter = exportDelimiter(opts, format);
  const { embedsOf } = await import('../../format/flatten.js');
  const { schemaResolver } = await import('../output.js');
  const embeds = embedsOf(query.select, table.name, schemaResolver(await ctx.schema()));
  const transport = await contextTransport(ctx);
  const abort = new AbortController();
  void ctx.waitForSignal().then(() => abort.abort());
  const sink = toFile ? fileSink(opts.file as string) : null;
  const label = `${table.name} → ${toFile ? basename(opts.file as string) : 'stdout'}`;
  const progress = await createProgress(ctx.io.stderr, { quiet: ctx.globals.quiet, clock: () => ctx.clock.now(), label });
  const started = ctx.clock.now();
  let n: number;
  try {
    n = await exportTable({
      transport,
      table,
      format,
      out: sink ?? textSink(ctx.io.stdout),
      query,
      pageSize,
      nullToken: opts.null,
      spreadsheet,
      delimiter,
      embeds,
      signal: abort.signal,
      onPage: (rows) => progress.update({ phase: 'exporting', rows }),
    });
    if (abort.signal.aborted) throw new Interrupted(`interrupted: ${toFile ? `${opts.file} was not written` : 'the output is incomplete'}`);
    await sink?.commit();
  } catch (err) {
    progress.done();
    await sink?.abort();
    throw err;
  }
  progress.done();
  const seconds = (ctx.clock.now() - started) / 1000;
  await ctx.note(`exported ${n.toLocaleString('en-US')} ${n === 1 ? table.singular : table.name} to ${toFile ? opts.file : 'stdout'} as ${format} (${seconds.toFixed(1)} s)`);
  return n;
}
