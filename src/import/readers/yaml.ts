import type * as Yaml from 'yaml';
import type { RecordReader, SourceRecord } from '../types.js';
import { type CountedInput, type ReaderOptions, textLines } from './input.js';
import { pieceReader } from './scaffold.js';

interface Chunk {
  kind: 'item' | 'doc';
  line: number;
  lines: string[];
}

/**
 * The YAML library, loaded by the first YAML read (yamlChunks): 25 ms to load, which every other
 * import (a CSV file's) would pay before its first row, since this reader is in the format registry.
 */
let yaml: typeof Yaml | null = null;

/** Parses YAML, but keeps a number written with leading zeros (`upc: 001234`) as its text. */
function parseKeepingDigits(text: string): unknown {
  const { parseDocument, visit, isScalar } = yaml!;
  const doc = parseDocument(text, { uniqueKeys: false });
  if (doc.errors.length) throw doc.errors[0];
  visit(doc, {
    Scalar(_key, node) {
      if (isScalar(node) && typeof node.value === 'number' && node.source !== undefined && node.source !== String(node.value)) {
        node.value = node.source;
      }
    },
  });
  return doc.toJS({ maxAliasCount: 100 });
}

function toRecords(chunk: Chunk, next: () => number): SourceRecord[] {
  const text = chunk.lines.join('\n');
  if (text.trim() === '' || /^(\s*(#.*)?)*$/.test(text)) return [];
  let value: unknown;
  try {
    value = parseKeepingDigits(text);
  } catch (err) {
    return [{ index: next(), line: chunk.line, values: { _raw: text }, error: `invalid YAML: ${(err as Error).message.split('\n')[0]}` }];
  }
  if (value === null || value === undefined) return [];
  const items = chunk.kind === 'item' || Array.isArray(value) ? (Array.isArray(value) ? value : [value]) : [value];
  return items.map((v) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? { index: next(), line: chunk.line, values: v as Record<string, unknown> }
      : { index: next(), line: chunk.line, values: { _raw: JSON.stringify(v) }, error: 'expected a YAML mapping (one record)' },
  );
}

/** Cuts the text into top-level items (`- …` at column 0) and documents (`---`). */
async function* yamlChunks(input: CountedInput, path: string): AsyncGenerator<Chunk> {
  yaml ??= await import('yaml');
  let current: Chunk = { kind: 'doc', line: 1, lines: [] };
  for await (const { text, line } of textLines(input.stream, path)) {
    if (text.startsWith('---') && (text.length === 3 || /\s/.test(text[3]))) {
      yield current;
      const rest = text.slice(3).trim();
      current = { kind: 'doc', line, lines: rest && !rest.startsWith('#') ? [rest] : [] };
      if (current.lines.length === 0) current.line = line + 1;
      continue;
    }
    if (text === '...' || text.startsWith('%')) continue;
    if (text.startsWith('-') && (text.length === 1 || text[1] === ' ' || text[1] === '\t')) {
      yield current;
      current = { kind: 'item', line, lines: [text] };
      continue;
    }
    if (current.lines.length === 0 && (text.trim() === '' || text.trimStart().startsWith('#'))) {
      current.line = line + 1;
      continue;
    }
    current.lines.push(text);
  }
  yield current;
}

/**
 * Streams YAML records: a top-level block sequence (`- id: …`) item by item, or a multi-document
 * stream (`---`) with one mapping (or a sequence of mappings) per document. Items are cut at
 * column-0 `- ` and `---` lines and each is parsed on its own, so memory stays flat; the price is
 * that an alias cannot refer to an anchor in another item.
 * @example for await (const r of yamlReader('rows.yaml').records()) r.values // { id: '…' }
 */
export function yamlReader(path: string, opts: ReaderOptions = {}): RecordReader {
  return pieceReader(path, (input) => yamlChunks(input, path), toRecords, opts.check);
}
