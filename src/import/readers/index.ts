import { extname } from 'node:path';
import { INPUT_FORMATS, ImportError, type InputFormat, type RecordReader } from '../types.js';
import { csvReader } from './csv.js';
import type { ReaderOptions } from './input.js';
import { jsonReader, ndjsonReader } from './json.js';
import { xlsxReader } from './xlsx.js';
import { yamlReader } from './yaml.js';

/** How the source stage asks a reader to read (src/import/readers/input.ts). */
export type { ReaderOptions } from './input.js';

/** One input format: the file extensions that name it and how to open a reader over a file. */
export interface ReaderEntry {
  extensions: readonly string[];
  open(path: string, opts: ReaderOptions): RecordReader;
}

/**
 * The format registry: a new input format is one reader module plus one line here (and its name
 * in INPUT_FORMATS, src/import/types.ts). See src/import/README.md.
 */
export const READERS: Record<InputFormat, ReaderEntry> = {
  csv: { extensions: ['.csv', '.tsv', '.tab'], open: (path, o) => csvReader(path, o.delimiter, o.name, o.check, o.chunkBytes) },
  json: { extensions: ['.json'], open: jsonReader },
  ndjson: { extensions: ['.ndjson', '.jsonl'], open: ndjsonReader },
  yaml: { extensions: ['.yaml', '.yml'], open: yamlReader },
  xlsx: { extensions: ['.xlsx'], open: (path, o) => xlsxReader(path, o.sheet, o.name, { headerRow: o.headerRow, signal: o.signal }) },
};

/** Other names `--format` accepts. */
const ALIASES: Record<string, InputFormat> = { jsonl: 'ndjson', yml: 'yaml' };

/**
 * The format of an input: `--format` when given, else the file's extension.
 * @example detectFormat('tracks.jsonl') // 'ndjson'
 */
export function detectFormat(path: string, explicit?: string): InputFormat {
  if (explicit) {
    const f = explicit.toLowerCase();
    if ((INPUT_FORMATS as readonly string[]).includes(f)) return f as InputFormat;
    if (ALIASES[f]) return ALIASES[f];
    throw new ImportError(`unknown format "${explicit}": use one of ${INPUT_FORMATS.join(', ')}`, 'usage');
  }
  if (path === '-') throw new ImportError(`reading stdin needs --format (${INPUT_FORMATS.join(', ')})`, 'usage');
  const ext = extname(path).toLowerCase();
  const f = INPUT_FORMATS.find((name) => READERS[name].extensions.includes(ext));
  if (!f) throw new ImportError(`cannot tell the format of ${path} from its extension: pass --format (${INPUT_FORMATS.join(', ')})`, 'usage');
  return f;
}

/** Opens a streaming reader for a file in the given format. */
export function openReader(path: string, format: InputFormat, opts: ReaderOptions = {}): RecordReader {
  return READERS[format].open(path, opts);
}
