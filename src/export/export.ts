import type { Query, SelectItem } from '../grammar/types.js';
import type { TableDef } from '../schema/catalog.js';
import type { Transport } from '../client/transport.js';
import type { FormatName, InputFormat, PageWriter, TextSink } from '../format/types.js';
import { createWriter } from '../format/index.js';
import { copyPageFormat } from './copy-csv.js';
import { copyRead } from './copy-read.js';
import { csvPageFormat, csvPassThrough } from './csv-pages.js';
import { DEFAULT_PAGE, exportPages, type PageOptions, pagesOf } from '../client/pages.js';
import { exportWriterOptions } from './writers.js';
import { UTF8_BOM, formulaSafeCsv } from '../format/formula-safe.js';
import { csvHeader } from '../format/csv-dialect.js';
import { xlsxWriter } from '../format/xlsx.js';
import { xlsxCsvWriter } from '../format/xlsx-csv.js';
import { type Embeds, flatColumns, flatTypes, flattenRow } from '../format/flatten.js';

export interface ExportOptions {
  transport: Transport;
  table: TableDef;
  /** A file format; `list --all` also asks for its own formats (table, tsv) and brings their writer. */
  format: InputFormat | FormatName;
  out: TextSink;
  /**
   * The writer of rows read as JSON (src/format/: `list --all` brings one set up for its terminal,
   * pipe or pager); default the format's writer with the table's columns, types and defaults.
   * The CSV bytes path (COPY or CSV pages) writes to `out` whatever the writer.
   */
  writer?: PageWriter;
  /** Asks the first page for a count of every matching row, handed to `onTotal`. */
  count?: 'exact';
  onTotal?: (total: number | null) => void;
  /** Filters/select/order/limit as `list` builds them (default: every row, every column). */
  query?: Query;
  pageSize?: number;
  nullToken?: string;
  signal?: AbortSignal;
  onPage?: (rowsSoFar: number) => void;
  /** CSV for a spreadsheet (src/format/formula-safe.ts): a UTF-8 BOM first, formula cells made text. */
  spreadsheet?: { bom: boolean; safeFormulas: boolean };
  /** CSV's field separator (default `,`; a tab for .tsv). */
  delimiter?: string;
  /**
   * The select's to-one embeds: in the flat formats (CSV, TSV, xlsx) each becomes `embed.field`
   * columns, as `list` shows them; JSON, NDJSON and YAML keep PostgREST's nesting.
   */
  embeds?: Embeds;
}

/** `out` with what a spreadsheet needs: the BOM before the first byte, formula cells made text in every byte path's output. */
function forSpreadsheet(out: TextSink, opts: { bom: boolean; safeFormulas: boolean }, delimiter = ','): TextSink {
  const safe = opts.safeFormulas ? formulaSafeCsv(delimiter) : null;
  let first = opts.bom;
  return {
    async write(chunk) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      const text = safe ? safe(bytes) : bytes;
      if (first) await out.write(UTF8_BOM);
      first = false;
      await out.write(text);
    },
  };
}

/** Output column names of a select list (for the CSV header): `*` expands to the table's columns. */
export function selectedColumns(items: SelectItem[] | undefined, table: TableDef): string[] {
  if (!items || items.length === 0) return table.columns.map((c) => c.name);
  const out: string[] = [];
  for (const i of items) {
    if (i.type === 'star') out.push(...table.columns.map((c) => c.name));
    else if (i.type === 'field') out.push(i.alias ?? (i.field.jsonPath.length ? i.field.jsonPath[i.field.jsonPath.length - 1].key : i.field.name));
    else if (i.type === 'aggregate') out.push(i.alias ?? i.fn);
    else if (!i.spread) out.push(i.alias ?? i.relation);
  }
  return [...new Set(out)];
}

/**
 * Streams every matching row of a table into `out` in a re-importable format and returns the
 * number of rows written.
 */
export async function exportTable(opts: ExportOptions): Promise<number> {
  if (opts.spreadsheet && opts.format === 'csv') opts = { ...opts, out: forSpreadsheet(opts.out, opts.spreadsheet, opts.delimiter) };
  const query: Query = opts.query ?? { where: [], order: [], page: [] };
  const flat = opts.format === 'csv' || opts.format === 'xlsx' || opts.format === 'tsv' || opts.format === 'table';
  const embeds: Embeds = flat && opts.embeds ? opts.embeds : new Map();
  const columns = flatColumns(selectedColumns(query.select, opts.table), embeds);
  const paging = { transport: opts.transport, table: opts.table, query, pageSize: opts.pageSize, signal: opts.signal, onPage: opts.onPage, count: opts.count, onTotal: opts.onTotal };
  // CSV and xlsx read the service's COPY output (or CSV pages) as bytes where the columns are plain
  const bytes = (opts.format === 'csv' && (opts.delimiter ?? ',') === ',') || opts.format === 'xlsx';
  // (a count is asked of the JSON pages: `list --all --count`)
  if (bytes && !opts.count && csvPassThrough(opts.table, query)) {
    const xlsx = opts.format === 'xlsx' ? await xlsxCsvWriter(opts.out, { table: opts.table, columns, nullToken: opts.nullToken }) : null;
    const n = await csvBytes({ ...paging, columns, out: xlsx ?? opts.out, nullToken: opts.nullToken });
    await xlsx?.end();
    return n;
  }
  const writerOpts = { columns, nullToken: opts.nullToken, delimiter: opts.delimiter, extraTypes: flatTypes(embeds) };
  const writer =
    opts.writer ?? (opts.format === 'xlsx' ? await xlsxWriter(opts.out, { table: opts.table, ...writerOpts }) : createWriter(opts.format, exportWriterOptions(opts.out, opts.table, writerOpts)));
  let n = 0;
  for await (const rows of exportPages(paging)) {
    await writer.write(embeds.size ? rows.map((r) => flattenRow(r, embeds)) : rows);
    n += rows.length;
  }
  await writer.end();
  return n;
}

/**
 * The CSV export's bytes, its header first: one COPY read where the service offers it, else COPY
 * pages or the service's own CSV pages, the same bytes either way; returns the rows written.
 */
async function csvBytes(opts: PageOptions & { table: TableDef; columns: string[]; out: TextSink; nullToken?: string }): Promise<number> {
  const { columns } = opts;
  const copied = await copyRead(opts);
  if (copied.rows !== null) return copied.rows;
  // pages: COPY pages where the service caps COPY reads, else the service's own CSV pages; written
  // through either way: rows never become objects here. A COPY page is --page-size rows too
  // (larger ones, 20,000 rows, were no faster over PGlite and took the client's RSS past 150 MB),
  // and one under the cap (a page asked for ahead carries one row more).
  const copyPages = copied.copyRows !== undefined && copied.copyRows >= 2;
  const format = copyPages ? copyPageFormat(opts.table, columns, opts.nullToken) : csvPageFormat(opts.table, columns, opts.nullToken);
  const pageSize = copyPages ? Math.min(copied.copyRows! - 1, opts.pageSize ?? DEFAULT_PAGE) : opts.pageSize;
  await opts.out.write(csvHeader(columns));
  let n = 0;
  for await (const page of pagesOf({ ...opts, pageSize }, format)) {
    if (page.bytes.length) await opts.out.write(page.bytes);
    n += page.count;
  }
  return n;
}
