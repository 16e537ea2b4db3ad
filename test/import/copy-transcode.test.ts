import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CopyTranscoder, fieldPlans, MALFORMED, MORE, NEEDS_JSON, OK, OVERFLOW, RAGGED, REFUSED, validJson } from '../../src/import/pass/copy-transcode.js';
import { FieldResolver } from '../../src/import/shape/mapping.js';
import { table } from './support.js';

/** Transcodes the records of `csv` (no header) for `headers` of `tableName`; one status (and line) per record. */
function run(tableName: string, headers: string[], csv: string, nullToken: string | null = '\\N', keyColumns: string[] | null = ['id']) {
  const resolver = new FieldResolver(table(tableName));
  const tc = new CopyTranscoder(fieldPlans(headers.map((h) => resolver.resolve(h)), keyColumns), nullToken, keyColumns?.length ?? 0);
  const buf = Buffer.from(csv);
  const out = Buffer.alloc(1 << 16);
  const results: Array<{ status: number; line: string; key: string | null; lines: number }> = [];
  let p = 0;
  while (p < buf.length) {
    const status = tc.record(buf, p, buf.length, true, out, 0);
    results.push({ status, line: status === OK ? out.toString('utf8', 0, tc.outEnd) : '', key: tc.key, lines: tc.lines });
    p = tc.next;
  }
  return results;
}

const ID = 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11';

describe('CSV → COPY transcoder', () => {
  it('passes text and JSON through byte for byte, quotes and all; rewrites empties, nulls, booleans and odd uuids', () => {
    const [r] = run('artists', ['id', 'stage_name', 'is_signed', 'city', 'metadata', 'birthdate'], `{${ID.toUpperCase()}},"Smith, ""DJ"" Jones",Yes,,"{""a"":[1,""ü""]}",\\N\n`);
    expect(r.status).toBe(OK);
    expect(r.line).toBe(`${ID},"Smith, ""DJ"" Jones",t,"",,\n`.replace(',"",,', ',"","{""a"":[1,""ü""]}",'));
    expect(r.key).toBe(ID);
  });

  it('keeps newlines inside quoted fields and counts the lines a record spans', () => {
    const [r] = run('artists', ['id', 'biography'], `${ID},"line one\nline two"\r\n`);
    expect(r).toMatchObject({ status: OK, line: `${ID},"line one\nline two"\n`, lines: 2 });
  });

  it('quotes a lone \\. (it would end COPY data)', () => {
    const [r] = run('labels', ['name'], '\\.\n', null, null);
    expect(r.line).toBe('"\\."\n');
  });

  it('refuses bad values, asks for JSON for volatile defaults, and finds ragged and malformed records', () => {
    const s = (csv: string, headers = ['id', 'is_signed', 'metadata', 'created']) => run('artists', headers, csv)[0].status;
    expect(s(`not-a-uuid,t,,\n`)).toBe(REFUSED);
    expect(s(`${ID},maybe,,\n`)).toBe(REFUSED);
    expect(s(`${ID},t,"{""a"":}",\n`)).toBe(REFUSED);
    expect(s(`${ID},t,,2024-13-01T00:00:00Z\n`)).toBe(REFUSED);
    expect(s(`${ID},t,,2024-01-01 10:00:00+01\n`)).toBe(OK);
    expect(s(`${ID},t,,\n`)).toBe(NEEDS_JSON); // created defaults to now()
    expect(s(`${ID},t,\n`)).toBe(RAGGED);
    expect(s(`${ID},t,,,\n`)).toBe(RAGGED);
    expect(s(`${ID},t"x,,\n`)).toBe(MALFORMED);
    expect(s(`${ID},"t"x,,\n`)).toBe(MALFORMED);
    expect(s(`\\N,t,,2024-01-01T00:00:00Z\n`)).toBe(REFUSED); // id is not nullable
  });

  it('asks for more input when a record is cut off, and for a bigger buffer when it does not fit', () => {
    const resolver = new FieldResolver(table('labels'));
    const tc = new CopyTranscoder(fieldPlans([resolver.resolve('name')], null), null, 0);
    const buf = Buffer.from('"abc\ndef');
    expect(tc.record(buf, 0, buf.length, false, Buffer.alloc(100), 0)).toBe(MORE);
    const full = Buffer.from('abcdefghij\n');
    expect(tc.record(full, 0, full.length, false, Buffer.alloc(4), 0)).toBe(OVERFLOW);
  });

  it('property: finds the same records and lines as csv-parse, wherever the input is cut (MORE) ', () => {
    // three text columns (passed through byte for byte): the COPY lines must parse to the cells written
    const resolver = new FieldResolver(table('artists'));
    const plans = fieldPlans(['stage_name', 'biography', 'city'].map((h) => resolver.resolve(h)), null);
    const cell = fc.string({ unit: fc.constantFrom('a', 'b', ',', '"', '\n', '\r', ' ', 'é', '日', '\\', '.'), minLength: 1, maxLength: 12 });
    fc.assert(
      fc.property(fc.array(fc.tuple(cell, cell, cell), { minLength: 1, maxLength: 12 }), fc.array(fc.nat(400), { maxLength: 6 }), fc.boolean(), (rows, cutsRaw, crlf) => {
        // (a CR or LF in a cell is always quoted: unquoted, either ends a line for COPY)
        const csv = Buffer.from(stringify(rows, { record_delimiter: crlf ? '\r\n' : '\n', quoted_match: /[\r\n]/ }));
        const cuts = [...new Set(cutsRaw.map((c) => c % (csv.length + 1)))].sort((a, b) => a - b);
        const tc = new CopyTranscoder(plans, null, 0);
        const out = Buffer.alloc(1 << 16);
        let o = 0;
        let p = 0;
        let lines = 0;
        let records = 0;
        // the input arrives in pieces: each cut is where the data read so far ends
        for (const end of [...cuts, csv.length]) {
          const eof = end === csv.length;
          while (p < end) {
            const status = tc.record(csv, p, end, eof, out, o);
            if (status === MORE) break;
            expect(status).toBe(OK);
            o = tc.outEnd;
            lines += tc.lines;
            records++;
            p = tc.next;
          }
        }
        expect(records).toBe(rows.length);
        expect(lines).toBe(rows.reduce((sum, r) => sum + 1 + r.join('').split('\n').length - 1, 0));
        const back = parse(out.subarray(0, o), { record_delimiter: '\n' }) as string[][];
        // an empty unquoted COPY cell would be NULL: the cells here are never empty
        expect(back).toEqual(rows.map((r) => [...r]));
      }),
      { numRuns: 400 },
    );
  });

  it('validJson agrees with JSON.parse, in plain and CSV-quoted form', () => {
    const agree = (text: string) => {
      let want = true;
      try {
        JSON.parse(text);
      } catch {
        want = false;
      }
      const esc = text.replace(/"/g, '""');
      expect(validJson(Buffer.from(text), 0, Buffer.byteLength(text), false), text).toBe(want);
      expect(validJson(Buffer.from(esc), 0, Buffer.byteLength(esc), true), esc).toBe(want);
    };
    fc.assert(fc.property(fc.json(), agree), { numRuns: 500 });
    fc.assert(fc.property(fc.string({ unit: fc.constantFrom('{', '}', '[', ']', '"', ',', ':', '1', '-', '.', 'e', 't', 'n', ' ', '\\', 'u', 'a') }), agree), { numRuns: 2000 });
  });
});
