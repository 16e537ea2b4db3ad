import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** A temporary copy of a stream; `complete` is false when a stop request cut it short. */
export interface Spool {
  path: string;
  complete: boolean;
  cleanup(): Promise<void>;
}

/**
 * Copies a stream (stdin, a FIFO) to a temporary file, because an import reads its input twice (a
 * scan for duplicate keys, then the load) and memory must stay flat. `signal` stops the copy at
 * once, even while the stream has no writer yet; `check` sees the bytes on their way (a record
 * bound: an endless stream fails instead of filling the disk). `cleanup()` removes the file.
 */
export async function spoolToFile(stream: Readable, ext: string, opts: { dir?: string; signal?: AbortSignal; check?: Transform } = {}): Promise<Spool> {
  const folder = await mkdtemp(join(opts.dir ?? tmpdir(), 'catalog-import-'));
  const path = join(folder, `stdin.${ext}`);
  const cleanup = () => rm(folder, { recursive: true, force: true });
  try {
    if (opts.check) await pipeline(stream, opts.check, createWriteStream(path), { signal: opts.signal });
    else await pipeline(stream, createWriteStream(path), { signal: opts.signal });
    return { path, complete: true, cleanup };
  } catch (err) {
    if (opts.signal?.aborted) return { path, complete: false, cleanup };
    await cleanup();
    throw err;
  }
}
