import { describe, expect, it } from 'vitest';
import { createProgress } from '../../src/cli/progress.js';
import { bufferOutput } from '../../src/io/streams.js';

describe('progress display', () => {
  it('prints a plain line every few seconds when stderr is not a terminal', async () => {
    const err = bufferOutput({ isTTY: false });
    let now = 0;
    const p = await createProgress(err, { clock: () => now, label: 'a.csv → tracks', interval: 5 });
    now = 1000;
    p.update({ phase: 'importing', rows: 1000, bytes: 100, totalBytes: 1000 });
    expect(err.text()).toBe('');
    now = 6000;
    p.update({ phase: 'importing', rows: 6000, bytes: 250, totalBytes: 1000 });
    now = 7000;
    p.update({ phase: 'importing', rows: 7000, bytes: 300, totalBytes: 1000 });
    p.done();
    expect(err.text()).toBe('a.csv → tracks: importing 25%, 6,000 rows, 1,000 rows/s, ETA 18 s\n');
  });

  it('draws a bar with rows, rate, percentage and ETA on a terminal', async () => {
    const err = bufferOutput({ isTTY: true, columns: 120 });
    let now = 0;
    const p = await createProgress(err, { clock: () => now, label: 'a.csv → tracks' });
    now = 2000;
    p.update({ phase: 'importing', rows: 2000, bytes: 500, totalBytes: 1000 });
    p.done();
    expect(err.text()).toMatch(/a\.csv → tracks importing \[[█░]+\] 50% \| 2,000 rows \| 1,000 rows\/s \| ETA 2 s/);
  });

  it('shows nothing with -q', async () => {
    const err = bufferOutput({ isTTY: true });
    const p = await createProgress(err, { quiet: true, clock: () => 0, label: 'x' });
    p.update({ phase: 'importing', rows: 1 });
    p.done();
    expect(err.text()).toBe('');
  });
});
