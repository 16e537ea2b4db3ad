import { open } from 'node:fs/promises';
import { extname } from 'node:path';
import { ImportError, type InputFormat } from '../types.js';

/** The delimiters detection considers, in order of preference on a tie. */
export const DELIMITERS = [',', ';', '\t', '|'] as const;

const NAMES: Record<string, string> = { ',': 'comma', ';': 'semicolon', '\t': 'tab', '|': 'pipe' };

/** How a delimiter is spelled on the command line, for messages. */
export function delimiterFlag(d: string): string {
  return d === '\t' ? `--delimiter tab` : `--delimiter '${d}'`;
}

/** A delimiter's name for messages ("semicolon"). */
export function delimiterName(d: string): string {
  return NAMES[d] ?? JSON.stringify(d);
}

/**
 * The delimiter a `--delimiter` value names: one character, or `tab`/`\t`, `comma`, `semicolon`, `pipe`.
 * @example parseDelimiter('tab') // '\t'
 */
export function parseDelimiter(flag: string): string {
  const words: Record<string, string> = { tab: '\t', '\\t': '\t', comma: ',', semicolon: ';', pipe: '|' };
  const d = words[flag.toLowerCase()] ?? flag;
  if (d.length !== 1 || d === '"' || d === '\n' || d === '\r') {
    throw new ImportError(`--delimiter takes one character (or tab, comma, semicolon, pipe), not ${JSON.stringify(flag)}`, 'usage');
  }
  return d;
}

/** Counts a character outside double-quoted parts of a line. */
function countOutsideQuotes(line: string, ch: string): number {
  let n = 0;
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === '"') quoted = !quoted;
    else if (c === ch && !quoted) n++;
  }
  return n;
}

/**
 * The delimiter of a CSV file: `--delimiter` when given; tab for `.tsv`/`.tab`; otherwise the
 * candidate that splits the header line into the most names (comma on a tie or when none does).
 * @example detectDelimiter('stage_name;city;birthdate', 'a.csv') // ';'
 */
export function detectDelimiter(headerLine: string, path: string, flag?: string): string {
  if (flag !== undefined) return parseDelimiter(flag);
  const ext = extname(path).toLowerCase();
  if (ext === '.tsv' || ext === '.tab') return '\t';
  let best = ',';
  let bestCount = 0;
  for (const d of DELIMITERS) {
    const n = countOutsideQuotes(headerLine, d);
    if (n > bestCount) {
      best = d;
      bestCount = n;
    }
  }
  return best;
}

/**
 * A header that came out as one name holding another likely delimiter means the file was split
 * with the wrong one: say which delimiter it looks like and the flag that reads it.
 */
export function checkSingleHeader(headers: string[], path: string, delimiter: string): void {
  if (headers.length !== 1) return;
  const name = headers[0];
  const other = DELIMITERS.find((d) => d !== delimiter && name.includes(d));
  if (!other) return;
  throw new ImportError(
    `${path}: the header is one name, ${JSON.stringify(name.length > 80 ? `${name.slice(0, 80)}…` : name)}, which holds ${delimiterName(other)}s: ` +
      `the file looks ${delimiterName(other)}-separated, pass ${delimiterFlag(other)}`,
    'usage',
  );
}

/** The first line of a text (up to a line end outside quotes is not needed: header names hold no line ends). */
export function firstLine(text: string): string {
  const nl = text.search(/\r\n|\n|\r/);
  return (nl < 0 ? text : text.slice(0, nl)).replace(/^\ufeff/, '');
}

/**
 * `--delimiter` is for CSV and `--encoding` for text: a flag the format cannot use is a usage
 * error. (`--sheet` is let through for any format: an xlsx import's rejects file is CSV, and it
 * re-imports with the same flags.)
 */
export function checkDelimiterFlag(format: InputFormat, flags: { delimiter?: string; encoding?: string }): void {
  if (flags.delimiter !== undefined && format !== 'csv') throw new ImportError(`--delimiter is for CSV input, not ${format}`, 'usage');
  if (flags.encoding !== undefined && format === 'xlsx') throw new ImportError('--encoding is for text input: an Excel workbook says its own encoding', 'usage');
}

/** The delimiter of a CSV file (UTF-8): the flag, `.tsv`, or detection from its header line. */
export async function readDelimiter(path: string, name: string, flag?: string): Promise<string> {
  const fh = await open(path, 'r');
  let line: string;
  try {
    const buf = Buffer.alloc(64 * 1024);
    const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
    line = firstLine(buf.toString('utf8', 0, bytesRead));
  } finally {
    await fh.close();
  }
  const d = detectDelimiter(line, name, flag);
  // a header the delimiter does not split: said here, before a later line's cells confuse the reader
  if (line.length && countOutsideQuotes(line, d) === 0) checkSingleHeader([line], name, d);
  return d;
}
