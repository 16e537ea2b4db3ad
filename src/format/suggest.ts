import { editDistance } from '../shared/edit-distance.js';

/** The edit distance the did-you-mean hints count (its one home is src/shared/edit-distance.ts). */
export { editDistance };

/**
 * The closest candidate to a mistyped word, if any is close enough (case and `-`/`_` ignored).
 * @example didYouMean('relase_date', ['release_date', 'label_id']) // 'release_date'
 */
export function didYouMean(input: string, candidates: readonly string[]): string | undefined {
  const norm = (s: string) => s.toLowerCase().replace(/[-_\s]/g, '');
  const n = norm(input);
  let best: string | undefined;
  let bestScore = Infinity;
  for (const c of candidates) {
    const score = norm(c) === n ? 0 : editDistance(input.toLowerCase(), c.toLowerCase());
    if (score < bestScore) {
      best = c;
      bestScore = score;
    }
  }
  const limit = Math.max(2, Math.floor(input.length / 3));
  return bestScore <= limit ? best : undefined;
}
