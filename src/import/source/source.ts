import { constants, createReadStream, openSync } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { Socket } from 'node:net';
import { type Readable, Transform } from 'node:stream';
import { type ByteCheck, MAX_RECORD_BYTES, tooLong } from '../readers/input.js';
import { JsonArraySplitter } from '../readers/json-splitter.js';
import { detectFormat, openReader } from '../readers/index.js';
import { type InputEncoding, resolveEncoding, toUtf8, Utf8Check } from '../readers/decode.js';
import { checkDelimiterFlag, readDelimiter } from '../readers/delimiter.js';
import { spoolToFile } from './spool.js';
import { ImportError, type InputFormat, type RecordReader } from '../types.js';

/**
 * The source stage: where the bytes come from. A regular file is read where it is (twice: the
 * duplicate scan, then the load); stdin, a FIFO or a device is copied to a temporary file first
 * (`streamed`), since it can be read only once. The format reader (readers/index.ts) turns the
 * bytes into records with line numbers.
 */
export interface Source {
  /** What the user named (`-` for stdin). */
  input: string;
  /** The file the passes read (the spool for a streamed input). */
  path: string;
  format: InputFormat;
  /** stdin, a FIFO or a device: spooled, and fingerprinted by content only. */
  streamed: boolean;
  totalBytes: number;
  /** The spool was cut short by a stop request: there are no records to read. */
  interrupted: boolean;
  cleanup(): Promise<void>;
  /** The file holding the input's own bytes (the checkpoint's fingerprint): `path` unless it was transcoded to UTF-8. */
  rawPath: string;
  /** How the input's bytes are decoded (null for xlsx); `path` then holds UTF-8 without a BOM. */
  encoding: InputEncoding | null;
  /** CSV's field delimiter (`,` for other formats). */
  delimiter: string;
  /** xlsx: the sheet to read (default the first). */
  sheet?: string;
  /** xlsx: the row holding the header (default the first row with cells). */
  headerRow?: number;
  /** The import's stop: a reader ends its records early when it fires (xlsx: in every phase). */
  signal?: AbortSignal;
  /**
   * The file is read as UTF-8 as it is and nothing has checked that it is: the scan pass checks
   * every byte as it reads them (`byteCheck`), before anything is sent.
   */
  unchecked: boolean;
}

/** How to read the input's bytes: the import command's `--encoding`, `--delimiter`, `--sheet` and `--header-row`. */
export interface SourceFlags {
  encoding?: string;
  delimiter?: string;
  sheet?: string;
  headerRow?: number;
}

/** A readable over a FIFO that a stop can cancel (a blocking open or read of a FIFO could not be). */
function openStream(path: string, fifo: boolean): Readable {
  if (!fifo) return createReadStream(path);
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  return new Socket({ fd, readable: true, writable: false });
}

/**
 * Watches a stream on its way to the spool for a record over MAX_RECORD_BYTES: a line for the
 * line-based formats, an element for JSON (found by the splitter, the texts thrown away).
 */
function recordBound(path: string, format: InputFormat): Transform {
  let sinceLineEnd = 0;
  let line = 1;
  // JSON: the splitter finds element ends; malformed JSON is left for the reader to report
  let splitter = format === 'json' ? new JsonArraySplitter(MAX_RECORD_BYTES) : null;
  const decoder = new TextDecoder();
  const check = (chunk: Buffer): void => {
    if (splitter) {
      try {
        splitter.push(decoder.decode(chunk, { stream: true }));
      } catch (err) {
        if (/longer than/.test((err as Error).message)) throw new ImportError(`${path}: ${(err as Error).message}`, 'usage');
        splitter = null; // stop checking
      }
      return;
    }
    const lf = chunk.lastIndexOf(10);
    if (lf >= 0) {
      for (let i = chunk.indexOf(10); i >= 0 && i <= lf; i = chunk.indexOf(10, i + 1)) line++;
      sinceLineEnd = chunk.length - lf - 1;
    } else sinceLineEnd += chunk.length;
    if (sinceLineEnd > MAX_RECORD_BYTES) throw tooLong(path, 'the line', line);
  };
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      try {
        if (format !== 'json' || splitter) check(chunk);
        done(null, chunk);
      } catch (err) {
        done(err as Error);
      }
    },
  });
}

