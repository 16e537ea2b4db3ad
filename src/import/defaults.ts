/**
 * The import engine's defaults, apart from the engine so that `--help` (src/cli/commands/
 * import-flags.ts, loaded when any command is defined) shows the very values the engine uses
 * without loading it.
 */

export type DedupePolicy = 'last' | 'first' | 'error';
export const DEDUPE_POLICIES: readonly DedupePolicy[] = ['last', 'first', 'error'];
export const DEFAULT_DEDUPE: DedupePolicy = 'last';

/** Defaults: 1,000 rows (5,000 as COPY bodies) or 4 MB a batch (whichever first), 3 batches in flight. */
export const DEFAULT_BATCH_ROWS = 1000;
/** The default when the service takes COPY bodies (our own service): 5,000 rows (still ≤ 4 MB). */
export const DEFAULT_COPY_BATCH_ROWS = 5000;
/** The first COPY batch of an import at the default size: the database starts on it ~20 ms sooner than on a whole batch. */
export const FIRST_COPY_BATCH_ROWS = 1000;
export const DEFAULT_BATCH_BYTES = 4 * 1024 * 1024;
export const DEFAULT_CONCURRENCY = 3;
