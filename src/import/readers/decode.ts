import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { isUtf8 } from 'node:buffer';
import { Transform, type Readable } from 'node:stream';
import iconv from 'iconv-lite';
import { ImportError } from '../types.js';

/** The encodings `--encoding` accepts (canonical names). */
export const ENCODINGS = ['utf-8', 'windows-1252', 'latin1', 'utf-16le', 'utf-16be'] as const;
export type Encoding = (typeof ENCODINGS)[number];

const ALIASES: Record<string, Encoding> = {
  'utf-8': 'utf-8',
  utf8: 'utf-8',
  'windows-1252': 'windows-1252',
  cp1252: 'windows-1252',
  win1252: 'windows-1252',
  latin1: 'latin1',
  'latin-1': 'latin1',
  'iso-8859-1': 'latin1',
  iso88591: 'latin1',
  'utf-16le': 'utf-16le',
  utf16le: 'utf-16le',
  'utf-16be': 'utf-16be',
  utf16be: 'utf-16be',
};

/**
 * The canonical name of an `--encoding` value (case and common aliases accepted).
 * @example parseEncoding('CP1252') // 'windows-1252'
 */
export function parseEncoding(flag: string): Encoding {
  const e = ALIASES[flag.trim().toLowerCase()];
  if (!e) throw new ImportError(`unknown encoding "${flag}": use one of ${ENCODINGS.join(', ')}`, 'usage');
  return e;
}

/** A byte-order mark at the start of a file: the encoding it names and its length. */
export interface Bom {
  encoding: Encoding;
  length: number;
}

/**
 * The byte-order mark at the start of `head`, if any. A BOM decides the encoding on its own.
 * @example sniffBom(Buffer.from([0xff, 0xfe, 0x61, 0])) // { encoding: 'utf-16le', length: 2 }
 */
export function sniffBom(head: Uint8Array): Bom | null {
  if (head.length >= 3 && head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) return { encoding: 'utf-8', length: 3 };
  if (head.length >= 2 && head[0] === 0xff && head[1] === 0xfe) return { encoding: 'utf-16le', length: 2 };
  if (head.length >= 2 && head[0] === 0xfe && head[1] === 0xff) return { encoding: 'utf-16be', length: 2 };
  return null;
}

/** UTF-16 without a BOM: most code units of ASCII text have one NUL byte, on the same side. */
export function guessUtf16(head: Uint8Array): 'utf-16le' | 'utf-16be' | null {
  const n = Math.min(head.length, 4096) & ~1;
  if (n < 4) return null;
  let evenNul = 0;
  let oddNul = 0;
  for (let i = 0; i < n; i += 2) {
    if (head[i] === 0) evenNul++;
    if (head[i + 1] === 0) oddNul++;
  }
  const pairs = n / 2;
  if (oddNul > pairs * 0.4 && evenNul < pairs * 0.05) return 'utf-16le';
  if (evenNul > pairs * 0.4 && oddNul < pairs * 0.05) return 'utf-16be';
  return null;
}

/** The encoding an input is read in: what its BOM says, else `--encoding`, else UTF-8. */
export interface InputEncoding {
  encoding: Encoding;
  /** Bytes of BOM to skip at the start of the file (0 when none). */
  bomLength: number;
  /** The encoding came from a BOM (so rejects get one too). */
  fromBom: boolean;
}

