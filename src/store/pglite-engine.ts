import { createRequire } from 'node:module';

/**
 * How PGlite runs in this process: V8's settings for its WebAssembly and PostgreSQL's buffer pool.
 * Both are process-wide and apply to catalogs opened (WASM compiled) afterwards, so only processes
 * that own themselves choose: a command that opens the embedded catalog itself, and the background
 * holder. Every V8 flag change goes through here, so that `v8FlagsChanged()` can tell the bundle's
 * entry (scripts/bundle.mjs) not to write a V8 code cache after one: V8 refuses a code cache made
 * under other flags. Light on purpose: every command loads it (src/cli/embedded.ts).
 */

let changed = false;
let smallPool = false;

/** Whether this process changed a V8 flag (a code cache made now would not fit the next process). */
export function v8FlagsChanged(): boolean {
  return changed;
}

/** node:v8 loaded only when a flag is set. */
function setV8Flags(flags: string): void {
  changed = true;
  (createRequire(import.meta.url)('node:v8') as typeof import('node:v8')).setFlagsFromString(flags);
}

/**
 * Makes V8 compile WebAssembly with its baseline compiler (Liftoff) only. PGlite's PostgreSQL is a
 * large WASM module: with tiering on, V8 also compiles hot functions with TurboFan on background
 * threads, and node waits for those at the next turn of the event loop — ~0.4 s that a command
 * running a query or two never earns back (its queries run ~1.5x slower without TurboFan, i.e.
 * milliseconds). Bulk commands and `catalog serve`, which never call this, keep tiering.
 */
export function baselineWasmOnly(): void {
  setV8Flags('--liftoff-only');
}

/**
 * A background holder's engine. It starts while a command waits for it, then serves short commands
 * and now and then a bulk one for minutes. V8 tiers a WASM function up to TurboFan once it has run
 * through a budget (default ~1.8 MB of code executed): opening the catalog ran enough to send
 * hundreds of functions to TurboFan, which took the cores from the open itself (measured on 2
 * cores, 2026-11-28: open and first answer 0.9–1.9 s, against 0.35–0.45 s with Liftoff only). With
 * a budget of 1 GB only what a bulk command runs hot is tiered up: the open costs what Liftoff's
 * does, and an import of 100k tracks through the holder took the CPU it takes with the default
 * budget (17.0–18.3 s; Liftoff only: 23.1–23.5 s). The 16 MB buffer pool (useSmallBufferPool):
 * 70–150 ms less to open, 139 MB resident instead of 268 MB while it waits, ~5% more CPU in that
 * import.
 */
export function holderEngine(): void {
  setV8Flags('--wasm-tiering-budget=1000000000');
  smallPool = true;
}

/**
 * Whether catalogs opened later in this process run with a 16 MB buffer pool instead of 128 MB.
 * PGlite zeroes its whole shared memory at start, and first-touched memory costs ~3 ms per MB on
 * the VMs we measure on: 128 MB was ~0.35 s of every embedded command. The command-line process
 * says yes for commands that read or write a few rows, the background holder for its whole life
 * (holderEngine); bulk commands and `catalog serve` keep the large pool, which saves file reads and
 * writes over seconds of work.
 */
export function useSmallBufferPool(small: boolean): void {
  smallPool = small;
}

/** PostgreSQL's shared_buffers for catalogs opened now, or null for PGlite's default (128 MB). */
export function bufferPool(): string | null {
  return smallPool ? '16MB' : null;
}
