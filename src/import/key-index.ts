import { normalizeUuid } from './coerce.js';

/**
 * Conflict key → record index, for finding duplicate keys in a file before anything is sent.
 *
 * Memory bound: uuid keys (the usual `id`) live in an open-addressing table of typed arrays,
 * 20 bytes a slot at a load of at most 0.7: about 40 MB for 1M keys, 320 MB for 8M, outside the
 * JS heap. Any other key (text, composite) goes in a Map at roughly 100–150 bytes per key, which
 * is fine up to a few million short keys.
 */
export class KeyIndex {
  private words = new Uint32Array(4 * 1024);
  /** record index + 1 per slot; 0 = empty */
  private slots = new Uint32Array(1024);
  private used = 0;
  private readonly other = new Map<string, number>();

  /** Number of distinct keys. */
  get size(): number {
    return this.used + this.other.size;
  }

  /** The record index stored for `key`, or -1. */
  get(key: string): number {
    const w = uuidWords(key);
    if (!w) return this.other.get(key) ?? -1;
    const slot = this.find(w);
    return this.slots[slot] === 0 ? -1 : this.slots[slot] - 1;
  }

  /** Stores `index` for `key` (replacing any earlier one). */
  set(key: string, index: number): void {
    const w = uuidWords(key);
    if (!w) {
      this.other.set(key, index);
      return;
    }
    let slot = this.find(w);
    if (this.slots[slot] === 0) {
      if ((this.used + 1) / this.slots.length > 0.7) {
        this.grow();
        slot = this.find(w);
      }
      this.used++;
      this.words.set(w, slot * 4);
    }
    this.slots[slot] = index + 1;
  }

  private find(w: Uint32Array): number {
    const mask = this.slots.length - 1;
    let h = Math.imul(w[0] ^ Math.imul(w[1], 0x9e3779b1) ^ Math.imul(w[2], 0x85ebca6b) ^ Math.imul(w[3], 0xc2b2ae35), 0x27d4eb2f);
    h ^= h >>> 15;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      if (this.slots[i] === 0) return i;
      const o = i * 4;
      if (this.words[o] === w[0] && this.words[o + 1] === w[1] && this.words[o + 2] === w[2] && this.words[o + 3] === w[3]) return i;
    }
  }

  private grow(): void {
    const oldWords = this.words;
    const oldSlots = this.slots;
    this.words = new Uint32Array(oldWords.length * 2);
    this.slots = new Uint32Array(oldSlots.length * 2);
    const w = new Uint32Array(4);
    for (let i = 0; i < oldSlots.length; i++) {
      if (oldSlots[i] === 0) continue;
      w.set(oldWords.subarray(i * 4, i * 4 + 4));
      const slot = this.find(w);
      this.words.set(w, slot * 4);
      this.slots[slot] = oldSlots[i];
    }
  }
}

const scratch = new Uint32Array(4);

/** The 128 bits of a uuid as four words (shared scratch array), or null for any other key. */
function uuidWords(key: string): Uint32Array | null {
  if (key.length !== 36) return null;
  const u = normalizeUuid(key);
  if (u !== key) return null;
  const hex = u.replace(/-/g, '');
  for (let i = 0; i < 4; i++) scratch[i] = Number.parseInt(hex.slice(i * 8, i * 8 + 8), 16) >>> 0;
  return scratch;
}
