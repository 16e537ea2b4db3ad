import { describe, expect, it } from 'vitest';
import { type Batch, type BatchOutcome, Batcher, type Position } from '../../../src/import/batch/batch.js';
import type { PendingRow } from '../../../src/import/shape/shape.js';

const row = (index: number, bytes = 10): PendingRow => ({
  record: { index, line: index + 2, values: {} },
  json: '{}',
  copyOut: null,
  copyAt: 0,
  bytes,
  key: null,
  kind: 'insert',
  complete: true,
});

/** A batcher whose send stage completes each batch when the test says so. */
function harness(limits: { rows: number; bytes: number }, concurrency = 3, auto = false) {
  const sent: Batch[] = [];
  const pending = new Map<Batch, () => void>();
  const done: Array<{ start: number; committed: Position }> = [];
  const process = (b: Batch) =>
    new Promise<BatchOutcome>((resolve) => {
      sent.push(b);
      if (auto) return resolve({ inserted: b.rows.length, updated: 0, unchanged: 0, rejects: b.rejects });
      pending.set(b, () => resolve({ inserted: b.rows.length, updated: 0, unchanged: 0, rejects: b.rejects }));
    });
  const batcher = new Batcher(limits, concurrency, { index: 0, line: 1 }, process, (b, _o, committed) => done.push({ start: b.start, committed }));
  const complete = async (b: Batch) => {
    pending.get(b)!();
    pending.delete(b);
    await new Promise((r) => setImmediate(r));
  };
  return { batcher, sent, done, complete };
}

describe('batch stage', () => {
  it('cuts batches by rows and by bytes, whichever comes first', async () => {
    const { batcher, sent } = harness({ rows: 3, bytes: 1000 }, 10, true);
    for (let i = 0; i < 7; i++) {
      batcher.begin(i, i + 2);
      await batcher.add(row(i, i === 4 ? 995 : 10));
    }
    await batcher.finish(true);
    // rows 0-2 fill a batch; row 4 (995 bytes) would overflow [3]: it opens the next batch, and
    // row 5 would overflow that one (a batch body is 2 bytes of brackets plus its rows)
    expect(sent.map((b) => b.rows.map((r) => r.record.index))).toEqual([[0, 1, 2], [3], [4], [5, 6]]);
    expect(sent.map((b) => [b.start, b.end])).toEqual([[0, 3], [3, 4], [4, 5], [5, 7]]);
  });

  it('sends a smaller first batch when asked (the database starts sooner), then batches of the full size', async () => {
    const sent: number[][] = [];
    const process = async (b: Batch) => (sent.push(b.rows.map((r) => r.record.index)), { inserted: b.rows.length, updated: 0, unchanged: 0, rejects: b.rejects });
    const batcher = new Batcher({ rows: 3, bytes: 1000, first: 2 }, 10, { index: 0, line: 1 }, process, () => {});
    for (let i = 0; i < 9; i++) {
      batcher.begin(i, i + 2);
      await batcher.add(row(i));
    }
    await batcher.finish(true);
    expect(sent).toEqual([[0, 1], [2, 3, 4], [5, 6, 7], [8]]);
  });

  it('keeps at most `concurrency` batches in flight: add waits for a free slot', async () => {
    const { batcher, sent, complete } = harness({ rows: 1, bytes: 1000 }, 2);
    batcher.begin(0, 2);
    await batcher.add(row(0));
    batcher.begin(1, 3);
    let third = false;
    // add answers synchronously only while a slot is free: here it must wait
    const adding = Promise.resolve(batcher.add(row(1))).then(() => (third = true));
    await new Promise((r) => setImmediate(r));
    expect(sent).toHaveLength(2);
    expect(third).toBe(false);
    await complete(sent[0]);
    await adding;
    expect(third).toBe(true);
  });

  it('the committed position is the smallest start still in flight, whatever order batches complete in', async () => {
    const { batcher, sent, done, complete } = harness({ rows: 2, bytes: 1000 }, 5);
    for (let i = 0; i < 6; i++) {
      batcher.begin(i, i + 2);
      await batcher.add(row(i));
    }
    expect(sent).toHaveLength(3);
    await complete(sent[1]);
    expect(done.at(-1)!.committed).toEqual({ index: 0, line: 2 });
    await complete(sent[0]);
    expect(done.at(-1)!.committed).toEqual({ index: 4, line: 6 });
    await complete(sent[2]);
    expect(batcher.committed()).toEqual({ index: 6, line: 8 });
  });

  it('rejected and skipped records belong to the open batch and move the position with it', async () => {
    const { batcher, sent } = harness({ rows: 10, bytes: 1000 }, 3, true);
    batcher.begin(0, 2);
    batcher.reject({ index: 0, line: 2, values: {} }, { code: '22P02', message: 'bad' });
    batcher.begin(1, 3);
    batcher.skip();
    batcher.begin(2, 4);
    await batcher.add(row(2));
    await batcher.finish(true);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ start: 0, end: 3, deduped: 1, rejects: [{ code: '22P02', message: 'bad' }] });
  });

  it('a stop sends nothing more; a failed batch holds the committed position back', async () => {
    const failing = new Batcher({ rows: 1, bytes: 1000 }, 3, { index: 0, line: 1 }, async (b) => {
      if (b.start === 0) throw new Error('down');
      return { inserted: 1, updated: 0, unchanged: 0, rejects: [] };
    }, () => {});
    for (let i = 0; i < 3; i++) {
      failing.begin(i, i + 2);
      await failing.add(row(i));
    }
    await failing.finish(false);
    expect(failing.fatal).toEqual(new Error('down'));
    expect(failing.committed()).toEqual({ index: 0, line: 2 });
  });

  it('shrinks its limits when the send stage asks, never below 1 row or 1 KB', () => {
    const { batcher } = harness({ rows: 1000, bytes: 4 << 20 });
    expect(batcher.shrink(500, 1 << 20)).toMatch(/batches shrink from 1000 rows \/ 4194304 bytes to 500 rows \/ 1048576 bytes/);
    batcher.shrink(0, 10);
    expect(batcher.limits).toEqual({ rows: 1, bytes: 1024 });
  });
});
