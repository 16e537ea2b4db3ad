import fc from 'fast-check';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { describe, expect, it } from 'vitest';
import { type CsvRecord, CsvScanner, CsvSyntaxError } from '../../src/import/readers/csv-scan.js';

function scan(text: string, chunk = text.length || 1): CsvRecord[] {
  const s = new CsvScanner();
  const out: CsvRecord[] = [];
  for (let i = 0; i < text.length; i += chunk) out.push(...s.push(text.slice(i, i + chunk)));
  out.push(...s.end());
  return out;
}

const cellsOf = (text: string, chunk?: number) => scan(text, chunk).map((r) => r.cells);

describe('CsvScanner (the import path CSV tokenizer)', () => {
  it('reads quoted cells with delimiters, doubled quotes and line ends inside, with the line each record starts on', () => {
    const text = 'id,name\n1,"Smith, Jones"\n2,"say ""hi"""\n3,"two\nlines"\n4,last';
    for (const chunk of [1, 2, 3, 5, 1000]) {
      expect(scan(text, chunk)).toEqual([
        { cells: ['id', 'name'], line: 1 },
        { cells: ['1', 'Smith, Jones'], line: 2 },
        { cells: ['2', 'say "hi"'], line: 3 },
        { cells: ['3', 'two\nlines'], line: 4 },
        { cells: ['4', 'last'], line: 6 },
      ]);
    }
  });

  it('handles CRLF, a BOM, blank lines, a trailing delimiter and empty quoted cells', () => {
    const text = '\uFEFFa,b\r\n\r\n"",x\r\n\n1,\r\n,\r\n';
    for (const chunk of [1, 2, 4, 100]) {
      expect(scan(text, chunk)).toEqual([
        { cells: ['a', 'b'], line: 1 },
        { cells: ['', 'x'], line: 3 },
        { cells: ['1', ''], line: 5 },
        { cells: ['', ''], line: 6 },
      ]);
    }
  });

  it('keeps spaces, tabs, non-Latin text and leading zeros exactly', () => {
    expect(cellsOf(' a ,\t0012 ,"  東京 "\n')).toEqual([[' a ', '\t0012 ', '  東京 ']]);
  });

  it('names the line of an unclosed quote, text after a closing quote and a stray quote', () => {
    const err = (text: string) => {
      try {
        scan(text, 3);
      } catch (e) {
        expect(e).toBeInstanceOf(CsvSyntaxError);
        return `${(e as CsvSyntaxError).line}: ${(e as Error).message}`;
      }
      throw new Error('no error');
    };
    expect(err('a,b\n1,"open\nmore')).toMatch(/^2: a quoted field is not closed/);
    expect(err('a,b\n1,2\n3,"x"y\n')).toMatch(/^3: text after the closing quote of field 2/);
    expect(err('a,b\n1,2\n3,4\nx"y,5\n')).toMatch(/^4: a quote inside unquoted field 1/);
  });

  it('property: agrees with csv-parse on anything csv-stringify writes, whatever the chunking', () => {
    const cell = fc.string({ unit: fc.constantFrom('a', 'Z', ' ', ',', '"', '\n', '\r\n', 'é', '東', '0', '\t', "'", '\\'), maxLength: 8 });
    fc.assert(
      fc.property(fc.array(fc.array(cell, { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 8 }), fc.integer({ min: 1, max: 40 }), fc.boolean(), (rows, chunk, crlf) => {
        // csv-parse and we both skip wholly empty lines: a one-empty-cell row is written as a blank line
        const kept = rows.filter((r) => !(r.length === 1 && r[0] === ''));
        const text = stringify(kept, { record_delimiter: crlf ? '\r\n' : '\n', quoted_empty: false, quoted_match: /[\r\n]/ });
        const expected = parse(text, { relax_column_count: true, skip_empty_lines: true, bom: true }) as string[][];
        expect(cellsOf(text, chunk)).toEqual(expected);
      }),
      { numRuns: 2000 },
    );
  });
});
