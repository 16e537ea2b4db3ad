import { csvWriter, tsvWriter } from './delimited.js';
import { jsonWriter, ndjsonWriter } from './json.js';
import { tableWriter } from './table.js';
import type { FormatName, PageWriter, WriterOptions } from './types.js';
import { yamlWriter } from './yaml.js';

export * from './types.js';

const WRITERS: Readonly<Record<FormatName, (opts: WriterOptions) => PageWriter>> = {
  table: tableWriter,
  json: jsonWriter,
  ndjson: ndjsonWriter,
  csv: csvWriter,
  tsv: tsvWriter,
  yaml: yamlWriter,
};

/** The writer for a format: every one takes a page of rows at a time (list, get, export). */
export function createWriter(format: FormatName, opts: WriterOptions): PageWriter {
  return WRITERS[format](opts);
}

/** The format when none is asked for: a table for people, JSON for programs. */
export function defaultFormat(stdoutIsTTY: boolean): FormatName {
  return stdoutIsTTY ? 'table' : 'json';
}
