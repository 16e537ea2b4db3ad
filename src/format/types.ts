import type { Output } from '../io/streams.js';

/** Where a document goes (the CLI's output, a file): text, or UTF-8 bytes written as they are (a file) or decoded (the CLI's output). */
export interface TextSink {
  write(chunk: string | Uint8Array): Promise<void>;
}

/** A record as it comes from the service (parsed JSON object). */
export type Row = Record<string, unknown>;

/** The file formats import reads and export writes (each re-importable). */
export const INPUT_FORMATS = ['csv', 'json', 'ndjson', 'yaml', 'xlsx'] as const;
export type InputFormat = (typeof INPUT_FORMATS)[number];

/** The output formats, in the order help lists them. */
export const FORMATS = ['table', 'json', 'ndjson', 'csv', 'tsv', 'yaml'] as const;
export type FormatName = (typeof FORMATS)[number];

/** Receives rows a page at a time; `end()` finishes the document. */
export interface PageWriter {
  write(rows: Row[]): Promise<void>;
  end(): Promise<void>;
}

export interface WriterOptions {
  /** A terminal, pipe or pager (Output: a table needs one) or any sink (export's file or stdout). */
  out: Output | TextSink;
  /** Column order to use when known up front (CSV header of an empty result, table columns). */
  columns?: string[];
  /** PostgreSQL type per column (`timestamp with time zone` → relative dates in a terminal table). */
  columnTypes?: Record<string, string>;
  /** Column defaults as the schema shows them (CSV writes a null as `\\N` where a column has one). */
  columnDefaults?: Record<string, unknown>;
  /** The document's columns are `columns`, whatever keys rows carry (export); else the first row's keys head CSV and TSV (list). */
  fixedColumns?: boolean;
  /** CSV text for SQL null (`--null`); see src/format/csv-dialect.ts. */
  nullToken?: string;
  /** CSV's field separator (default `,`). */
  delimiter?: string;
  /** One record, not a list: `get` prints an object (JSON/YAML) or a field/value view (table). */
  single?: boolean;
  /** Current time in ms (relative dates). */
  now?: number;
  /** Rows a table sizes its columns by before printing (default LAYOUT_ROWS; a terminal's first page is all there is). */
  firstRows?: number;
  /** Where writers report things that are not data (hidden columns). */
  notice?: (message: string) => void;
}

/** True when `s` names a format. */
export function isFormat(s: string): s is FormatName {
  return (FORMATS as readonly string[]).includes(s);
}

/** A cell's text for the text formats: null → '', objects → JSON, everything else as written. */
export function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}
