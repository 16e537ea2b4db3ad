import type { Output } from '../io/streams.js';

/** One progress reading: bytes of the input consumed (for % and ETA) and rows handled. */
export interface ProgressReading {
  /** What is happening: "scanning", "importing", "exporting". */
  phase: string;
  rows: number;
  bytes?: number;
  totalBytes?: number;
}

/** Shows progress on stderr; `done()` clears or ends the display. */
export interface ProgressDisplay {
  update(r: ProgressReading): void;
  /**
   * Takes the bar off the screen so that a message can be written on a line of its own (a
   * warning above the bar, never inside it); the next update draws the bar again below it.
   */
  pause(): void;
  done(): void;
}

export interface ProgressOptions {
  quiet?: boolean;
  clock: () => number;
  /** Seconds between plain lines when stderr is not a terminal (default 5). */
  interval?: number;
  /** What the lines are about: "tracks.csv → tracks". */
  label: string;
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

function duration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '?';
  if (seconds < 60) return `${Math.ceil(seconds)} s`;
  const m = Math.floor(seconds / 60);
  return m < 60 ? `${m} min ${Math.round(seconds % 60)} s` : `${Math.floor(m / 60)} h ${m % 60} min`;
}

/**
 * The progress display of a bulk command: a bar (rows, rows/s, %, ETA from bytes read against
 * the file size) when stderr is a terminal, a plain line every few seconds when it is not (CI
 * logs), nothing with -q.
 */
export async function createProgress(err: Output, opts: ProgressOptions): Promise<ProgressDisplay> {
  if (opts.quiet) return { update() {}, pause() {}, done() {} };
  const start = opts.clock();
  const rate = (rows: number) => {
    const s = (opts.clock() - start) / 1000;
    return s > 0 ? rows / s : 0;
  };
  const eta = (r: ProgressReading) => {
    if (!r.totalBytes || !r.bytes) return Number.NaN;
    const s = (opts.clock() - start) / 1000;
    return (s * (r.totalBytes - r.bytes)) / r.bytes;
  };

  if (!err.isTTY) {
    const every = (opts.interval ?? 5) * 1000;
    let last = start;
    return {
      update(r) {
        const now = opts.clock();
        if (now - last < every) return;
        last = now;
        const pct = r.totalBytes ? `${Math.floor((100 * (r.bytes ?? 0)) / r.totalBytes)}%, ` : '';
        const etaText = r.totalBytes ? `, ETA ${duration(eta(r))}` : '';
        void err.write(`${opts.label}: ${r.phase} ${pct}${fmt(r.rows)} rows, ${fmt(rate(r.rows))} rows/s${etaText}\n`);
      },
      pause() {},
      done() {},
    };
  }

  const { SingleBar } = await import('cli-progress');
  // cli-progress draws on a stream; route it through our Output so tests and pipes behave
  const stream = {
    isTTY: true,
    get columns() {
      return err.columns || 80;
    },
    write(s: string) {
      void err.write(s);
      return true;
    },
  } as unknown as NodeJS.WriteStream;
  let bar: InstanceType<typeof SingleBar> | null = null;
  return {
    update(r) {
      const payload = { phase: r.phase, rows: fmt(r.rows), rate: fmt(rate(r.rows)), etaText: duration(eta(r)) };
      const known = Boolean(r.totalBytes && r.totalBytes > 0);
      if (!bar) {
        // without a size (export, stdin) there is no percentage to show: rows and rate only
        bar = new SingleBar({
          stream,
          format: known
            ? `${opts.label} {phase} [{bar}] {percentage}% | {rows} rows | {rate} rows/s | ETA {etaText}`
            : `${opts.label} {phase} | {rows} rows | {rate} rows/s`,
          barsize: 24,
          barCompleteChar: '\u2588',
          barIncompleteChar: '\u2591',
          hideCursor: true,
          clearOnComplete: true,
          fps: 5,
        });
        bar.start(known ? (r.totalBytes as number) : 1, known ? (r.bytes ?? 0) : 0, payload);
      } else {
        if (known) bar.setTotal(r.totalBytes as number);
        bar.update(known ? (r.bytes ?? 0) : 0, payload);
      }
    },
    // cli-progress saves the cursor when a bar starts and restores it when it stops: a line
    // written while a bar is up would be drawn over (and the summary after it too). So the bar
    // stops (clearing its line) before anything else is written, and starts again afterwards.
    pause() {
      bar?.stop();
      bar = null;
    },
    done() {
      bar?.stop();
      bar = null;
    },
  };
}
