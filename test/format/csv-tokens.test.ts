import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CsvTokenizer, ESCAPED, fieldText, HAS_NUL, keyText, QUOTED, TOKENS_MALFORMED, TOKENS_MORE, TOKENS_OK } from '../../src/format/csv-tokens.js';

/** Every record of `text` as its cells (content, doubled quotes undone), reading `chunk` more bytes each time one is cut off. */
function records(text: string, delimiter = ',', chunk = Infinity): string[][] {
  const buf = Buffer.from(text);
  const t = new CsvTokenizer(delimiter);
  const out: string[][] = [];
  let p = 0;
  let n = Math.min(buf.length, chunk);
  while (p < buf.length) {
    const status = t.read(buf, p, n, n >= buf.length);
    if (status === TOKENS_MORE) {
      n = Math.min(buf.length, n + chunk);
      continue;
    }
    if (status === TOKENS_MALFORMED) throw new Error(`${t.problemLine}: ${t.problem}`);
    const cells: string[] = [];
    for (let f = 0; f < t.count; f++) cells.push(fieldText(buf, t.from(f), t.to(f), (t.flags[f] & ESCAPED) !== 0));
    out.push(cells);
    p = t.next;
  }
  return out;
}

describe('the CSV tokenizer', () => {
  it('gives field bounds and quote flags', () => {
    const buf = Buffer.from('a,"b ""c""",\r\nnext');
    const t = new CsvTokenizer();
    expect(t.read(buf, 0, buf.length, true)).toBe(TOKENS_OK);
    expect(t.count).toBe(3);
    expect([...t.starts.subarray(0, 3)]).toEqual([0, 2, 12]);
    expect([...t.ends.subarray(0, 3)]).toEqual([1, 11, 12]);
    expect([...t.flags.subarray(0, 3)]).toEqual([0, QUOTED | ESCAPED, 0]);
    expect([t.next, t.lines]).toEqual([14, 1]);
    expect(keyText(buf, 2, 11)).toBe('b "c"');
  });

  it('reads any single-byte delimiter, and quoted fields spanning lines (counted)', () => {
    expect(records('a;"x;\ny";c\n', ';')).toEqual([['a', 'x;\ny', 'c']]);
    expect(records('a\tb\n', '\t')).toEqual([['a', 'b']]);
    const t = new CsvTokenizer('|');
    const buf = Buffer.from('"1\n2\n3"|x\n');
    t.read(buf, 0, buf.length, true);
    expect(t.lines).toBe(3);
  });

  it('asks for more bytes while a record may go on, however the input is cut', () => {
    const t = new CsvTokenizer();
    const buf = Buffer.from('a,"b""');
    expect(t.read(buf, 0, buf.length, false)).toBe(TOKENS_MORE);
    expect(t.read(Buffer.from('a,'), 0, 2, false)).toBe(TOKENS_MORE);
    expect(t.read(Buffer.from('a\r'), 0, 2, false)).toBe(TOKENS_MORE);
    expect(records('a,\n')).toEqual([['a', '']]);
    expect(records('a,')).toEqual([['a', '']]);
  });

  it('flags a NUL byte', () => {
    const t = new CsvTokenizer();
    const buf = Buffer.from('a\u0000,"b\u0000"\n');
    t.read(buf, 0, buf.length, true);
    expect(t.flags[0] & HAS_NUL).toBe(HAS_NUL);
    expect(t.flags[1] & HAS_NUL).toBe(HAS_NUL);
  });

  it('reports malformed input with the line within the record', () => {
    const err = (text: string) => () => records(text);
    expect(err('"open\nmore')).toThrow(/^0: a quoted field is not closed/);
    expect(err('"a\nb"x,1\n')).toThrow(/^1: text after the closing quote of field 1 \("x,1\\n"\)/);
    expect(err('1,x"y\n')).toThrow(/^0: a quote inside unquoted field 2/);
  });

  it('grows past 32 fields', () => {
    const row = Array.from({ length: 100 }, (_, i) => String(i));
    expect(records(`${row.join(',')}\n`)).toEqual([row]);
  });

  it('property: agrees with csv-parse on anything csv-stringify writes, with any delimiter and chunking', () => {
    const cell = fc.string({ unit: fc.constantFrom('a', ' ', ',', ';', '"', '\n', '\r\n', 'é', '東'), maxLength: 6 });
    fc.assert(
      fc.property(fc.array(fc.array(cell, { minLength: 2, maxLength: 4 }), { minLength: 1, maxLength: 6 }), fc.constantFrom(',', ';', '\t'), fc.integer({ min: 1, max: 30 }), (rows, delimiter, chunk) => {
        const text = stringify(rows, { delimiter, quoted_match: /[\r\n]/ });
        expect(records(text, delimiter, chunk)).toEqual(parse(text, { delimiter, relax_column_count: true }));
      }),
    );
  });

  it('plainEnd: where a plain record ends (read would end it there too), or -1 when read has more to say', () => {
    const cases: Array<[string, number, number]> = [
      // text, the record's line end (-1: not plain), its lines
      ['a,b,c\nnext', 5, 1],
      ['"a, b",c\r\nnext', 9, 1],
      ['a,"x\ny\nz",c\nnext', 11, 3],
      ['a,"say ""hi""",c\nnext', 16, 1],
      ['"whole"\nnext', 7, 1],
      ['a,b"c,d\n', -1, 0], // a quote inside an unquoted field
      ['a,"b"c,d\n', -1, 0], // text after a closing quote
      ['a,"never closed\n', -1, 0],
      ['a,b,c', -1, 0], // no line end in the bytes
    ];
    for (const [text, end, lines] of cases) {
      const buf = Buffer.from(text);
      const t = new CsvTokenizer();
      const got = t.plainEnd(buf, 0, buf.length);
      expect([text, got, got < 0 ? 0 : t.lines]).toEqual([text, end, lines]);
      // where it says a record ends, read ends it there too, with the same lines
      if (got >= 0) {
        const r = new CsvTokenizer();
        expect([text, r.read(buf, 0, buf.length, false), r.next - 1, r.lines]).toEqual([text, TOKENS_OK, got, lines]);
      }
    }
  });
});
