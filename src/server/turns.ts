/**
 * The service's long reads of a body (a COPY body's cells, its credit lists) go a slice of records
 * at a time and let the event loop turn between slices, so that nothing waits long for this
 * thread: other requests' I/O, and the embedded store's thread (store/pglite-remote.ts), whose
 * transaction stands still between two of its statements until this thread sends the next one.
 */

/** Records read between two turns (~4 ms of a 5,000-row COPY body's ~40). */
export const SLICE_RECORDS = 500;

/** Resolves after the event loop has turned once (its I/O and messages handled). */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
