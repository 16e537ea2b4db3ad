import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KeyIndex } from '../../src/import/key-index.js';

describe('KeyIndex', () => {
  it('stores uuid keys exactly through many growths (no false duplicates)', () => {
    const idx = new KeyIndex();
    const key = (i: number) => `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`;
    for (let i = 0; i < 50_000; i++) {
      expect(idx.get(key(i))).toBe(-1);
      idx.set(key(i), i);
    }
    expect(idx.size).toBe(50_000);
    for (let i = 0; i < 50_000; i += 997) expect(idx.get(key(i))).toBe(i);
    idx.set(key(5), 123);
    expect(idx.get(key(5))).toBe(123);
    expect(idx.size).toBe(50_000);
  });

  it('behaves like a Map for any mix of keys', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.oneof(fc.uuid(), fc.string()), fc.nat(1_000_000)), { maxLength: 200 }), (ops) => {
        const idx = new KeyIndex();
        const map = new Map<string, number>();
        for (const [k, v] of ops) {
          idx.set(k, v);
          map.set(k, v);
        }
        for (const [k, v] of map) expect(idx.get(k)).toBe(v);
        expect(idx.size).toBe(map.size);
      }),
    );
  });
});
