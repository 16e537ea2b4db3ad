/**
 * How long a test waits for something that must happen (a process to exit, a line to appear, a
 * file to be written) before it fails. A guard against a hang, never a speed check: a shared CI
 * machine with a load average of 15–30 runs everything several times slower than an idle one, and
 * a wait sized for an idle machine failed there (issue 39). Speed is measured by `npm run bench`.
 * The per-test guard (vitest.config.ts testTimeout) is longer still.
 */
export const PATIENCE_MS = 300_000;

/**
 * Polls `check` every `everyMs` until it holds, and answers true; false once PATIENCE_MS has
 * passed without it. A check that throws counts as not yet.
 */
export async function eventually(check: () => boolean | Promise<boolean>, everyMs = 50): Promise<boolean> {
  const deadline = Date.now() + PATIENCE_MS;
  for (;;) {
    if (await Promise.resolve().then(check).catch(() => false)) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
