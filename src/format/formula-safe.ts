/**
 * CSV for a spreadsheet: cells a spreadsheet would run as a formula are made text (OWASP, "CSV
 * Injection"). A cell whose text starts with `=`, `+`, `-`, `@`, a tab or a carriage return gets a
 * leading `'` and is quoted, so Excel, LibreOffice and Google Sheets show it instead of evaluating
 * `=HYPERLINK(…)` or `@SUM(…)`. Every other byte passes through unchanged.
 *
 * It works on the finished CSV bytes of the dialect (src/format/csv-dialect.ts), as a stream, so
 * every export byte path (the COPY rewriter, CSV pages, the row writers) gives the same output
 * through it. Such a file is for people: the `'` is part of the cell when it is imported again,
 * which is why plain CSV (no flag) is left byte-faithful for round trips.
 */
import { LF, QUOTE } from './byte-codes.js';

/** A UTF-8 byte order mark: Excel reads a CSV file as UTF-8 only when it starts with one. */
export const UTF8_BOM = Uint8Array.of(0xef, 0xbb, 0xbf);

/** Bytes that make a cell a formula when they start it (OWASP's list). */
const TRIGGER = new Uint8Array(256);
for (const c of '=+-@\t\r') TRIGGER[c.charCodeAt(0)] = 1;

const APOSTROPHE = 39;

const FIELD_START = 0;
const AFTER_OPEN_QUOTE = 1;
const QUOTED = 2;
const QUOTE_IN_QUOTED = 3;
const UNQUOTED = 4;
/** An unquoted cell made safe: its closing quote is written where it ends. */
const WRAPPED = 5;

/**
 * A stateful rewriter of a CSV byte stream (fields split by `delimiter`, lines by `\n`, RFC 4180
 * quotes) that makes formula cells text; feed it the chunks in order, however they are cut.
 * @example const safe = formulaSafeCsv(); Buffer.from(safe(Buffer.from('a,=1+1\n'))).toString() // 'a,"\'=1+1"\n'
 */
export function formulaSafeCsv(delimiter = ','): (chunk: Uint8Array) => Uint8Array {
  const delim = delimiter.charCodeAt(0);
  let state = FIELD_START;
  return (chunk) => {
    // at most two bytes more per field: a chunk of n bytes grows to at most 3n
    const out = new Uint8Array(chunk.length * 3);
    let o = 0;
    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i];
      switch (state) {
        case FIELD_START:
          if (b === QUOTE) state = AFTER_OPEN_QUOTE;
          // an empty field (checked first: a tab is a trigger, and the delimiter of a .tsv)
          else if (b === delim || b === LF) break;
          else if (TRIGGER[b]) {
            out[o++] = QUOTE;
            out[o++] = APOSTROPHE;
            state = WRAPPED;
          } else state = UNQUOTED;
          break;
        case AFTER_OPEN_QUOTE:
          if (TRIGGER[b]) {
            out[o++] = APOSTROPHE;
            state = QUOTED;
          } else state = b === QUOTE ? QUOTE_IN_QUOTED : QUOTED;
          break;
        case QUOTED:
          if (b === QUOTE) state = QUOTE_IN_QUOTED;
          break;
        case QUOTE_IN_QUOTED:
          // `""` inside a quoted field is a quote; anything else closed the field
          if (b === QUOTE) state = QUOTED;
          else state = b === delim || b === LF ? FIELD_START : UNQUOTED;
          break;
        case UNQUOTED:
          if (b === delim || b === LF) state = FIELD_START;
          break;
        case WRAPPED:
          if (b === delim || b === LF) {
            out[o++] = QUOTE;
            state = FIELD_START;
          }
          break;
      }
      out[o++] = b;
    }
    return out.subarray(0, o);
  };
}
