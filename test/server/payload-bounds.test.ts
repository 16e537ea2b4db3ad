import { describe, expect, it } from 'vitest';
import { COPY_CSV } from '../../src/grammar/media.js';
import { MAX_JSON_DEPTH } from '../../src/schema/json-depth.js';
import { parsePayload } from '../../src/server/payload.js';

const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
const JSON_COLUMNS = new Set(['metadata', 'streaming']);
const copy = (text: string) => () => parsePayload(Buffer.from(text), COPY_CSV, { method: 'POST', jsonColumns: JSON_COLUMNS });

describe('request body depth checks (parsePayload)', () => {
  it('reads a COPY body field by field: brackets in text cells and inside JSON strings do not count, and the line named is where the cell starts', () => {
    const brackets = '['.repeat(2 * MAX_JSON_DEPTH);
    const fine = `stage_name,biography,metadata,streaming\n"a, ""b""","${brackets}\nsecond line, ${brackets}","{""k"": ""${brackets}"", ""e"": ""\\""${brackets}""}",${nested(MAX_JSON_DEPTH)}\n`;
    expect(copy(fine)).not.toThrow();
    const deep = `${fine}x,"multi\nline\ntext",[],"${nested(MAX_JSON_DEPTH + 1)}"\n`;
    expect(copy(deep)).toThrow(expect.objectContaining({ status: 400, code: 'PGRST102', details: `The streaming cell on line 6 nests deeper than ${MAX_JSON_DEPTH} levels.` }));
    // CRLF line ends and an unquoted deep cell
    expect(copy(`stage_name,metadata\r\nx,${nested(MAX_JSON_DEPTH + 1)}\r\n`)).toThrow(expect.objectContaining({ details: expect.stringContaining('metadata cell on line 2') }));
  });

  it('checks CSV and form values of jsonb columns only', () => {
    const csv = (text: string) => () => parsePayload(Buffer.from(text), 'text/csv', { jsonColumns: JSON_COLUMNS });
    expect(csv(`biography,metadata\n"${nested(MAX_JSON_DEPTH + 1)}",[1]\n`)).not.toThrow();
    expect(csv(`biography,metadata\nx,[1]\ny,"${nested(MAX_JSON_DEPTH + 1)}"\n`)).toThrow(expect.objectContaining({ details: `The metadata value of data row 2 nests deeper than ${MAX_JSON_DEPTH} levels.` }));
    const form = (text: string) => () => parsePayload(Buffer.from(text), 'application/x-www-form-urlencoded', { jsonColumns: JSON_COLUMNS });
    expect(form(`metadata=${encodeURIComponent(nested(MAX_JSON_DEPTH + 1))}`)).toThrow(expect.objectContaining({ code: 'PGRST102' }));
  });

  it('refuses bytes that are not UTF-8 at the first bad byte, also one cut short at the end', () => {
    const body = (...parts: Array<string | number[]>) => Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : Buffer.from(p))));
    const details = (b: Buffer) => {
      try {
        parsePayload(b, 'application/json');
      } catch (err) {
        return (err as { details: string }).details;
      }
      return null;
    };
    expect(details(body('{"a":"é', [0xc3], '"}'))).toBe('The body is not valid UTF-8: invalid byte sequence at byte 9 (0x22).');
    expect(details(body('{"a":"', [0xed, 0xa0, 0x80], '"}'))).toMatch(/at byte 6 \(0xed\)|at byte 7 \(0xa0\)/);
    expect(details(body('{"a":"x"}', [0xe2, 0x82]))).toBe('The body is not valid UTF-8: invalid byte sequence at byte 9 (0xe2).');
    expect(details(body('{"a":"€"}'))).toBeNull();
  });
});
