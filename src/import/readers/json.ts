import type { RecordReader, SourceRecord } from '../types.js';
import { ImportError } from '../types.js';
import { openCounted, textChunks, textLines } from './input.js';
import { JsonArraySplitter } from './json-splitter.js';

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

/**
 * Streams a JSON array of objects element by element (never the whole file in memory); also
 * accepts a file of concatenated objects.
 * @example for await (const r of jsonReader('rows.json').records()) r.values // { id: '…' }
 */
export function jsonReader(path: string): RecordReader {
  const input = openCounted(path);
  return {
    headers: null,
    bytesRead: input.bytesRead,
    async *records(): AsyncGenerator<SourceRecord> {
      const splitter = new JsonArraySplitter();
      let index = 0;
      try {
        for await (const chunk of textChunks(input.stream)) {
          for (const el of splitter.push(chunk)) yield jsonRecord(el.text, index++, el.line);
        }
        for (const el of splitter.end()) yield jsonRecord(el.text, index++, el.line);
      } catch (err) {
        if (err instanceof SyntaxError) throw new ImportError(`${path}: ${err.message}`);
        throw err;
      }
    },
  };
}

/**
 * Streams NDJSON: one object per line, blank lines skipped; a bad line is one rejected record.
 * @example for await (const r of ndjsonReader('rows.ndjson').records()) r.line // 1, 2, …
 */
export function ndjsonReader(path: string): RecordReader {
  const input = openCounted(path);
  return {
    headers: null,
    bytesRead: input.bytesRead,
    async *records(): AsyncGenerator<SourceRecord> {
      let index = 0;
      for await (const { text, line } of textLines(input.stream)) {
        if (text.trim() === '') continue;
        yield jsonRecord(text, index++, line);
      }
    },
  };
}
