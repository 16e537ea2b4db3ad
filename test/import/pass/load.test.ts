import { describe, expect, it } from 'vitest';
import { FieldResolver } from '../../../src/import/shape/mapping.js';
import { settle } from '../../../src/import/options.js';
import { Account, rejectsPathOf, resumePoint } from '../../../src/import/account/account.js';
import { type Batch, Batcher } from '../../../src/import/batch/batch.js';
import { Deduper, scanInput } from '../../../src/import/dedupe/dedupe.js';
import { loadInput } from '../../../src/import/pass/load.js';
import { RowShaper, Shape, planShape } from '../../../src/import/shape/shape.js';
import { openSource } from '../../../src/import/source/source.js';
import { file, table, tmp } from '../support-files.js';

const id = (n: number) => `a0000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const CSV = `id,stage_name,is_signed\n${id(1)},One,true\n${id(2)},Two,perhaps\n${id(1)},One again,false\n${id(3)},"Three, with ""quotes""",\n`;

/** The stages wired as importFile wires them, with a send stage that only records the batches. */
async function pipeline(opts: { stopAfter?: number; start?: number } = {}) {
  const base = { table: table('artists'), input: file(tmp(), 'a.csv', CSV), batchRows: 2, checkpointPath: null };
  let read = 0;
  const settings = { ...settle(base), stopping: () => opts.stopAfter !== undefined && ++read > opts.stopAfter };
  const source = await openSource(base);
  const shaper = new RowShaper(new FieldResolver(settings.table, {}), true, settings.nullToken, []);
  const scan = await scanInput({ source, shaper, ...settings, stopping: () => false });
  const shape = new Shape(shaper, planShape(settings.table, shaper.resolver, settings.keyColumns, { ignoreDuplicates: false }));
  const deduper = Deduper.open('last', scan, shape.plan.conflictKey);
  const resume = { ...(await resumePoint(base, source, () => {})), index: opts.start ?? 0 };
  const account = new Account(settings, source, resume, rejectsPathOf(base, source), () => scan.headers, true);
  const sent: Batch[] = [];
  const batcher = new Batcher({ rows: 2, bytes: 1 << 20 }, 2, resume, async (b) => (sent.push(b), { inserted: b.rows.length, updated: 0, unchanged: 0, rejects: b.rejects }), (b, o, at) => account.batchDone(b, o, at));
  const copyHead = Buffer.from('id,stage_name,is_signed\n');
  const ctx = { source, shape, deduper, batcher, account, settings, matcher: null, start: resume.index, records: scan.records, headers: scan.headers };
  return { sent, batcher, account, records: () => loadInput({ ...ctx, copyHead: null }), lines: () => loadInput({ ...ctx, copyHead }) };
}

const summary = (sent: Batch[]) => ({
  rows: sent.flatMap((b) => b.rows.map((r) => r.record.index)),
  rejects: sent.flatMap((b) => b.rejects.map((r) => [r.record.line, r.code])),
  deduped: sent.reduce((n, b) => n + b.deduped, 0),
});

describe('load stage', () => {
  it('the record path and the byte path send the same rows, rejects and skips', async () => {
    const viaRecords = await pipeline();
    const r = await viaRecords.records();
    await viaRecords.batcher.finish(true);
    const viaLines = await pipeline();
    const l = await viaLines.lines();
    await viaLines.batcher.finish(true);
    expect(r).toMatchObject({ interrupted: false, read: 4 });
    expect(l).toMatchObject({ interrupted: false, read: 4 });
    const expected = { rows: [2, 3], rejects: [[3, '22P02']], deduped: 1 };
    expect(summary(viaRecords.sent)).toEqual(expected);
    expect(summary(viaLines.sent)).toEqual(expected);
    // the byte path sends COPY lines (an empty cell with a constant default is written as it)
    expect(viaLines.sent.flatMap((b) => b.rows.map((x) => x.copyOut !== null))).toEqual([true, true]);
    expect(viaRecords.sent.flatMap((b) => b.rows.map((x) => x.copyOut !== null))).toEqual([false, false]);
  });

  it('a stop request ends the pass at the next record, on either path', async () => {
    for (const path of ['records', 'lines'] as const) {
      const p = await pipeline({ stopAfter: 1 });
      const res = await p[path]();
      await p.batcher.finish(false);
      expect(res.interrupted).toBe(true);
      expect(p.batcher.committed().index).toBe(0);
    }
  });

  it('records before the resume point are read but not sent', async () => {
    const p = await pipeline({ start: 3 });
    await p.lines();
    await p.batcher.finish(true);
    expect(summary(p.sent)).toEqual({ rows: [3], rejects: [], deduped: 0 });
  });
});
