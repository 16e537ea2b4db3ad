/**
 * Long reads on a thread that others wait for go a slice of records at a time and let the event
 * loop turn between slices: the service's reads of a body (a COPY body's cells, its credit lists)
 * and the import's pass over a file. Other requests' I/O waits for that thread, and so does the
 * embedded store's thread (store/pglite-remote.ts), whose transaction stands still between two of
 * its statements until that thread sends the next one: a bulk command that opens the catalog
 * itself runs the import, the service and the store's proxy on one thread.
 */

/** Records read between two turns (~4 ms of a 5,000-row COPY body's ~40). */
export const SLICE_RECORDS = 500;

/** Resolves after the event loop has turned once (its I/O and messages handled). */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
