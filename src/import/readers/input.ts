import { createReadStream } from 'node:fs';
import { Transform, type Readable } from 'node:stream';
import { ImportError } from '../types.js';

/**
 * The largest record (a CSV record, an NDJSON or YAML line, a JSON element) an import takes: the
 * service's default body limit, 64 MiB. A longer one is refused with a message instead of being
 * held in memory (`/dev/zero`, a binary file, the wrong --format).
 */
export const MAX_RECORD_BYTES = 64 * 1024 * 1024;
/** The longest CSV header row (1 MiB): a longer "header" means the file is not CSV with a header. */
export const MAX_HEADER_BYTES = 1024 * 1024;

/**
 * The start of a text that cannot be shown whole, escaped (control characters visible).
 * @example clip('\u0000'.repeat(1e6)) // '"\u0000\u0000…" (1000000 characters)'
 */
export function clip(text: string, chars = 40): string {
  if (text.length <= chars) return JSON.stringify(text);
  return `${JSON.stringify(text.slice(0, chars)).slice(0, -1)}…" (${text.length.toLocaleString('en-US')} characters)`;
}

/** The error for a record over MAX_RECORD_BYTES: bad input (exit 2), as a malformed file is. */
export function tooLong(path: string, what: string, line: number): ImportError {
  return new ImportError(
    `${path}: ${what} starting at line ${line} is longer than 64 MiB, the largest record an import takes (the service's body limit): is this the right file and --format?`,
    'usage',
  );
}

/** A byte stream plus a running count of the bytes that went through it. */
export interface CountedInput {
  stream: Readable;
  bytesRead(): number;
}

/** How the source stage asks a reader to read: CSV's delimiter, xlsx's sheet, the input's name for messages. */
export interface ReaderOptions {
  delimiter?: string;
  sheet?: string;
  /** xlsx: the sheet row holding the header (`--header-row`; default the first row with cells). */
  headerRow?: number;
  /** Ends a reader's records early (xlsx: in every phase of reading a workbook). */
  signal?: AbortSignal;
  name?: string;
  /** Checks every byte as it is read (the scan pass's UTF-8 check); text formats only. */
  check?: ByteCheck;
  /** CSV: bytes read at a time (64 KiB); a few KiB when only the header is wanted. */
  chunkBytes?: number;
}

/** Checks the bytes of a pass as they are read (the import's scan pass gives a UTF-8 check). */
export interface ByteCheck {
  push(chunk: Uint8Array): Promise<void>;
  end(): Promise<void>;
}

/**
 * Opens a file (never `-`: stdin is spooled to a file first) and counts bytes as they are read;
 * with `check`, every byte goes through it on the way (a failed check fails the stream).
 */
export function openCounted(path: string, highWaterMark = 256 * 1024, check?: ByteCheck): CountedInput {
  let bytes = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      bytes += chunk.length;
      if (!check) return done(null, chunk);
      check.push(chunk).then(() => done(null, chunk), done);
    },
    flush(done) {
      if (!check) return done();
      check.end().then(() => done(), done);
    },
  });
  const source = createReadStream(path, { highWaterMark });
  source.on('error', (err) => counter.destroy(err));
  return { stream: source.pipe(counter), bytesRead: () => bytes };
}

/** Yields the input's text in chunks, decoding UTF-8 across chunk boundaries (the place for another encoding). */
export async function* textChunks(stream: Readable): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8');
  for await (const chunk of stream) {
    const text = decoder.decode(chunk as Buffer, { stream: true });
    if (text) yield text;
  }
  const rest = decoder.decode();
  if (rest) yield rest;
}

/** Yields lines with their 1-based numbers (`\n` or `\r\n` endings), without the terminator; a line over MAX_RECORD_BYTES throws. */
export async function* textLines(stream: Readable, path = 'the input'): AsyncGenerator<{ text: string; line: number }> {
  let carry = '';
  let line = 1;
  for await (const chunk of textChunks(stream)) {
    const text = carry + chunk;
    let from = 0;
    for (let nl = text.indexOf('\n', from); nl >= 0; nl = text.indexOf('\n', from)) {
      const end = nl > from && text.charCodeAt(nl - 1) === 13 ? nl - 1 : nl;
      yield { text: text.slice(from, end), line: line++ };
      from = nl + 1;
    }
    carry = text.slice(from);
    if (carry.length > MAX_RECORD_BYTES) throw tooLong(path, 'the line', line);
  }
  if (carry) yield { text: carry.endsWith('\r') ? carry.slice(0, -1) : carry, line };
}
