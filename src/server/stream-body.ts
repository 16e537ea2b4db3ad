import type { ServerResponse } from 'node:http';

/**
 * The two adapters' halves of a streamed body (a COPY read): node:http with backpressure, and a
 * web ReadableStream for the fetch adapter. Kept apart from copy-out.ts so that loading the socket
 * adapter loads nothing of planning or query building.
 */

/**
 * Writes a streamed body to node:http with backpressure. An error from the stream, or the client
 * going away, destroys the response: no final chunk is sent, so the client sees the transfer cut
 * off. Resolves with the error, if any (for the log).
 */
export async function writeStream(res: ServerResponse, stream: AsyncIterable<Uint8Array>): Promise<Error | null> {
  const it = stream[Symbol.asyncIterator]();
  try {
    for (;;) {
      const r = await it.next();
      if (r.done) break;
      if (res.destroyed) throw new Error('the client closed the connection');
      if (!res.write(r.value)) await drained(res);
    }
    res.end();
    return null;
  } catch (err) {
    try {
      await it.return?.(undefined);
    } catch {
      /* the stream's own error is the one reported */
    }
    res.destroy();
    return err instanceof Error ? err : new Error(String(err));
  }
}

function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = (err?: Error) => {
      res.off('drain', onDrain);
      res.off('close', onClose);
      if (err) reject(err);
      else resolve();
    };
    const onDrain = () => done();
    const onClose = () => done(new Error('the client closed the connection'));
    res.on('drain', onDrain);
    res.on('close', onClose);
  });
}

/** A streamed body as a web ReadableStream (the fetch adapter): an error errors the stream. */
export function webStream(stream: AsyncIterable<Uint8Array>): ReadableStream<Uint8Array> {
  const it = stream[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const r = await it.next();
      if (r.done) controller.close();
      else controller.enqueue(r.value);
    },
    async cancel() {
      await it.return?.(undefined);
    },
  }, { highWaterMark: 0 });
}
