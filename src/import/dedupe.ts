/**
 * The load pass's dedupe decisions; the scan pass finds the candidates with DuplicateFinder
 * (src/io/duplicate-finder.ts, shared with `catalog check`'s duplicate rules).
 */

/** What the load pass does with a keyed row. */
export type DedupeVerdict = 'send' | 'skip' | 'reject';

/**
 * Decides, in file order, which row of each key is sent. A candidate's recorded index is the last
 * valid occurrence after its first one, or -1 when every later occurrence was invalid. `counts` (exact occurrences of the
 * candidates) is needed for the `error` policy only.
 */
export class DedupeJudge {
  private readonly sent = new Set<string>();

  constructor(
    private readonly policy: 'last' | 'first' | 'error',
    private readonly candidates: Map<string, number>,
    private readonly counts: Map<string, number> | null,
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
      case 'error':
        return (this.counts?.get(key) ?? 1) > 1 ? 'reject' : 'send';
    }
  }
}
