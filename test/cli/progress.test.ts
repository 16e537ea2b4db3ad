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

/**
 * A tiny terminal: applies what cli-progress writes (CR, clear line, save/restore cursor, newline)
 * to a grid of lines, so a test can read the screen a person would see.
 */
function screenOf(raw: string): string[] {
  const lines: string[] = [''];
  let row = 0;
  let col = 0;
  let saved = { row: 0, col: 0 };
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    if (c === '\x1b') {
      const m = /^\x1b(7|8|\[[0-9;?]*[A-Za-z])/.exec(raw.slice(i));
      if (!m) continue;
      const seq = m[1];
      if (seq === '7' || seq === '[s') saved = { row, col };
      else if (seq === '8' || seq === '[u') ({ row, col } = saved);
      else if (/^\[[0-9]*K$/.test(seq)) lines[row] = seq === '[K' || seq === '[0K' ? lines[row].slice(0, col) : '';
      else if (/^\[[0-9]*G$/.test(seq)) col = Math.max(0, Number(seq.slice(1, -1) || 1) - 1);
      i += m[0].length - 1;
    } else if (c === '\r') col = 0;
    else if (c === '\n') {
      row++;
      col = 0;
      lines[row] ??= '';
    } else {
      const line = lines[row].padEnd(col);
      lines[row] = line.slice(0, col) + c + line.slice(col + 1);
      col++;
    }
  }
  return lines;
}

describe('progress bar and messages (issue 17)', () => {
  it('a warning during the bar gets a line of its own above the bar, and the summary after the bar stays whole', async () => {
    const err = bufferOutput({ isTTY: true, columns: 80 });
    let now = 0;
    const p = await createProgress(err, { clock: () => now, label: 'a.csv → tracks' });
    now = 1000;
    p.update({ phase: 'importing', rows: 1000, bytes: 100, totalBytes: 1000 });
    p.pause();
    await err.write('warning: batch halved after 413\n');
    now = 2000;
    p.update({ phase: 'importing', rows: 2000, bytes: 500, totalBytes: 1000 });
    p.done();
    await err.write('a.csv → tracks: 2,000 inserted, 0 updated, 0 unchanged, 0 rejected, 0 deduped\n');
    const screen = screenOf(err.text()).filter((l) => l.trim() !== '');
    expect(screen).toEqual(['warning: batch halved after 413', 'a.csv → tracks: 2,000 inserted, 0 updated, 0 unchanged, 0 rejected, 0 deduped']);
  });
});
