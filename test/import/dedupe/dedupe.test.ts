import { describe, expect, it } from 'vitest';
import { FieldResolver } from '../../../src/import/shape/mapping.js';
import { Deduper, scanInput } from '../../../src/import/dedupe/dedupe.js';
import { RowShaper } from '../../../src/import/shape/shape.js';
import { openSource } from '../../../src/import/source/source.js';
import { file, table, tmp } from '../support-files.js';

const id = (n: number) => `a0000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

async function scanned(name: string, text: string) {
  const source = await openSource({ input: file(tmp(), name, text) });
  const shaper = new RowShaper(new FieldResolver(table('artists'), {}), source.format === 'csv', '\\N', []);
  const progress: unknown[] = [];
  const scan = await scanInput({ source, shaper, keyColumns: ['id'], progress: (p) => progress.push(p), stopping: () => false });
  return { source, shaper, scan };
}

const verdicts = (d: Deduper, keys: Array<string | null>) => keys.map((k, i) => d.admit(k, i));

describe('dedupe stage', () => {
  for (const [name, text] of [
    ['a.csv', `id,stage_name\n${id(1)},A\n${id(2)},B\n${id(1)},C\n`],
    ['a.ndjson', `{"id":"${id(1)}","stage_name":"A"}\n{"id":"${id(2)}","stage_name":"B"}\n{"id":"${id(1)}","stage_name":"C"}\n`],
  ]) {
    it(`the scan counts records and keeps repeated keys with their last valid index (${name})`, async () => {
      const { scan } = await scanned(name, text);
      expect(scan.records).toBe(3);
      expect([...scan.candidates]).toEqual([[id(1), 2]]);
    });
  }

  it('the scan stops an import with an unknown header before any row is read', async () => {
    await expect(scanned('a.csv', `id,nope\n${id(1)},x\n`)).rejects.toThrow(/unknown field "nope"/);
  });

  it('an invalid occurrence never wins: the valid one is kept', async () => {
    const { scan } = await scanned('a.csv', `id,stage_name,is_signed\n${id(1)},A,true\n${id(1)},B,perhaps\n`);
    expect([...scan.candidates]).toEqual([[id(1), -1]]);
  });

  it('last / first / error policies decide per key in file order', async () => {
    const text = `id,stage_name\n${id(1)},A\n${id(2)},B\n${id(1)},C\n`;
    const { scan } = await scanned('a.csv', text);
    const keys = [id(1), id(2), id(1)];
    expect(verdicts(Deduper.open('last', scan, ['id']), keys)).toEqual(['skip', null, null]);
    expect(verdicts(Deduper.open('first', scan, ['id']), keys)).toEqual([null, null, 'skip']);
    const error = verdicts(Deduper.open('error', scan, ['id']), keys);
    expect(error[1]).toBeNull();
    expect(error[0]).toEqual({ code: '23505', message: expect.stringMatching(/^the key \(id\)=\(a0000000-.*\) appears more than once in the input/) });
    expect(error[2]).toEqual(error[0]);
    expect((Deduper.open('last', scan, ['id'])).admit(null, 0)).toBeNull();
  });

  it('a resumed --dedupe first still knows the keys the committed part sent', async () => {
    const { scan } = await scanned('a.csv', `id,stage_name\n${id(1)},A\n${id(1)},B\n`);
    const d = Deduper.open('first', scan, ['id']);
    expect(d.tracksSkipped).toBe(true);
    d.skipped(id(1), 0);
    expect(d.admit(id(1), 1)).toBe('skip');
  });
});
