import { describe, expect, it } from 'vitest';
import { importFile } from '../../../src/import/engine.js';
import { type RowCheck, runChecks } from '../../../src/import/shape/check.js';
import { disposeStore, STORE_KINDS } from '../../support/stores.js';
import { file, rowsOf, serverFor, table, tmp } from '../support.js';

const rec = { index: 0, line: 2, values: {} };
const needs = (field: string): RowCheck => ({
  name: `needs-${field}`,
  check: (row) => (row[field] ? null : { code: 'CHECK', message: `${field} is required` }),
});

describe('check stage', () => {
  it('answers the first fault of the checks in order, or null', () => {
    expect(runChecks([needs('a'), needs('b')], { a: 1, b: 2 }, rec)).toBeNull();
    expect(runChecks([needs('a'), needs('b')], {}, rec)).toEqual({ code: 'CHECK', message: 'a is required' });
    expect(runChecks([needs('a'), needs('b')], { a: 1 }, rec)).toEqual({ code: 'CHECK', message: 'b is required' });
    expect(runChecks([], {}, rec)).toBeNull();
  });

  const kind = STORE_KINDS[0];
  it.each(['csv', 'ndjson'])('rejects the rows a check faults, on every path (%s), and lands the rest', async (format) => {
    const store = await kind.make();
    try {
      const id = (n: number) => `a0000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
      const text =
        format === 'csv'
          ? `id,stage_name,city\n${id(1)},One,Paris\n${id(2)},Two,\n${id(3)},Three,Oslo\n`
          : [`{"id":"${id(1)}","stage_name":"One","city":"Paris"}`, `{"id":"${id(2)}","stage_name":"Two"}`, `{"id":"${id(3)}","stage_name":"Three","city":"Oslo"}`].join('\n');
      const input = file(tmp(), `a.${format}`, text);
      const s = await importFile({ table: table('artists'), input, checks: [needs('city')] }, serverFor(store));
      expect(s).toMatchObject({ inserted: 2, rejected: 1, rejectedRows: [{ line: format === 'csv' ? 3 : 2, code: 'CHECK', message: 'city is required' }] });
      expect((await rowsOf(store, 'artists', 'id,stage_name')).map((r) => r.stage_name).sort()).toEqual(['One', 'Three']);
    } finally {
      await disposeStore(store);
    }
  });

  it('a row a check rejects never wins a dedupe', async () => {
    const store = await kind.make();
    try {
      const id = 'a0000000-0000-4000-8000-000000000001';
      const input = file(tmp(), 'a.csv', `id,stage_name,city\n${id},Good,Paris\n${id},Bad,\n`);
      const s = await importFile({ table: table('artists'), input, checks: [needs('city')] }, serverFor(store));
      expect(s).toMatchObject({ inserted: 1, rejected: 1 });
      expect((await rowsOf(store, 'artists', 'id,stage_name')).map((r) => r.stage_name)).toEqual(['Good']);
    } finally {
      await disposeStore(store);
    }
  });
});
