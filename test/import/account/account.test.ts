import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readCheckpoint } from '../../../src/import/account/checkpoint.js';
import { type ImportProgress, settle } from '../../../src/import/options.js';
import { Account, rejectsPathOf, resumePoint, summarize } from '../../../src/import/account/account.js';
import type { Batch } from '../../../src/import/batch/batch.js';
import { openSource } from '../../../src/import/source/source.js';
import { file, table, tmp } from '../support-files.js';

const batch = (start: number, end: number, deduped = 0): Batch => ({ start, line: start + 2, end, rows: [], bytes: 2, rejects: [], deduped, unchanged: 0 });
const reject = (index: number) => ({ record: { index, line: index + 2, values: { name: `n${index}` } }, code: '22P02', message: `bad ${index}` });

async function setup(opts: { dryRun?: boolean } = {}) {
  const input = file(tmp(), 'labels.csv', 'name\na\nb\nc\nd\n');
  const base = { table: table('labels'), input, ...opts };
  const progress: ImportProgress[] = [];
  const settings = settle({ ...base, onProgress: (p) => progress.push(p), clock: () => 0 });
  const source = await openSource(base);
  const resume = await resumePoint(base, source, () => {});
  const account = new Account(settings, source, resume, rejectsPathOf(base, source), () => ['name'], false);
  await account.start();
  return { base, input, source, resume, account, progress };
}

describe('account stage', () => {
  it('counts outcomes, writes rejects when their batch completes, and moves the checkpoint', async () => {
    const { input, account, progress } = await setup();
    account.batchDone(batch(2, 4, 1), { inserted: 1, updated: 0, unchanged: 0, rejects: [reject(3)] }, { index: 0, line: 2 });
    account.batchDone(batch(0, 2), { inserted: 1, updated: 1, unchanged: 0, rejects: [] }, { index: 4, line: 6 });
    account.progress(10, 4, 4);
    await account.close(false, { index: 4, line: 6 });
    expect(account.totals).toEqual({ inserted: 2, updated: 1, unchanged: 0, rejected: 1, deduped: 1 });
    expect(readFileSync(`${input}.rejects.csv`, 'utf8')).toBe('_line,_code,_message,name\n5,22P02,bad 3,n3\n');
    expect(await readCheckpoint(`${input}.checkpoint.json`)).toMatchObject({ table: 'labels', committed: 4, line: 6, counts: account.totals });
    expect(progress.at(-1)).toMatchObject({ phase: 'load', bytes: 10, records: 4, totalRecords: 4, written: 3, rejected: 1 });
  });

  it('a finished import removes its checkpoint; a dry run writes no file at all', async () => {
    const { input, account } = await setup();
    writeFileSync(`${input}.checkpoint.json`, '{}');
    await account.close(true, { index: 4, line: 6 });
    expect(existsSync(`${input}.checkpoint.json`)).toBe(false);
    const dry = await setup({ dryRun: true });
    dry.account.batchDone(batch(0, 4), { inserted: 3, updated: 0, unchanged: 0, rejects: [reject(1)] }, { index: 4, line: 6 });
    await dry.account.close(false, { index: 4, line: 6 });
    expect(existsSync(`${dry.input}.rejects.csv`)).toBe(false);
    expect(existsSync(`${dry.input}.checkpoint.json`)).toBe(false);
  });

  it('resumes from a checkpoint of the same input and table only', async () => {
    const first = await setup();
    first.account.batchDone(batch(0, 2), { inserted: 2, updated: 0, unchanged: 0, rejects: [] }, { index: 2, line: 4 });
    await first.account.close(false, { index: 2, line: 4 });
    const notes: string[] = [];
    const again = await resumePoint({ ...first.base, resume: true }, first.source, (m) => notes.push(m));
    expect(again).toMatchObject({ index: 2, line: 4, carried: { inserted: 2 } });
    expect(notes[0]).toMatch(/resuming .* at line 4 \(record 3\); 2 rows were already written/);
    await expect(resumePoint({ ...first.base, table: table('artists'), resume: true }, first.source, () => {})).rejects.toMatchObject({ kind: 'usage', message: expect.stringMatching(/is for labels, not artists/) });
    writeFileSync(first.input, 'name\nchanged rows\n');
    const changed = await openSource(first.base);
    await expect(resumePoint({ ...first.base, resume: true }, changed, () => {})).rejects.toThrow(/cannot resume: .* \(its size changed/);
  });

  it('summarizes: counts, rejected rows in line order, where a stopped import stands', async () => {
    const { base, source, resume, account } = await setup();
    account.batchDone(batch(2, 4), { inserted: 0, updated: 0, unchanged: 0, rejects: [reject(3)] }, { index: 0, line: 2 });
    account.batchDone(batch(0, 2), { inserted: 1, updated: 0, unchanged: 0, rejects: [reject(0)] }, { index: 4, line: 6 });
    await account.close(false, { index: 4, line: 6 });
    const s = summarize({ opts: base, source, account, resume, records: 4, finished: false, interrupted: true, plan: { conflictKey: null, columns: ['name'], ignoredFields: [] }, limits: { rows: 10, bytes: 1024 }, requests: 3, seconds: 2 });
    expect(s).toMatchObject({ table: 'labels', records: 4, inserted: 1, rejected: 2, interrupted: true, stoppedAtLine: 6, checkpointFile: `${base.input}.checkpoint.json`, rowsPerSecond: 2, requests: 3 });
    expect(s.rejectedRows.map((r) => r.line)).toEqual([2, 5]);
  });
});
