import type { RecordReader, SourceRecord } from '../types.js';
import { type ByteCheck, type CountedInput, openCounted } from './input.js';

/**
 * The one scaffold of the self-describing readers (JSON, NDJSON, YAML): the input is opened and
 * its bytes counted, `split` cuts its text into pieces (an array element, a line, a YAML item) as
 * it streams, and `decode` turns each piece into its records, numbered in input order. A piece
 * that cannot be read becomes a record with `error` (rejected alone), never a failed import.
 * A new self-describing format is a `split` and a `decode` (see src/import/README.md).
 */
export function pieceReader<P>(
  path: string,
  split: (input: CountedInput) => AsyncIterable<P>,
  decode: (piece: P, next: () => number) => Iterable<SourceRecord>,
  /** Checks every byte as it is read (the scan pass's UTF-8 check). */
  check?: ByteCheck,
): RecordReader {
  const input = openCounted(path, undefined, check);
  return {
    headers: null,
    bytesRead: input.bytesRead,
    async *records(): AsyncGenerator<SourceRecord> {
      let index = 0;
      const next = () => index++;
      for await (const piece of split(input)) yield* decode(piece, next);
    },
  };
}
