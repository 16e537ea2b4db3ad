import fc from 'fast-check';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { csvField, csvLine } from '../../src/format/csv-dialect.js';
import { formulaSafeCsv } from '../../src/format/formula-safe.js';

/** Runs the rewriter over `text` cut at `cuts` (chunk ends may fall anywhere, inside a character too). */
function rewrite(text: string, cuts: number[] = []): string {
  const bytes = Buffer.from(text);
  const safe = formulaSafeCsv();
  const ends = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Buffer[] = [];
  let from = 0;
  for (const end of [...ends, bytes.length]) {
    out.push(Buffer.from(safe(bytes.subarray(from, end))));
    from = end;
  }
  return Buffer.concat(out).toString('utf8');
}

const RISKY = /^[=+\-@\t\r]/;

describe('formula-safe CSV (OWASP CSV injection)', () => {
  it('prefixes and quotes cells that start with = + - @, tab or CR; leaves every other byte alone', () => {
    const cases: Array<[string, string]> = [
      ['a,=1+1\n', `a,"'=1+1"\n`],
      ['=HYPERLINK("x"),b\n'.replace('"x"', 'x'), `"'=HYPERLINK(x)",b\n`],
      ['"=HYPERLINK(""http://evil"")",x\n', `"'=HYPERLINK(""http://evil"")",x\n`],
      ['+1,-2,@SUM(A1)\n', `"'+1","'-2","'@SUM(A1)"\n`],
      ['"\tx","\rx",""\n', `"'\tx","'\rx",""\n`],
      ['"""=not a formula""",a=b, =x\n', '"""=not a formula""",a=b, =x\n'],
      ['\\N,,"a,b"\n', '\\N,,"a,b"\n'],
      ['x\n-\n', `x\n"'-"\n`],
    ];
    for (const [input, want] of cases) expect(rewrite(input), input).toBe(want);
  });

  it('gives the cells a CSV reader sees with a leading apostrophe on exactly the risky ones, however the stream is cut', () => {
    const cell = fc.oneof(fc.string(), fc.constantFrom('=1+1', '+x', '-', '@a', '\tt', '\rr', '""', '"=x"', ' =x', 'é=', '\\N'));
    fc.assert(
      fc.property(fc.array(fc.array(cell, { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 6 }), fc.array(fc.nat(), { maxLength: 6 }), (rows, cuts) => {
        const width = rows[0].length;
        const table = rows.map((r) => Array.from({ length: width }, (_, i) => r[i] ?? 'x'));
        const text = table.map((r) => csvLine(r.map((c) => csvField(c)))).join('');
        const parsed = parse(rewrite(text, cuts), { relax_column_count: false }) as string[][];
        expect(parsed).toEqual(table.map((r) => (r.length === 1 && r[0] === '' ? [''] : r.map((c) => (RISKY.test(c) ? `'${c}` : c)))));
      }),
      { numRuns: 300 },
    );
  });
});
