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
  /** Blocks of 512 bits (16 words, one cache line) in the filter, less one: a key's bits all lie in one block. */
  private readonly blockMask: number;
  /** Candidate key → record index of its latest occurrence. */
  readonly candidates = new Map<string, number>();

  constructor(inputBytes: number) {
    const bytes = Math.min(64 << 20, Math.max(1 << 20, inputBytes / 16));
    // a power of two of bits, so a block is a mask away
    let nbits = 1 << 23;
    while (nbits < bytes * 8 && nbits < 2 ** 29) nbits *= 2;
    this.bits = new Uint32Array(nbits / 32);
    this.blockMask = nbits / 512 - 1;
  }

  /**
   * Records one occurrence of `key` (scan pass); true when the filter has (probably) seen it
   * before. The caller then records the candidate with `candidates.set(key, index)` (or -1 when
   * that occurrence is invalid, see DedupeJudge). The key's UTF-8 bytes are what is hashed, so
   * `note(k)` and `noteBytes` of k's bytes note the same key.
   */
  note(key: string): boolean {
    // its UTF-8 bytes, in a buffer kept for the purpose (a key too long for it gets its own)
    const bytes = key.length * 3 <= this.scratch.length ? this.scratch : Buffer.from(key, 'utf8');
    return this.noteBytes(bytes, 0, bytes === this.scratch ? bytes.write(key, 0, 'utf8') : bytes.length);
  }

  /** `note`'s buffer for a key's UTF-8 bytes. */
  private readonly scratch = Buffer.allocUnsafe(1024);

  /** `note` of the key whose UTF-8 bytes are buf[a, b) (the scan's key cells, read without making a string). */
  noteBytes(buf: Uint8Array, a: number, b: number): boolean {
    let h1 = 0x811c9dc5;
    let h2 = 0x01000193;
    let i = a;
    // four bytes a round (a uuid in 9 rounds, not 36); set() mixes h1's high bits down before it picks a block
    for (; i + 4 <= b; i += 4) {
      const c = buf[i] | (buf[i + 1] << 8) | (buf[i + 2] << 16) | (buf[i + 3] << 24);
      h1 = Math.imul(h1 ^ c, 0x01000193);
      h2 = Math.imul(h2 ^ c, 0x5bd1e995);
      h2 ^= h2 >>> 15;
    }
    for (; i < b; i++) {
      const c = buf[i];
      h1 = Math.imul(h1 ^ c, 0x01000193);
      h2 = Math.imul(h2 ^ c, 0x5bd1e995);
      h2 ^= h2 >>> 15;
    }
    return this.set(h1, h2, b - a);
  }

  /**
   * Sets the key's 8 bits, all in the one 512-bit block `h1` picks (a blocked Bloom filter: one
   * cache line per key, where 10 bits across 8-64 MB cost up to 10 cache misses); each bit's place
   * is 9 bits of its own remix of `h2`. At the filter's size (30+ bits per key) false positives
   * stay rare: 2 in 300k sequential uuids, 3 in 300k sequential ISRCs in the smallest filter.
   */
  private set(h1: number, h2: number, length: number): boolean {
    // (a product carries a word's high bytes only upward: they reach the block's low bits through this)
    h1 ^= h1 >>> 16;
    h1 = Math.imul(h1, 0x85ebca6b);
    h1 ^= h1 >>> 13;
    const base = (h1 & this.blockMask) << 4;
    const bits = this.bits;
    let x = h2 ^ length;
    let seen = true;
    for (let k = 0; k < 8; k++) {
      x = Math.imul(x ^ (x >>> 16), 0x85ebca6b);
      x ^= x >>> 13;
      const word = base + ((x & 511) >>> 5);
      const flag = 1 << (x & 31);
      if ((bits[word] & flag) === 0) {
        seen = false;
        bits[word] |= flag;
      }
    }
    return seen;
  }
}
