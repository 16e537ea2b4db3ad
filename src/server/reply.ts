/**
 * What an answer is before it is written: the type every stage that answers shares, kept apart
 * from exchange.ts (which adapts fetch and depends on errors.ts) so errors.ts can build one without
 * an import circle.
 */

/** An answer before it is written. */
export interface Reply {
  status: number;
  /** Lower-case names (as a fetch Response lists them). */
  headers: Record<string, string>;
  /** Null: no body at all (HEAD, 204, OPTIONS). */
  body: string | null;
  /** A body sent as it is produced (a COPY read, see copy-out.ts), when `body` is null. */
  stream?: AsyncIterable<Uint8Array>;
}

/** `reply(200, { 'content-type': ... }, body)`. */
export function reply(status: number, headers: Record<string, string>, body: string | null = null): Reply {
  return { status, headers, body };
}
