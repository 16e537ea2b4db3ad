import { describe, expect, it } from 'vitest';
import { editDistance as suggestEditDistance } from '../../src/format/suggest.js';
import { editDistance } from '../../src/shared/edit-distance.js';

/** The plain Levenshtein distance, written the obvious way (the reference for swaps: false). */
function levenshtein(a: string, b: string): number {
  if (!a.length) return b.length;
  if (!b.length) return a.length;
  const rest = levenshtein(a.slice(1), b.slice(1)) + (a[0] === b[0] ? 0 : 1);
  return Math.min(levenshtein(a.slice(1), b) + 1, levenshtein(a, b.slice(1)) + 1, rest);
}

describe('src/shared/edit-distance.ts: the one edit distance', () => {
  it.each([
    ['', '', 0, 0],
    ['abc', '', 3, 3],
    ['', 'abc', 3, 3],
    ['release', 'release', 0, 0],
    ['stagename', 'stage_name', 1, 1],
    ['relase', 'release', 1, 1],
    ['ab', 'ba', 1, 2], // a swap of neighbours: one edit, or two without swaps
    ['relaeses', 'releases', 1, 2],
    ['ca', 'abc', 3, 3], // optimal string alignment: a swapped pair is not edited again
    ['kitten', 'sitting', 3, 3],
    ['artists', 'tracks', 5, 5],
  ])('%j → %j: %i (swaps), %i (no swaps)', (a, b, withSwaps, without) => {
    expect(editDistance(a, b)).toBe(withSwaps);
    expect(editDistance(a, b, { swaps: false })).toBe(without);
    expect(editDistance(b, a)).toBe(withSwaps);
  });

  it('without swaps is Levenshtein, with swaps never more', () => {
    const words = ['', 'a', 'ab', 'ba', 'abc', 'acb', 'bca', 'label', 'labels', 'lable', 'genres', 'gneres', 'tracks', 'track_artists'];
    for (const a of words) {
      for (const b of words) {
        if (a.length + b.length > 14) continue;
        expect(editDistance(a, b, { swaps: false })).toBe(levenshtein(a, b));
        expect(editDistance(a, b)).toBeLessThanOrEqual(levenshtein(a, b));
      }
    }
  });

  it('is the one the CLI did-you-mean counts with (format/suggest.ts re-exports it)', () => {
    expect(suggestEditDistance).toBe(editDistance);
  });
});
