import { spawn } from 'node:child_process';
import type { Writable } from 'node:stream';
import { nodeOutput, type Output } from './streams.js';

/** A pager process reading what a command prints (`$PAGER`, `less -SR` by default). */
export interface Pager {
  /** Text for the pager; `closed` once the user quit it. */
  out: Output;
  /** Ends its input and waits until the user leaves it. */
  done(): Promise<void>;
}

/** The pager command: CATALOG_PAGER, else PAGER, else `less -SR`; null when it is `cat` or empty (no pager). */
export function pagerCommand(env: Record<string, string | undefined>): string | null {
  const command = (env.CATALOG_PAGER ?? env.PAGER ?? 'less -SR').trim();
  return command === '' || command === 'cat' ? null : command;
}

/**
 * Starts the pager through the shell (so `PAGER='less -S'` works), on the terminal `terminal`
 * describes: what it is given is drawn for that terminal's width and colour. LESS defaults to
 * `FRX` as git and gh set it (quit when it fits one screen, keep colours, leave the text on
 * screen). Null when it cannot start.
 */
export function startPager(command: string, env: Record<string, string | undefined>, terminal: Output): Pager | null {
  let child;
  try {
    child = spawn('/bin/sh', ['-c', command], { stdio: ['pipe', 'inherit', 'inherit'], env: { ...env, LESS: env.LESS ?? 'FRX', LV: env.LV ?? '-c' } });
  } catch {
    return null;
  }
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', () => resolve());
  });
  const pipe = nodeOutput(child.stdin as Writable & { isTTY?: boolean }, {});
  const out: Output = {
    isTTY: true,
    get columns() {
      return terminal.columns;
    },
    get rows() {
      return terminal.rows;
    },
    get closed() {
      return Boolean(pipe.closed) || child.exitCode !== null;
    },
    color: terminal.color,
    write: (text) => pipe.write(text),
  };
  return {
    out,
    async done() {
      child.stdin.end();
      await exited;
    },
  };
}
