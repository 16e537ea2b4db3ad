/** Statuses worth retrying for an idempotent request (the gateway or service is briefly unavailable). */
export const RETRY_STATUSES = new Set([502, 503, 504]);

/**
 * Seconds (or an HTTP date) from a Retry-After header, in ms; null when absent or unreadable.
 * @example retryAfterMs('2', 0) // 2000
 */
export function retryAfterMs(header: string | undefined, now: number): number | null {
  if (!header) return null;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? null : Math.max(at - now, 0);
}

/**
 * Delay before retry number `attempt` (0-based): exponential backoff with full jitter, or the
 * server's Retry-After when it gave one, capped at `maxMs`.
 * @example backoffMs(2, null, () => 0.5) // 400 (base 200 · 2² · 0.5)
 */
export function backoffMs(attempt: number, retryAfter: number | null, random: () => number = Math.random, baseMs = 200, maxMs = 30_000): number {
  if (retryAfter !== null) return Math.min(retryAfter, maxMs);
  return Math.min(Math.round(baseMs * 2 ** attempt * random()), maxMs);
}

/** What one attempt gave: a value or an error. */
export type Attempt<T> = { value: T } | { error: unknown };

export interface RetryPolicy<T> {
  /** Retries after the first attempt. */
  retries: number;
  /** The pause before another attempt after this one (0-based `attempt`), or null when this outcome is final. */
  again(outcome: Attempt<T>, attempt: number): number | null;
  sleep?: (ms: number) => Promise<void>;
}

/**
 * The one retry loop: runs `attempt` until the policy calls an outcome final or the retries are
 * spent, pausing as it says; the last outcome is returned or thrown.
 * @example await retrying(() => send(req), { retries: 2, again: (o) => ('error' in o ? 100 : null) })
 */
export async function retrying<T>(attempt: () => Promise<T>, policy: RetryPolicy<T>): Promise<T> {
  const sleep = policy.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  for (let n = 0; ; n++) {
    let outcome: Attempt<T>;
    try {
      outcome = { value: await attempt() };
    } catch (error) {
      outcome = { error };
    }
    const wait = n < policy.retries ? policy.again(outcome, n) : null;
    if (wait === null) {
      if ('error' in outcome) throw outcome.error;
      return outcome.value;
    }
    await sleep(wait);
  }
}
