/**
 * A set of ids held as 53-bit hashes in one sorted Float64Array: 8 bytes an id where a Set of
 * strings costs ~100, so `catalog check` can know a million track ids in 8 MB. A hash collision
 * could only make an unknown id look known (a missed finding, about 1 in 10^10 at a million ids),
 * never report a finding that is not there.
 */
export class IdSet {
  private list: number[] = [];
  private sorted: Float64Array | null = null;

  /** Adds an id (before `freeze`). */
  add(id: string): void {
    this.list.push(hash53(id.toLowerCase()));
  }

  /** Sorts the hashes; `has` works from here on. */
  freeze(): this {
    this.sorted = Float64Array.from(this.list).sort();
    this.list = [];
    return this;
  }

  has(id: string): boolean {
    const a = this.sorted;
    if (!a) throw new Error('IdSet.has before freeze');
    const h = hash53(id.toLowerCase());
    let lo = 0;
    let hi = a.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (a[mid] === h) return true;
      if (a[mid] < h) lo = mid + 1;
      else hi = mid - 1;
    }
    return false;
  }
}

/** cyrb53: two 32-bit multiplicative hashes folded into a 53-bit integer (exact in a double). */
function hash53(s: string): number {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}
