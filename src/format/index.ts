import { csvWriter, tsvWriter } from './delimited.js';
import { jsonWriter, ndjsonWriter } from './json.js';
import { tableWriter } from './table.js';
import type { FormatName, PageWriter, WriterOptions } from './types.js';
import { yamlWriter } from './yaml.js';

export * from './types.js';

/** The writer for a format: every one takes a page of rows at a time (list, get, export). */
export function createWriter(format: FormatName, opts: WriterOptions): PageWriter {
  switch (format) {
    case 'table':
      return tableWriter(opts);
    case 'json':
      return jsonWriter(opts);
    case 'ndjson':
      return ndjsonWriter(opts);
    case 'csv':
      return csvWriter(opts);
    case 'tsv':
      return tsvWriter(opts);
    case 'yaml':
      return yamlWriter(opts);
  }
}

/** The format when none is asked for: a table for people, JSON for programs. */
export function defaultFormat(stdoutIsTTY: boolean): FormatName {
  return stdoutIsTTY ? 'table' : 'json';
}
