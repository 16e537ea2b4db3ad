import { createWriter, defaultFormat, type FormatName, type Row } from '../format/index.js';
import type { Context } from './context.js';
import type { TableInfo } from './schema/model.js';
import { typeKind } from './schema/model.js';

/** The output format: -o / CATALOG_OUTPUT / profile, else a table on a terminal and JSON when piped. */
export async function outputFormat(ctx: Context): Promise<FormatName> {
  return (await ctx.config()).output?.value ?? defaultFormat(ctx.io.stdout.isTTY);
}

/**
 * The fields people recognise a record by, in the order a table shows them after the key: its
 * name or title, its codes (ISRC, UPC, catalog number), genre, date, label, place.
 */
const TITLES = [
  'name', 'stage_name', 'release_title', 'track_title', 'catalog_number', 'isrc_code', 'upc_code',
  'genre', 'release_date', 'label', 'recording_year', 'subgenre', 'city', 'country', 'is_signed',
];

/**
 * The order a table shows a collection's fields in when it cannot show them all: key and title
 * fields first, plain fields next, timestamps, then JSON documents.
 */
export function displayColumns(table: TableInfo): string[] {
  const rank = (name: string, type: string): number => {
    if (table.primaryKey.includes(name)) return 0;
    const t = TITLES.indexOf(name);
    if (t >= 0) return 1 + t / 100;
    const k = typeKind(type);
    return k === 'json' ? 5 : k === 'timestamp' ? 4 : 3;
  };
  return table.fields
    .map((f, i) => ({ f, r: rank(f.name, f.type) + i / 1000 }))
    .sort((a, b) => a.r - b.r)
    .map(({ f }) => f.name);
}

export interface WriteOptions {
  /** The collection the rows come from (column order and types for tables and CSV headers). */
  table?: TableInfo;
  /** Whether the request named its own columns (then the rows' own key order wins). */
  selected?: boolean;
  /** One record: an object in JSON/YAML, a field/value view in a table. */
  single?: boolean;
  format?: FormatName;
}

/** Streams rows to stdout in the chosen format; returns how many were written. */
export async function writeRows(ctx: Context, rows: Iterable<Row> | AsyncIterable<Row>, opts: WriteOptions = {}): Promise<number> {
  const format = opts.format ?? (await outputFormat(ctx));
  const columns = opts.table && !opts.selected ? (format === 'table' ? displayColumns(opts.table) : opts.table.fields.map((f) => f.name)) : undefined;
  const writer = await createWriter(format, {
    out: ctx.io.stdout,
    columns,
    columnTypes: opts.table ? Object.fromEntries(opts.table.fields.map((f) => [f.name, f.type])) : undefined,
    columnDefaults: opts.table ? Object.fromEntries(opts.table.fields.map((f) => [f.name, f.default])) : undefined,
    single: opts.single,
    now: ctx.clock.now(),
    notice: (m) => void ctx.note(ctx.style().dim(m)),
  });
  let n = 0;
  for await (const row of rows) {
    // Nobody reads any more (`| head`): stop fetching further pages.
    if (ctx.io.stdout.closed) break;
    await writer.write(row);
    n++;
  }
  await writer.end();
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
