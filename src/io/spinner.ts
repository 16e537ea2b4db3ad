import type { Output } from './streams.js';

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/** A running spinner; `stop()` erases it. */
export interface Spinner {
  update(text: string): void;
  stop(): void;
}

/**
 * Shows a spinner on a terminal stream, but only once the work has taken longer than `delayMs`
 * (quick commands stay quiet). On anything but a terminal it does nothing.
 */
export function startSpinner(out: Output, text: string, delayMs = 1000): Spinner {
  if (!out.isTTY) return { update() {}, stop() {} };
  let label = text;
  let frame = 0;
  let shown = false;
  let ticker: NodeJS.Timeout | undefined;
  const draw = () => {
    shown = true;
    void out.write(`\r\x1b[2K${FRAMES[frame++ % FRAMES.length]} ${label}`);
  };
  const starter = setTimeout(() => {
    draw();
    ticker = setInterval(draw, 80);
    ticker.unref();
  }, delayMs);
  starter.unref();
  return {
    update(t: string) {
      label = t;
    },
    stop() {
      clearTimeout(starter);
      if (ticker) clearInterval(ticker);
      if (shown) void out.write('\r\x1b[2K');
    },
  };
}
