import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { once } from 'node:events';
import { tempPathFor } from '../shared/atomic-write.js';
import type { TextSink } from '../format/types.js';

/**
 * A file written through a temporary name and renamed into place on `commit()`, so an
 * interrupted export never leaves a half file that looks complete; `abort()` removes it.
 */
export function fileSink(path: string): TextSink & { commit(): Promise<void>; abort(): Promise<void> } {
  const tmp = tempPathFor(path, 'partial');
  // a high-water mark above one piece of a COPY read (64 KB), so writing overlaps reading the next
  const stream = createWriteStream(tmp, { highWaterMark: 1 << 20 });
  let failed: Error | null = null;
  stream.on('error', (err) => {
    failed = err;
  });
  return {
    async write(chunk) {
      if (failed) throw failed;
      if (!stream.write(chunk)) await once(stream, 'drain');
    },
    async commit() {
      stream.end();
      await once(stream, 'finish');
      if (failed) throw failed;
      await rename(tmp, path);
    },
    async abort() {
      stream.destroy();
      await rm(tmp, { force: true });
    },
  };
}

/** A text-only writer (the CLI's stdout) as a sink: bytes are decoded first (a page ends on a row, so never inside a character). */
export function textSink(out: { write(text: string): Promise<void> }): TextSink {
  // ignoreBOM keeps a BOM (export --bom asks for one); the default would drop it
  const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
  return { write: (chunk) => out.write(typeof chunk === 'string' ? chunk : decoder.decode(chunk)) };
}
