import { extname } from 'node:path';
import { INPUT_FORMATS, ImportError, type InputFormat, type RecordReader } from '../types.js';
import { csvReader } from './csv.js';
import { jsonReader, ndjsonReader } from './json.js';
import { yamlReader } from './yaml.js';

const BY_EXTENSION: Record<string, InputFormat> = {
  '.csv': 'csv',
  '.json': 'json',
  '.ndjson': 'ndjson',
  '.jsonl': 'ndjson',
  '.yaml': 'yaml',
  '.yml': 'yaml',
};

/**
 * The format of an input: `--format` when given, else the file's extension.
 * @example detectFormat('tracks.jsonl') // 'ndjson'
 */
export function detectFormat(path: string, explicit?: string): InputFormat {
  if (explicit) {
    const f = explicit.toLowerCase();
    if ((INPUT_FORMATS as readonly string[]).includes(f)) return f as InputFormat;
    if (f === 'jsonl') return 'ndjson';
    if (f === 'yml') return 'yaml';
    throw new ImportError(`unknown format "${explicit}": use one of ${INPUT_FORMATS.join(', ')}`, 'usage');
  }
  if (path === '-') throw new ImportError(`reading stdin needs --format (${INPUT_FORMATS.join(', ')})`, 'usage');
  const ext = extname(path).toLowerCase();
  const f = BY_EXTENSION[ext];
  if (!f) throw new ImportError(`cannot tell the format of ${path} from its extension: pass --format (${INPUT_FORMATS.join(', ')})`, 'usage');
  return f;
}

/** Opens a streaming reader for a file in the given format. */
export function openReader(path: string, format: InputFormat): RecordReader {
  switch (format) {
    case 'csv':
      return csvReader(path);
    case 'json':
      return jsonReader(path);
    case 'ndjson':
      return ndjsonReader(path);
    case 'yaml':
      return yamlReader(path);
  }
}
