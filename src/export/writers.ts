import type { ColumnDef, TableDef } from '../schema/catalog.js';
import { knownDefault } from '../schema/conventions.js';
import type { CsvColumn } from '../format/csv-dialect.js';
import type { TextSink, WriterOptions } from '../format/types.js';

export type { TextSink } from '../format/types.js';

/** A column as the CSV dialect sees it (src/format/csv-dialect.ts): its type, and whether an empty cell would take a default. */
export function csvColumn(name: string, col: ColumnDef | undefined, type?: string): CsvColumn {
  return { name, type: col?.type ?? type, hasDefault: col !== undefined && knownDefault(col) !== null };
}

export interface ExportWriterOptions {
  /** Column order (CSV header); default every column of the table. */
  columns?: string[];
  /**
   * CSV text for SQL null. Given: every null is written as it. Not given: a null is an empty cell
   * where an empty cell imports as null anyway (no default: dates, jsonb, foreign keys), and `\N`
   * where an empty cell would take a default (text '', boolean false), so the file imports back
   * to exactly the same rows. The dialect: src/format/csv-dialect.ts.
   */
  nullToken?: string;
  /** CSV's field separator (`,`; a tab for .tsv). */
  delimiter?: string;
  /** PostgreSQL types of columns that are not the table's own (flattened embeds: `labels.created`). */
  extraTypes?: Record<string, string>;
}

/**
 * The format writers' options (src/format/) for an export of `table`: its columns fixed (the
 * header whatever rows carry), types and defaults from the schema, so each format is
 * re-importable by `catalog <collection> import` into the same rows.
 * @example const w = createWriter('csv', exportWriterOptions(out, table)); await w.write(rows); await w.end();
 */
export function exportWriterOptions(out: TextSink, table: TableDef, opts: ExportWriterOptions = {}): WriterOptions {
  const columns = opts.columns ?? table.columns.map((c) => c.name);
  const byName = new Map(table.columns.map((c) => [c.name, c]));
  const csv = columns.map((name) => csvColumn(name, byName.get(name), opts.extraTypes?.[name]));
  return {
    out,
    columns,
    fixedColumns: true,
    columnTypes: Object.fromEntries(csv.filter((c) => c.type !== undefined).map((c) => [c.name, c.type!])),
    columnDefaults: Object.fromEntries(csv.filter((c) => c.hasDefault).map((c) => [c.name, true])),
    nullToken: opts.nullToken,
    delimiter: opts.delimiter,
  };
}
