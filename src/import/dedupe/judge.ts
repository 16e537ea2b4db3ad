/**
 * The load pass's dedupe decisions; the scan pass finds the candidates with DuplicateFinder
 * (src/io/duplicate-finder.ts, shared with `catalog check`'s duplicate rules).
 */

/** What the load pass does with a keyed row. */
export type DedupeVerdict = 'send' | 'skip' | 'reject';

/**
 * Where the scan's Bloom filter first flagged a key as a probable repeat (`at`, a record index),
 * and how many valid occurrences it has from there on. Every occurrence after a key's first noted
 * one is flagged, so before `at` there is at most that one: the key's exact count of valid
 * occurrences is `valid`, plus one when a valid occurrence comes before `at`.
 */
export interface Flagged {
  at: number;
  valid: number;
}

/**
 * Decides, in file order, which row of each key is sent. A candidate's recorded index is the last
 * valid occurrence after its first one, or -1 when every later occurrence was invalid. `flagged`
 * gives the `error` policy its exact counts (see Flagged): a key is judged at its first valid
 * occurrence, and every occurrence of a key that repeats is rejected.
 */
export class DedupeJudge {
  private readonly sent = new Set<string>();
  /** `error`: the keys judged so far, true for a repeated one. */
  private readonly repeated = new Map<string, boolean>();

  constructor(
    private readonly policy: 'last' | 'first' | 'error',
    private readonly candidates: Map<string, number>,
    private readonly flagged: Map<string, Flagged>,
  ) {}

  /** The verdict for the row at `index` with conflict key `key`. */
  judge(key: string, index: number): DedupeVerdict {
    const last = this.candidates.get(key);
    if (last === undefined) return 'send';
    switch (this.policy) {
      case 'last':
        // -1: no valid occurrence after the first one, so the first valid one in file order wins
        if (last === -1) {
          if (this.sent.has(key)) return 'skip';
          this.sent.add(key);
          return 'send';
        }
        return index === last ? 'send' : 'skip';
      case 'first':
        if (this.sent.has(key)) return 'skip';
        this.sent.add(key);
        return 'send';
      case 'error': {
        let repeated = this.repeated.get(key);
        if (repeated === undefined) {
          const f = this.flagged.get(key);
          repeated = f ? (index < f.at ? 1 : 0) + f.valid > 1 : false;
          this.repeated.set(key, repeated);
        }
        return repeated ? 'reject' : 'send';
      }
    }
  }
}