/** Reads the first bytes of a file. */
async function readHead(path: string, n: number): Promise<Buffer> {
  const fh = await open(path, 'r');
  try {
    const buf = Buffer.alloc(n);
    const { bytesRead } = await fh.read(buf, 0, n, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}

/**
 * Decides how to decode a file: a BOM wins (UTF-16 included); otherwise the flag, otherwise UTF-8.
 * UTF-8 input is not read here: the import's scan pass checks every byte as it reads them
 * (Utf8Check), before anything is written, so a Windows-1252 file stops with one clear error
 * instead of a reject per row, and the file is not read a third time for it.
 */
export async function resolveEncoding(path: string, flag?: string, name = path): Promise<InputEncoding> {
  const explicit = flag ? parseEncoding(flag) : undefined;
  const head = await readHead(path, 4096);
  const bom = sniffBom(head);
  if (bom) return { encoding: bom.encoding, bomLength: bom.length, fromBom: true };
  if (explicit) return { encoding: explicit, bomLength: 0, fromBom: false };
  const utf16 = guessUtf16(head);
  if (utf16) {
    throw new ImportError(`${name} looks like ${utf16.toUpperCase()} text without a byte-order mark: pass --encoding ${utf16}`, 'usage');
  }
  return { encoding: 'utf-8', bomLength: 0, fromBom: false };
}

/** The length of the longest prefix of `buf` that does not end inside a UTF-8 sequence. */
function completePrefix(buf: Buffer): number {
  const n = buf.length;
  for (let back = 1; back <= Math.min(3, n); back++) {
    const b = buf[n - back];
    if ((b & 0xc0) === 0x80) continue; // continuation byte: look further back for the lead
    const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return need > back ? n - back : n;
  }
  return n;
}

/** The length of the valid UTF-8 sequence starting at `buf[i]`, or 0 when none starts there. */
function sequenceAt(buf: Uint8Array, i: number): number {
  const b = buf[i];
  if (b < 0x80) return 1;
  const cont = (k: number, lo = 0x80, hi = 0xbf) => i + k < buf.length && buf[i + k] >= lo && buf[i + k] <= hi;
  if (b >= 0xc2 && b <= 0xdf) return cont(1) ? 2 : 0;
  if (b >= 0xe0 && b <= 0xef) {
    const lo = b === 0xe0 ? 0xa0 : 0x80;
    const hi = b === 0xed ? 0x9f : 0xbf;
    return cont(1, lo, hi) && cont(2) ? 3 : 0;
  }
  if (b >= 0xf0 && b <= 0xf4) {
    const lo = b === 0xf0 ? 0x90 : 0x80;
    const hi = b === 0xf4 ? 0x8f : 0xbf;
    return cont(1, lo, hi) && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}

/** The offset of the first byte of `buf` that is not part of valid UTF-8 (only called on a bad chunk). */
export function firstBadByte(buf: Uint8Array): number {
  let i = 0;
  while (i < buf.length) {
    const n = sequenceAt(buf, i);
    if (n === 0) return i;
    i += n;
  }
  return -1;
}

/** The input is meant as UTF-8 and is not: where, and what to pass instead. */
export class EncodingError extends ImportError {
  constructor(
    readonly path: string,
    readonly line: number,
    readonly offset: number,
    readonly byte: number,
    readonly suggestion: string,
  ) {
    super(
      `${path} is not valid UTF-8: line ${line}, byte ${offset} (0x${byte.toString(16).padStart(2, '0')}). ` +
        `Nothing was imported. If the file came from Excel or Windows, pass --encoding ${suggestion}`,
      'usage',
    );
  }
}

/** Counts `\n` bytes of a file before `offset` (only on the error path). */
async function lineAt(path: string, offset: number): Promise<number> {
  let line = 1;
  if (offset === 0) return line;
  for await (const chunk of createReadStream(path, { end: offset - 1 })) {
    const buf = chunk as Buffer;
    for (let i = buf.indexOf(10); i >= 0; i = buf.indexOf(10, i + 1)) line++;
  }
  return line;
}

/**
 * The UTF-8 check of a file as a pass reads it (native check, ≈GB/s): give it the file's bytes in
 * order, chunk by chunk (a sequence cut at a chunk's end is checked with the next), then `end`.
 * It rejects with an EncodingError that names the first bad line and byte (1-based byte offset in
 * the file) and the encoding to pass.
 */
export class Utf8Check {
  private carry: Buffer = Buffer.alloc(0);
  /** File offset of carry[0]. */
  private base = 0;

  constructor(
    private readonly path: string,
    /** The input as the user named it (messages). */
    private readonly name = path,
  ) {}

  /** Checks the next bytes of the file. */
  async push(chunk: Uint8Array): Promise<void> {
    const buf = this.carry.length ? Buffer.concat([this.carry, chunk]) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const cut = completePrefix(buf);
    const whole = buf.subarray(0, cut);
    if (!isUtf8(whole)) return fail(this.path, this.name, this.base, whole);
    this.carry = Buffer.from(buf.subarray(cut));
    this.base += cut;
  }

  /** The file ended: a sequence cut short at its end is not UTF-8. */
  async end(): Promise<void> {
    if (this.carry.length && !isUtf8(this.carry)) return fail(this.path, this.name, this.base, this.carry);
  }
}

async function fail(path: string, name: string, base: number, buf: Buffer): Promise<never> {
  const at = firstBadByte(buf);
  const offset = base + at;
  const line = await lineAt(path, offset);
  throw new EncodingError(name, line, offset + 1, buf[at], suggestEncoding(buf.subarray(at, at + 4096)));
}

/**
 * The encoding to suggest for bytes that are not UTF-8: bytes 0x80–0x9F are printable only in
 * Windows-1252 (€, smart quotes, dashes), which is also what Excel writes; Latin-1 reads the rest
 * the same, so Windows-1252 is the suggestion either way unless the text looks like UTF-16.
 */
export function suggestEncoding(sample: Uint8Array): Encoding {
  return guessUtf16(sample) ?? 'windows-1252';
}

/**
 * A stream of the input's text re-encoded as UTF-8 bytes, BOM removed: the identity for UTF-8
 * (the byte-level CSV path then stays as fast as it was), iconv-lite's streaming decoder otherwise.
 */
export function toUtf8(input: Readable, enc: InputEncoding): Readable {
  let skip = enc.bomLength;
  const decoder = enc.encoding === 'utf-8' ? null : iconv.getDecoder(enc.encoding);
  if (!decoder && skip === 0) return input;
  const t = new Transform({
    transform(chunk: Buffer, _e, done) {
      if (skip > 0) {
        const n = Math.min(skip, chunk.length);
        chunk = chunk.subarray(n);
        skip -= n;
      }
      if (!decoder) return done(null, chunk);
      const text = decoder.write(chunk);
      done(null, text ? Buffer.from(text, 'utf8') : undefined);
    },
    flush(done) {
      const rest = decoder?.end();
      done(null, rest ? Buffer.from(rest, 'utf8') : undefined);
    },
  });
  input.on('error', (err) => t.destroy(err));
  return input.pipe(t);
}

/** Text encoded in the input's encoding (rejects keep the input's own bytes). */
export function encodeAs(text: string, encoding: Encoding): Buffer {
  return encoding === 'utf-8' ? Buffer.from(text, 'utf8') : iconv.encode(text, encoding);
}

/** The byte-order mark to start a file in this encoding with (for rejects of a file that had one). */
export function bomBytes(encoding: Encoding): Buffer {
  return iconv.encode('\ufeff', encoding === 'utf-8' ? 'utf8' : encoding);
}
