/**
 * Edit distance between two words: inserts, deletes and substitutions cost 1 each, and so does a
 * swap of two neighbours (optimal string alignment) unless `swaps` is false (plain Levenshtein,
 * what the service's relationship hints count). Shared by the CLI's did-you-mean and the service.
 * @example editDistance('stagename', 'stage_name') // 1
 * @example editDistance('ab', 'ba') // 1; editDistance('ab', 'ba', { swaps: false }) // 2
 */
export function editDistance(a: string, b: string, opts: { swaps?: boolean } = {}): number {
  const swaps = opts.swaps ?? true;
  // three rows of the table: i-2, i-1 and i
  let before: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + cost);
      if (swaps && i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, before[j - 2] + 1);
      row.push(d);
    }
    before = prev;
    prev = row;
  }
  return prev[b.length];
}
