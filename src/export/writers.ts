import type { ColumnDef, TableDef } from '../schema/catalog.js';
import { knownDefault } from '../schema/conventions.js';
import { csvHeader, csvRows, type CsvColumn } from '../format/csv-dialect.js';
import type { InputFormat } from '../format/types.js';

/** Where export text goes (the CLI's Output, a file). */
export interface TextSink {
  /** Text, or UTF-8 bytes written as they are (a file) or decoded (the CLI's Output). */
  write(chunk: string | Uint8Array): Promise<void>;
}

/** Streams rows into one document of a format; `end()` closes it. */
export interface ExportWriter {
  write(rows: Record<string, unknown>[]): Promise<void>;
  end(): Promise<void>;
}

export interface WriterOptions {
  table: TableDef;
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

/** A column as the CSV dialect sees it (src/format/csv-dialect.ts): its type, and whether an empty cell would take a default. */
export function csvColumn(name: string, col: ColumnDef | undefined, type?: string): CsvColumn {
  return { name, type: col?.type ?? type, hasDefault: col !== undefined && knownDefault(col) !== null };
}

/**
 * A writer for csv, json (one array), ndjson or yaml (one sequence), each re-importable by
 * `catalog <collection> import` into the same rows.
 * @example const w = exportWriter('csv', out, { table }); await w.write(rows); await w.end();
 */
export function exportWriter(format: InputFormat, out: TextSink, opts: WriterOptions): ExportWriter {
  const columns = opts.columns ?? opts.table.columns.map((c) => c.name);
  const byName = new Map(opts.table.columns.map((c) => [c.name, c]));
  let count = 0;
  switch (format) {
    case 'csv': {
      const lines = csvRows(columns.map((name) => csvColumn(name, byName.get(name), opts.extraTypes?.[name])), opts.nullToken, opts.delimiter);
      let headed = false;
      const head = async () => {
        if (!headed) await out.write(csvHeader(columns, opts.delimiter));
        headed = true;
      };
      return {
        async write(rows) {
          await head();
          if (rows.length) await out.write(lines(rows));
        },
        end: head,
      };
    }
    case 'json':
      return {
        async write(rows) {
          if (!rows.length) return;
          const text = rows.map((r) => JSON.stringify(r)).join(',\n');
          await out.write(`${count === 0 ? '[\n' : ',\n'}${text}`);
          count += rows.length;
        },
        async end() {
          await out.write(count === 0 ? '[]\n' : '\n]\n');
        },
      };
    case 'ndjson':
      return {
        async write(rows) {
          if (rows.length) await out.write(`${rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
        },
        async end() {},
      };
    case 'yaml':
      return {
        async write(rows) {
          if (!rows.length) return;
          count += rows.length;
          // loaded here only: the yaml package costs ≈70 ms to load, which every CSV export paid
          const { stringify } = await import('yaml');
          await out.write(stringify(rows, { lineWidth: 0, aliasDuplicateObjects: false }));
        },
        async end() {
          if (count === 0) await out.write('[]\n');
        },
      };
    case 'xlsx':
      // a zip, not text: written by export/xlsx-writer.ts (exportTable picks it)
      throw new Error('xlsx exports are written by xlsxWriter (src/export/xlsx-writer.ts)');
  }
}
