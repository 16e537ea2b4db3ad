import type { Readable, Writable } from 'node:stream';

/** A text sink with what a writer needs to know about its terminal. */
export interface Output {
  /** True when this is a terminal (tables, truncation, colour and prompts depend on it). */
  readonly isTTY: boolean;
  /** Terminal width in columns; 0 when unknown or not a terminal. */
  readonly columns: number;
  /** Terminal height in lines, when known (a terminal's first page of a list fits it). */
  readonly rows?: number;
  /** Whether ANSI colour may be written here (NO_COLOR / FORCE_COLOR / --no-color already applied). */
  color: boolean;
  /** Writes text; resolves once the sink can take more (backpressure). */
  write(text: string): Promise<void>;
  /** True once the reader went away (`| head`): producers can stop early. */
  readonly closed?: boolean;
}

/** The three standard streams of a command. */
export interface IO {
  stdin: { isTTY: boolean; stream: Readable };
  stdout: Output;
  stderr: Output;
}

/**
 * Decides whether colour is on for a stream: NO_COLOR (any non-empty value) turns it off,
 * FORCE_COLOR turns it on (`0`/`false` off), otherwise a terminal that is not `dumb`.
 * @example colorEnabled({ NO_COLOR: '1' }, true) // false
 */
export function colorEnabled(env: Record<string, string | undefined>, isTTY: boolean): boolean {
  const force = env.FORCE_COLOR;
  if (force !== undefined && force !== '') return force !== '0' && force.toLowerCase() !== 'false';
  if (env.NO_COLOR) return false;
  return isTTY && env.TERM !== 'dumb';
}

/** Wraps a Node writable (process.stdout/stderr) as an Output; a closed pipe (EPIPE) silences it. */
export function nodeOutput(stream: Writable & { isTTY?: boolean; columns?: number; rows?: number }, env: Record<string, string | undefined>): Output {
  let broken = false;
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') broken = true;
    else throw err;
  });
  const isTTY = Boolean(stream.isTTY);
  return {
    isTTY,
    get columns() {
      return isTTY ? stream.columns ?? 80 : 0;
    },
    get rows() {
      return isTTY ? stream.rows : undefined;
    },
    get closed() {
      return broken;
    },
    color: colorEnabled(env, isTTY),
    write(text: string): Promise<void> {
      if (broken || text === '') return Promise.resolve();
      return stream.write(text) ? Promise.resolve() : drainedOrClosed(stream);
    },
  };
}

/** An Output that collects text in memory (tests, and commands that render to a string). */
export interface BufferOutput extends Output {
  text(): string;
}

/** A new in-memory Output. */
export function bufferOutput(opts: { isTTY?: boolean; columns?: number; rows?: number; color?: boolean } = {}): BufferOutput {
  const chunks: string[] = [];
  const isTTY = opts.isTTY ?? false;
  return {
    isTTY,
    columns: opts.columns ?? (isTTY ? 80 : 0),
    rows: opts.rows,
    color: opts.color ?? false,
    write(text: string) {
      chunks.push(text);
      return Promise.resolve();
    },
    text: () => chunks.join(''),
  };
}

/** Reads a whole stream as UTF-8 text. */
export async function readAll(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * An Output that gathers small writes into chunks of about `bytes` before passing them on: a
 * command printing many short lines (ndjson, csv, findings) to a pipe or file pays one write per
 * chunk instead of one per line (measured: 0.44 of 2.2 s CPU of a 165k-line `catalog check` went to
 * per-line writes). Call `flush()` at the end. Only for non-terminals: a terminal sees each line.
 */
export function batchedOutput(out: Output, bytes = 64 * 1024): Output & { flush(): Promise<void> } {
  let pending: string[] = [];
  let size = 0;
  const flush = async () => {
    if (size === 0) return;
    const text = pending.join('');
    pending = [];
    size = 0;
    await out.write(text);
  };
  return {
    isTTY: out.isTTY,
    get columns() {
      return out.columns;
    },
    get rows() {
      return out.rows;
    },
    get closed() {
      return out.closed;
    },
    color: out.color,
    write(text: string): Promise<void> {
      pending.push(text);
      size += text.length;
      return size >= bytes ? flush() : Promise.resolve();
    },
    flush,
  };
}

/** Resolves when a stream that took more than it could hold drains, or closes (a reader gone: nothing more is waited for). */
export function drainedOrClosed(stream: Pick<Writable, 'once' | 'off'>): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      stream.off('drain', done);
      stream.off('close', done);
      resolve();
    };
    stream.once('drain', done);
    stream.once('close', done);
  });
}
