import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SRC, sources } from './sources.js';

/** A byte constant of CSV or JSON reading declared by name, or any constant set to the byte of `"` or `,`. */
const BYTE_CONSTANT = /\bconst\s+(?:QUOTE|DQUOTE|DOUBLE_QUOTE|COMMA|LF|CR|NEWLINE|NL|CRLF|BACKSLASH|DELIM|DELIMITER)\s*=\s*\d|\bconst\s+\w+\s*=\s*(?:34|44)\s*;/;

/** Looking for a `"` byte or character: compared to QUOTE or 34, or searched for with indexOf. */
const QUOTE_SCAN = /[!=]==\s*(?:QUOTE|34)\b|\bindexOf\(\s*(?:QUOTE|34|'"'|"\\"")|(?:QUOTE|34)\s*[!=]==/;

/** The files that may look for quotes, and why (every other reader of CSV goes through the tokenizer). */
const QUOTE_READERS: Record<string, string> = {
  'format/csv-tokens.ts': 'the CSV tokenizer itself',
  'schema/codecs.ts': 'the jsonb byte check reads JSON strings inside a cell',
  'schema/json-depth.ts': 'JSON strings, not CSV quoting',
  'import/readers/json-splitter.ts': 'JSON strings, not CSV quoting',
  // a credit cell's JSON read in place from a COPY body field the tokenizer bounded (its `""` are JSON's quotes)
  'server/credit-scan.ts': 'JSON strings inside a field the tokenizer bounded',
  'grammar/expr.ts': 'the query grammar’s quoted values, not CSV',
  // a byte-at-a-time state machine over finished CSV output, cut anywhere into chunks: it inserts
  // bytes as it goes and keeps no record, which the record-at-a-time tokenizer would have to buffer
  'format/formula-safe.ts': 'streams finished CSV output byte by byte across chunk cuts',
};

describe('one CSV tokenizer, one codec per column type', () => {
  const files = sources(SRC).map((f) => [relative(SRC, f).split('\\').join('/'), readFileSync(f, 'utf8')] as const);

  it('CSV byte constants are declared only in format/byte-codes.ts', () => {
    const offenders = files.filter(([rel, text]) => rel !== 'format/byte-codes.ts' && BYTE_CONSTANT.test(text)).map(([rel]) => rel);
    expect(offenders).toEqual([]);
    // the pattern finds what it looks for, and not a number that merely equals 10
    expect(BYTE_CONSTANT.test('const QUOTE = 34;')).toBe(true);
    expect(BYTE_CONSTANT.test('const NEWLINE = 10; // \\n')).toBe(true);
    expect(BYTE_CONSTANT.test('const DQ = 34;')).toBe(true);
    expect(BYTE_CONSTANT.test('export const MAX_SELECT_NESTING = 10;')).toBe(false);
    expect(files.some(([rel, text]) => rel === 'format/byte-codes.ts' && BYTE_CONSTANT.test(text))).toBe(true);
  });

  it('only the tokenizer (and the readers named here, for JSON and grammar quotes) looks for quote bytes', () => {
    const offenders = files.filter(([rel, text]) => !(rel in QUOTE_READERS) && QUOTE_SCAN.test(text)).map(([rel]) => rel);
    expect(offenders).toEqual([]);
    // the pattern finds the ways a scan for quotes has been written here
    for (const line of ['if (buf[i] === QUOTE) {', 'const close = buf.indexOf(\'"\', from);', 'const q = text.indexOf(QUOTE, j);', 'if (buf.charCodeAt(p) === 34)', 'quoted = bytes[i] !== QUOTE']) {
      expect(QUOTE_SCAN.test(line), line).toBe(true);
    }
    expect(QUOTE_SCAN.test('if (flags[f] & QUOTED) continue;')).toBe(false);
    // and it finds the tokenizer's own scan (so a renamed constant cannot make it pass unseen)
    expect(files.some(([rel, text]) => rel === 'format/csv-tokens.ts' && QUOTE_SCAN.test(text))).toBe(true);
  });

  it('the switch on a column type’s name is written once, in schema/codecs.ts', () => {
    const TYPE_CASE = /\bcase\s+['"](?:timestamp with time zone|jsonb)['"]\s*:/;
    const offenders = files.filter(([rel, text]) => rel !== 'schema/codecs.ts' && TYPE_CASE.test(text)).map(([rel]) => rel);
    expect(offenders).toEqual([]);
    expect(TYPE_CASE.test("    case 'timestamp with time zone':")).toBe(true);
    expect(files.some(([rel, text]) => rel === 'schema/codecs.ts' && TYPE_CASE.test(text))).toBe(true);
  });

  it('a field is unquoted (doubled quotes undone) only in the tokenizer (keyText, fieldText)', () => {
    const UNDOUBLE = /\.replace(?:All)?\(\s*(?:'""'|"\\"\\""|\/""\/g)\s*,\s*(?:'"'|"\\"")\s*\)/;
    const offenders = files.filter(([rel, text]) => rel !== 'format/csv-tokens.ts' && UNDOUBLE.test(text)).map(([rel]) => rel);
    expect(offenders).toEqual([]);
    expect(UNDOUBLE.test(`s.slice(1, -1).replaceAll('""', '"')`)).toBe(true);
    expect(UNDOUBLE.test(`escaped ? s.replace(/""/g, '"') : s`)).toBe(true);
    expect(files.some(([rel, text]) => rel === 'format/csv-tokens.ts' && UNDOUBLE.test(text))).toBe(true);
  });
});
