import type { RecordReader, SourceRecord } from '../types.js';
import { ImportError } from '../types.js';
import { MAX_RECORD_BYTES, type ReaderOptions, textChunks, textLines } from './input.js';
import { type JsonElement, JsonArraySplitter } from './json-splitter.js';
import { pieceReader } from './scaffold.js';

/** Parses one element's text into a record; a malformed or non-object element becomes a record with `error`. */
export function jsonRecord(text: string, index: number, line: number): SourceRecord {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { index, line, values: { _raw: text }, error: `invalid JSON: ${(err as Error).message}` };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { index, line, values: { _raw: text }, error: `expected a JSON object, found ${Array.isArray(value) ? 'an array' : JSON.stringify(value)}` };
  }
  return { index, line, values: value as Record<string, unknown> };
}

const decodeJson = (el: JsonElement, next: () => number): SourceRecord[] => [jsonRecord(el.text, next(), el.line)];

/**
 * Streams a JSON array of objects element by element (never the whole file in memory); also
 * accepts a file of concatenated objects.
 * @example for await (const r of jsonReader('rows.json').records()) r.values // { id: '…' }
 */
export function jsonReader(path: string, opts: ReaderOptions = {}): RecordReader {
  return pieceReader(
    path,
    async function* (input) {
      const splitter = new JsonArraySplitter(MAX_RECORD_BYTES);
      try {
        for await (const chunk of textChunks(input.stream)) yield* splitter.push(chunk);
        yield* splitter.end();
      } catch (err) {
        // malformed JSON, or an element over the record limit: the input is wrong (exit 2)
        if (err instanceof SyntaxError) throw new ImportError(`${path}: ${err.message}`, 'usage');
        throw err;
      }
    },
    decodeJson,
    opts.check,
  );
}

/**
 * Streams NDJSON: one object per line, blank lines skipped; a bad line is one rejected record.
 * @example for await (const r of ndjsonReader('rows.ndjson').records()) r.line // 1, 2, …
 */
export function ndjsonReader(path: string, opts: ReaderOptions = {}): RecordReader {
  return pieceReader(
    path,
    async function* (input) {
      for await (const l of textLines(input.stream, path)) if (l.text.trim() !== '') yield l;
    },
    decodeJson,
    opts.check,
  );
}
