/**
 * Finds conflict keys that occur more than once in an input without holding every key in memory.
 *
 * The scan pass feeds every key to a Bloom filter; a key the filter has (probably) seen before
 * becomes a candidate, kept exactly in a Map with the index of its latest occurrence. Only
 * candidates — the real duplicates plus a small share of false positives — cost memory, so a
 * 1M-row file needs about 9 MB (the filter is sized at 1/16 of the input's bytes, 1–64 MB) instead
 * of a key set of 40–150 MB. False positives never drop a row: the load pass decides with exact
 * comparisons (`last`: the candidate's recorded index; `first`: an exact set of candidates
 * already sent; `error`: exact counts from the scan itself, see `Flagged` in src/import/dedupe/judge.ts).
 */
export class DuplicateFinder {
  private readonly bits: Uint32Array;
  private readonly mask: number;
  /** Candidate key → record index of its latest occurrence. */
  readonly candidates = new Map<string, number>();

  constructor(inputBytes: number) {
    const bytes = Math.min(64 << 20, Math.max(1 << 20, inputBytes / 16));
    // a power of two of bits, so an index is a mask away
    let nbits = 1 << 23;
    while (nbits < bytes * 8 && nbits < 2 ** 29) nbits *= 2;
    this.bits = new Uint32Array(nbits / 32);
    this.mask = nbits - 1;
  }

  /**
   * Records one occurrence of `key` (scan pass); true when the filter has (probably) seen it
   * before. The caller then records the candidate with `candidates.set(key, index)` (or -1 when
   * that occurrence is invalid, see DedupeJudge).
   */
  note(key: string): boolean {
    let h1 = 0x811c9dc5;
    let h2 = 0x01000193 ^ key.length;
    for (let i = 0; i < key.length; i++) {
      const c = key.charCodeAt(i);
      h1 = Math.imul(h1 ^ c, 0x01000193);
      h2 = Math.imul(h2 ^ c, 0x5bd1e995);
      h2 ^= h2 >>> 15;
    }
    h2 |= 1;
    let seen = true;
    for (let k = 0; k < 10; k++) {
      const bit = (h1 + Math.imul(k, h2)) & this.mask;
      const word = bit >>> 5;
      const flag = 1 << (bit & 31);
      if ((this.bits[word] & flag) === 0) {
        seen = false;
        this.bits[word] |= flag;
      }
    }
    return seen;
  }
}
