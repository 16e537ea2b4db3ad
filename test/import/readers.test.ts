import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { detectFormat, openReader } from '../../src/import/readers/index.js';
import { JsonArraySplitter } from '../../src/import/readers/json-splitter.js';
import type { InputFormat, SourceRecord } from '../../src/import/types.js';
import { file, tmp } from './support-files.js';

async function read(name: string, text: string, format: InputFormat): Promise<SourceRecord[]> {
  const p = file(tmp('readers-'), name, text);
  const out: SourceRecord[] = [];
  for await (const r of openReader(p, format).records()) out.push(r);
  return out;
}

function splitAll(text: string, chunk: number): string[] {
  const s = new JsonArraySplitter();
  const out: string[] = [];
  for (let i = 0; i < text.length; i += chunk) out.push(...s.push(text.slice(i, i + chunk)).map((e) => e.text));
  out.push(...s.end().map((e) => e.text));
  return out;
}

describe('JsonArraySplitter', () => {
  it('splits elements across any chunk boundary, brackets and quotes inside strings included', () => {
    const rows = [{ a: 'x]y', b: '}{"', c: [1, [2]] }, { d: 'back\\slash\\"' }, 5, 'str,ing', null, { e: {} }];
    const text = ` [\n${rows.map((r) => JSON.stringify(r)).join(' ,\n ')}\n] `;
    for (const chunk of [1, 2, 3, 7, 1000]) expect(splitAll(text, chunk).map((t) => JSON.parse(t))).toEqual(rows);
  });

  it('property: any array of JSON values comes back element by element, whatever the chunking', () => {
    fc.assert(
      fc.property(fc.array(fc.jsonValue(), { maxLength: 8 }), fc.integer({ min: 1, max: 50 }), (values, chunk) => {
        const text = JSON.stringify(values, null, chunk % 3 === 0 ? 2 : undefined);
        expect(splitAll(text, chunk).map((t) => JSON.parse(t))).toEqual(JSON.parse(text));
      }),
    );
  });

  it('reports the line each element starts on', () => {
    const s = new JsonArraySplitter();
    const els = [...s.push('[\n{"a":1},\n\n{"b":\n2}\n]'), ...s.end()];
    expect(els.map((e) => e.line)).toEqual([2, 4]);
  });

  it('reads concatenated objects when the input does not start with [', () => {
    expect(splitAll('{"a":1}\n{"a":2} {"a":3}', 4)).toEqual(['{"a":1}', '{"a":2}', '{"a":3}']);
  });

  it('fails clearly on an unclosed array or text after it', () => {
    expect(() => splitAll('[{"a":1}', 3)).toThrow(/not closed/);
    expect(() => splitAll('[{"a":1}] x', 3)).toThrow(/after the end/);
    expect(() => splitAll('hello', 3)).toThrow(/expected a JSON array/);
  });
});

describe('readers', () => {
  it('csv: cells exactly as written, line numbers of multi-line records, BOM dropped', async () => {
    const recs = await read('a.csv', '\ufeffid,name\n1,"a\nb"\n\n2,  spaced  \n3,"say ""hi"""\n', 'csv');
    expect(recs.map((r) => [r.index, r.line, r.values])).toEqual([
      [0, 2, { id: '1', name: 'a\nb' }],
      [1, 5, { id: '2', name: '  spaced  ' }],
      [2, 6, { id: '3', name: 'say "hi"' }],
    ]);
  });

  it('csv: CR-only line endings (old Mac Excel) stop at the header with how to convert, not as an unknown field', async () => {
    await expect(read('mac.csv', 'id,name\r1,a\r2,b\r', 'csv')).rejects.toThrow(/line 1 ends with a lone carriage return.*tr '\\r' '\\n'/);
    // CRLF is fine
    expect((await read('win.csv', 'id,name\r\n1,a\r\n', 'csv'))[0].values).toEqual({ id: '1', name: 'a' });
  });

  it('csv: a ragged record is passed on with an error, the rest continue', async () => {
    const recs = await read('a.csv', 'id,name\n1\n2,b\n', 'csv');
    expect(recs[0].error).toMatch(/expected 2 fields/);
    expect(recs[1].values).toEqual({ id: '2', name: 'b' });
  });

  it('ndjson: blank lines skipped, a bad line becomes one errored record', async () => {
    const recs = await read('a.ndjson', '{"a":1}\r\n\n{oops}\n[1]\n{"a":2}', 'ndjson');
    expect(recs.map((r) => [r.line, r.error ? 'error' : r.values])).toEqual([
      [1, { a: 1 }],
      [3, 'error'],
      [4, 'error'],
      [5, { a: 2 }],
    ]);
  });

  it('json: an array streamed element by element', async () => {
    const recs = await read('a.json', '[\n  {"id": "1", "n": [1,2]},\n  {"id": "2"}\n]\n', 'json');
    expect(recs.map((r) => [r.line, r.values])).toEqual([
      [2, { id: '1', n: [1, 2] }],
      [3, { id: '2' }],
    ]);
  });

  it('yaml: a top-level sequence item by item, leading zeros kept as text', async () => {
    const recs = await read('a.yaml', '# seed\n- id: 1\n  upc: 001234\n  name: "x: y"\n  tags:\n    - a\n- id: 2\n  bio: |\n    two\n    lines\n', 'yaml');
    expect(recs.map((r) => [r.line, r.values])).toEqual([
      [2, { id: 1, upc: '001234', name: 'x: y', tags: ['a'] }],
      [7, { id: 2, bio: 'two\nlines\n' }],
    ]);
  });

  it('yaml: a multi-document stream of mappings', async () => {
    const recs = await read('a.yml', '---\nid: 1\n---\nid: 2\nname: b\n...\n', 'yaml');
    expect(recs.map((r) => r.values)).toEqual([{ id: 1 }, { id: 2, name: 'b' }]);
  });

  it('detects the format from the extension unless --format says otherwise', () => {
    expect(detectFormat('x.CSV')).toBe('csv');
    expect(detectFormat('x.jsonl')).toBe('ndjson');
    expect(detectFormat('x.yml')).toBe('yaml');
    expect(detectFormat('x.txt', 'json')).toBe('json');
    expect(() => detectFormat('x.txt')).toThrow(/--format/);
    expect(() => detectFormat('-')).toThrow(/--format/);
  });
});