/** What kind of file a path names; a usage error for none or a directory. */
async function kindOf(path: string): Promise<'file' | 'fifo' | 'device'> {
  const cannot = (err: NodeJS.ErrnoException): never => {
    const why = err.code === 'ENOENT' ? 'no such file' : err.code === 'EACCES' ? 'permission denied (it is not readable by this user)' : err.message;
    throw new ImportError(`cannot read ${path}: ${why}`, 'usage');
  };
  const s = await stat(path).catch(cannot);
  if (s.isDirectory()) throw new ImportError(`${path} is a directory: name a file to import (seed imports a directory of files)`, 'usage');
  // a file this user may not read is said here, before any of it is read
  await access(path, constants.R_OK).catch(cannot);
  if (s.isFile()) return 'file';
  return s.isFIFO() ? 'fifo' : 'device';
}

/** Opens the input: checks it, spools what can be read only once, and says its format and size. */
export async function openSource(opts: { input: string; format?: string; stdin?: Readable; signal?: AbortSignal } & SourceFlags): Promise<Source> {
  const format = detectFormat(opts.input, opts.format);
  checkDelimiterFlag(format, opts);
  if (opts.headerRow !== undefined && format !== 'xlsx') throw new ImportError(`--header-row is for workbooks (.xlsx), not ${format}: a CSV file's header is its first line`, 'usage');
  const kind = opts.input === '-' ? 'stdin' : await kindOf(opts.input);
  let raw: Omit<Source, 'rawPath' | 'encoding' | 'delimiter' | 'sheet' | 'headerRow' | 'signal' | 'unchecked'>;
  if (kind === 'file') {
    const totalBytes = (await stat(opts.input)).size;
    raw = { input: opts.input, path: opts.input, format, streamed: false, totalBytes, interrupted: false, cleanup: async () => {} };
  } else {
    if (kind === 'stdin' && !opts.stdin) throw new ImportError('no stdin to read', 'usage');
    const stream = kind === 'stdin' ? (opts.stdin as Readable) : openStream(opts.input, kind === 'fifo');
    const spool = await spoolToFile(stream, format, { signal: opts.signal, check: recordBound(opts.input === '-' ? 'stdin' : opts.input, format) });
    if (kind !== 'stdin') stream.destroy();
    const totalBytes = spool.complete ? (await stat(spool.path)).size : 0;
    raw = { input: opts.input, path: spool.path, format, streamed: true, totalBytes, interrupted: !spool.complete, cleanup: spool.cleanup };
  }
  const source: Source = { ...raw, rawPath: raw.path, encoding: null, delimiter: ',', sheet: opts.sheet, headerRow: opts.headerRow, signal: opts.signal, unchecked: false };
  if (raw.interrupted || format === 'xlsx') return source;
  try {
    await decodeSource(source, opts.encoding, opts.signal);
    if (format === 'csv') source.delimiter = await readDelimiter(source.path, opts.input, opts.delimiter);
  } catch (err) {
    await source.cleanup();
    throw err;
  }
  return source;
}

/**
 * The decoding step: the encoding is decided (a BOM, else `--encoding`, else UTF-8,
 * src/import/readers/decode.ts); input that is not plain UTF-8 is transcoded as a stream into a
 * UTF-8 spool, so every later stage (the byte-level COPY path included) reads UTF-8 only, and
 * UTF-8 (with or without a BOM, as Excel's "CSV UTF-8" writes) is read where it is, at full speed,
 * and checked by the scan pass as it reads it (`unchecked`).
 */
async function decodeSource(source: Source, flag: string | undefined, signal?: AbortSignal): Promise<void> {
  const enc = await resolveEncoding(source.path, flag, source.input === '-' ? 'stdin' : source.input);
  source.encoding = enc;
  // UTF-8 is read where it is, a BOM too (the readers and the byte path skip it)
  if (enc.encoding === 'utf-8') {
    source.unchecked = true;
    return;
  }
  const spool = await spoolToFile(toUtf8(createReadStream(source.path), enc), source.format, { signal });
  const previous = source.cleanup;
  source.cleanup = async () => {
    await spool.cleanup();
    await previous();
  };
  source.path = spool.path;
  if (!spool.complete) source.interrupted = true;
  else source.totalBytes = (await stat(spool.path)).size;
}

/** A reader of the source's records (the format registry picks it); `check` sees every byte it reads; `chunkBytes`: CSV's read size. */
export function sourceRecords(source: Source, check?: ByteCheck, chunkBytes?: number): RecordReader {
  const { delimiter, sheet, headerRow, signal } = source;
  return openReader(source.path, source.format, { delimiter, sheet, headerRow, signal, name: source.input === '-' ? 'stdin' : source.input, check, chunkBytes });
}

/** The UTF-8 check of a pass over a source that has not been checked (the scan's), else null. */
export function byteCheck(source: Source): ByteCheck | null {
  return source.unchecked ? new Utf8Check(source.path, source.input === '-' ? 'stdin' : source.input) : null;
}
