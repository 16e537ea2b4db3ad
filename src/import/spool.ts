import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/**
 * Copies a stream (stdin) to a temporary file, because an import reads its input twice (a scan
 * for duplicate keys, then the load) and memory must stay flat. `cleanup()` removes it.
 */
export async function spoolToFile(stream: Readable, ext: string, dir = tmpdir()): Promise<{ path: string; cleanup(): Promise<void> }> {
  const folder = await mkdtemp(join(dir, 'catalog-import-'));
  const path = join(folder, `stdin.${ext}`);
  await pipeline(stream, createWriteStream(path));
  return { path, cleanup: () => rm(folder, { recursive: true, force: true }) };
}
