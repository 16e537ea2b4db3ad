import { describe, expect, it } from 'vitest';
import { clip } from '../../src/import/readers/input.js';
import { csvReader } from '../../src/import/readers/csv.js';
import { JsonArraySplitter } from '../../src/import/readers/json-splitter.js';
import { ImportError } from '../../src/import/types.js';
import { file, tmp } from './support-files.js';

describe('record bounds', () => {
  it('clip shows the escaped start of a text and its length', () => {
    expect(clip('short')).toBe('"short"');
    expect(clip('\u0000'.repeat(100), 3)).toBe('"\\u0000\\u0000\\u0000…" (100 characters)');
  });

  it('a JSON element past the bound throws, naming its line', () => {
    const s = new JsonArraySplitter(10);
    expect(s.push('[{"a":1},\n{"b":"')).toEqual([{ text: '{"a":1}', line: 1 }]);
    expect(() => s.push('0123456789')).toThrow(/the element starting at line 2 is longer than/);
  });

  it('a CSV header over 1 MiB stops the read at once, showing only its start', async () => {
    const path = file(tmp(), 'x.csv', `${'\u0001'.repeat(2 * 1024 * 1024)}\n`);
    const reader = csvReader(path);
    const err = await (async () => {
      for await (const _ of reader.records()) break;
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ImportError);
    expect(err).toMatchObject({ kind: 'usage' });
    expect((err as Error).message).toMatch(/the header \(line 1\) is longer than 1 MiB.*it starts "\\u0001\\u0001/);
    expect((err as Error).message.length).toBeLessThan(600);
  });
});
