import { describe, expect, it, vi } from 'vitest';
import { startSpinner } from '../../src/io/spinner.js';
import type { Output } from '../../src/io/streams.js';
import { asOnScreen } from '../e2e/support.js';

/** A terminal-like Output that records what was written. */
function tty(): Output & { text: string } {
  return { isTTY: true, columns: 80, color: false, text: '', async write(t: string) { this.text += t; } } as Output & { text: string };
}

describe('the spinner on a terminal', () => {
  it('draws frames once shown, erases itself on stop, and leaves nothing on the screen before the output', async () => {
    const out = tty();
    const spinner = startSpinner(out, 'Waiting for GET /labels', 0);
    // wait until at least two frames are drawn (a condition, not a duration)
    while ((out.text.match(/⠋|⠙|⠹/g) ?? []).length < 2) await new Promise((r) => setTimeout(r, 20));
    spinner.update('Reading labels: 50');
    while (!out.text.includes('Reading labels: 50')) await new Promise((r) => setTimeout(r, 20));
    spinner.stop();
    await out.write('name\nBlue Note\n');
    expect(out.text).toContain('\r\x1b[2K⠋ Waiting for GET /labels');
    expect(out.text).toMatch(/\r\x1b\[2K$|\r\x1b\[2Kname/);
    expect(asOnScreen(out.text)).toBe('name\nBlue Note\n');
  });

  it('is never drawn when the work ends before its delay, nor on anything but a terminal', () => {
    // Fake timers: "never drawn" is checked after the clock has passed every delay, not after a sleep.
    vi.useFakeTimers();
    try {
      const out = tty();
      const quick = startSpinner(out, 'quick', 1000);
      vi.advanceTimersByTime(999);
      quick.stop();
      const piped = { ...tty(), isTTY: false };
      const s = startSpinner(piped, 'piped', 0);
      vi.advanceTimersByTime(10_000);
      s.stop();
      expect([out.text, piped.text]).toEqual(['', '']);
      // the same clock does draw a spinner on a terminal past its delay: the check above can fail
      const slow = tty();
      const shown = startSpinner(slow, 'slow', 1000);
      vi.advanceTimersByTime(1001);
      shown.stop();
      expect(slow.text).toContain('slow');
    } finally {
      vi.useRealTimers();
    }
  });
});
