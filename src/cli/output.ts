import { batchedOutput, type Output } from '../io/streams.js';
import { type Embeds, embedsOf, flatTypes, flattenRow, selectColumns, type SelectResolver } from '../format/flatten.js';
import { createWriter, defaultFormat, type FormatName, type PageWriter, type Row } from '../format/index.js';
import type { SelectItem } from '../grammar/types.js';
import type { Context } from './context.js';
import { displayDefault, relationsOf, type SchemaModel, type TableDef, titleOf, typeKind } from '../schema/model.js';

/** The output format: -o / CATALOG_OUTPUT / profile, else a table on a terminal and JSON when piped. */
export async function outputFormat(ctx: Context): Promise<FormatName> {
  return (await ctx.config()).output?.value ?? defaultFormat(ctx.io.stdout.isTTY);
}

/**
 * The fields people recognise a record by besides its title, in the order a table shows them
 * after the key and the title (titleOf): its codes (ISRC, UPC, catalog number), genre, date,
 * label, place.
 */
const RECOGNISED = [
  'catalog_number', 'isrc_code', 'upc_code',
  'genre', 'release_date', 'label', 'recording_year', 'subgenre', 'city', 'country', 'is_signed',
];

/**
 * The order a table shows a collection's fields in when it cannot show them all: key and title
 * fields first, plain fields next, timestamps, then JSON documents.
 */
export function displayColumns(table: TableDef): string[] {
  const titles = [titleOf(table), ...RECOGNISED];
  const rank = (name: string, type: string): number => {
    if (table.primaryKey.includes(name)) return 0;
    const t = titles.indexOf(name);
    if (t >= 0) return 1 + t / 100;
    const k = typeKind(type);
    return k === 'json' ? 5 : k === 'timestamp' ? 4 : 3;
  };
  return table.columns
    .map((f, i) => ({ f, r: rank(f.name, f.type) + i / 1000 }))
    .sort((a, b) => a.r - b.r)
    .map(({ f }) => f.name);
}

export interface WriteOptions {
  /** The collection the rows come from (column order and types for tables and CSV headers). */
  table?: TableDef;
  /** Whether the request named its own columns (then the rows' own key order wins). */
  selected?: boolean;
  /** One record: an object in JSON/YAML, a field/value view in a table. */
  single?: boolean;
  format?: FormatName;
  /** The request's select: its to-one embeds become `embed.field` columns in tables, CSV and TSV. */
  select?: SelectItem[];
  /** Where the rows go instead of stdout (a pager). */
  out?: Output;
  /** Rows a table sizes its columns by (a terminal's first page: all of them). */
  firstRows?: number;
}

/** Formats whose rows are flat cells: a to-one embed is worth its own columns there. */
const FLAT_FORMATS: ReadonlySet<FormatName> = new Set(['table', 'csv', 'tsv']);

/** What `*` and each embed stand for, from the schema's fields and foreign keys. */
export function schemaResolver(schema: SchemaModel): SelectResolver {
  return {
    fields: (table) => schema.tables.get(table)?.columns ?? [],
    embed(table, relation, hint) {
      // `label_id(name)`: the foreign-key column names the target, always to-one.
      const fk = schema.tables.get(table)?.columns.find((f) => f.name === relation && f.foreignKey);
      if (fk) return { table: fk.foreignKey!.table, one: true };
      const related = relationsOf(schema, table).filter((r) => r.table === relation);
      const r = related.find((x) => x.via === hint) ?? related[0];
      return r ? { table: r.table, one: r.cardinality === 'many-to-one' } : undefined;
    },
  };
}

/** A format's page writer set up for the command's output (stdout, or a pager): the embeds it flattens and what to flush at the end. */
export interface CommandWriter {
  format: FormatName;
  writer: PageWriter;
  /** The select's to-one embeds, flattened to `embed.field` columns in the flat formats. */
  embeds: Embeds;
  /** Where the rows go (stdout or a pager); `closed` once nobody reads. */
  target: Output;
  /** What the writer writes to (`target`, batched when it is no terminal). */
  out: Output;
  /** Passes on what is batched (call at the end, also after an error). */
  flush(): Promise<void>;
}

/** The writer for rows printed by a command, in the chosen format. */
export async function commandWriter(ctx: Context, opts: WriteOptions = {}): Promise<CommandWriter> {
  const format = opts.format ?? (await outputFormat(ctx));
  // The embeds' columns come from the select, not the rows: a null embed in the first row (or
  // page) still gets its columns, and the header never changes while rows stream in.
  const resolver = opts.table && opts.select ? schemaResolver(await ctx.schema()) : null;
  const embeds: Embeds = resolver && FLAT_FORMATS.has(format) ? embedsOf(opts.select, opts.table!.name, resolver) : new Map();
  // what heads an empty result too: the table's fields, or the select's columns
  const columns = opts.table && !opts.selected ? (format === 'table' ? displayColumns(opts.table) : opts.table.columns.map((f) => f.name)) : resolver && FLAT_FORMATS.has(format) ? selectColumns(opts.select!, opts.table!.name, resolver) : undefined;
  // a pipe, file or pager gets the rows in chunks, a terminal line by line
  const target = opts.out ?? ctx.io.stdout;
  const batched = ctx.io.stdout.isTTY && !opts.out ? null : batchedOutput(target);
  const out = batched ?? target;
  const writer = createWriter(format, {
    out,
    columns,
    columnTypes: opts.table ? { ...Object.fromEntries(opts.table.columns.map((f) => [f.name, f.type])), ...flatTypes(embeds) } : undefined,
    columnDefaults: opts.table ? Object.fromEntries(opts.table.columns.map((f) => [f.name, displayDefault(f.default)])) : undefined,
    single: opts.single,
    firstRows: opts.firstRows,
    now: ctx.clock.now(),
    notice: (m) => void ctx.note(ctx.style().dim(m)),
  });
  return { format, writer, embeds, target, out, flush: async () => void (await batched?.flush()) };
}

/** Streams rows to stdout in the chosen format (an array is one page, an iterable a row at a time); returns how many were written. */
export async function writeRows(ctx: Context, rows: Iterable<Row> | AsyncIterable<Row>, opts: WriteOptions = {}): Promise<number> {
  const w = await commandWriter(ctx, opts);
  const flat = (r: Row) => flattenRow(r, w.embeds);
  let n = 0;
  try {
    if (Array.isArray(rows)) {
      await w.writer.write(rows.map(flat));
      n = rows.length;
    } else {
      for await (const row of rows) {
        // Nobody reads any more (`| head`): stop reading further rows.
        if (w.target.closed) break;
        await w.writer.write([flat(row)]);
        n++;
      }
    }
    await w.writer.end();
  } finally {
    // what was written before an error still reaches the reader
    await w.flush();
  }
  return n;
}

/** A success message for people at a terminal (stderr; nothing when piped or with -q). */
export async function success(ctx: Context, message: string): Promise<void> {
  if (ctx.io.stderr.isTTY) await ctx.note(`${ctx.style().green('✓')} ${message}`);
}

/** "1 artist" / "3 artists". */
export function plural(n: number, singular: string, pluralName: string): string {
  return `${n} ${n === 1 ? singular : pluralName}`;
}
