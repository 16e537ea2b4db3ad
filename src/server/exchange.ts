import { webStream } from './stream-body.js';
import { errorReply, payloadTooLarge } from './errors.js';
import type { Reply } from './reply.js';
import type { Principal } from './auth.js';

export { type Reply, reply } from './reply.js';

/**
 * The two ends of an exchange as the stages see them, whatever carried it: what a request offers
 * (`Incoming`) and what an answer is (`Reply`). `fromRequest`/`toResponse` adapt fetch's Request and
 * Response (tests, the in-process transport); listen.ts adapts node:http itself, so a request served
 * over a socket builds no Request, Headers, Response or body stream (together they cost more CPU
 * than parsing, planning and building the SQL of a 50-row page).
 */

/** A request as parsing reads it. */
export interface Incoming {
  readonly method: string;
  /** The target resolved against the server's origin (dot segments removed, as fetch does). */
  readonly url: URL;
  /** A header's value, duplicates joined with ", " (as fetch's Headers do); null when absent. `name` is lower-case. */
  header(name: string): string | null;
  /** The body's bytes (decoded by the parser, or passed to COPY as they are); more than `max` bytes → ApiError 413 without buffering them. */
  bytes(max: number): Promise<Buffer>;
  /** Aborts when the client goes away before its answer: its statement is then cancelled. */
  readonly signal?: AbortSignal;
  /** Who the request runs as, once authenticated (parseRequest sets it): the request log and the 401/403 split read it. */
  principal?: Principal;
}

/** Reads a web body stream, refusing more than `max` bytes without buffering them. */
async function readStream(body: ReadableStream<Uint8Array> | null, max: number): Promise<Buffer> {
  if (!body) return Buffer.alloc(0);
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => {});
      throw payloadTooLarge(max);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/** A fetch Request as an Incoming. */
export function fromRequest(req: Request): Incoming {
  return {
    method: req.method,
    url: new URL(req.url),
    header: (name) => req.headers.get(name),
    async bytes(max) {
      const declared = Number(req.headers.get('content-length'));
      if (Number.isFinite(declared) && declared > max) throw payloadTooLarge(max);
      return readStream(req.body, max);
    },
  };
}

/** A Reply as a fetch Response. */
export function toResponse(r: Reply): Response {
  if (r.stream) return new Response(webStream(r.stream), { status: r.status, headers: r.headers });
  return new Response(r.body, { status: r.status, headers: r.headers });
}

/** `errorReply` as a fetch Response. */
export function errorResponse(err: unknown, log?: (line: string) => void): Response {
  return toResponse(errorReply(err, log));
}
