import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DedupeJudge } from '../../src/import/dedupe.js';
import { DuplicateFinder } from '../../src/io/duplicate-finder.js';

/** The verdicts for a sequence of keys, the way the engine uses the two classes. */
function verdicts(keys: string[], policy: 'last' | 'first' | 'error', inputBytes = 0): string[] {
  const finder = new DuplicateFinder(inputBytes);
  keys.forEach((k, i) => {
    if (finder.note(k)) finder.candidates.set(k, i);
  });
  const counts = new Map<string, number>();
  for (const k of keys) if (finder.candidates.has(k)) counts.set(k, (counts.get(k) ?? 0) + 1);
  const judge = new DedupeJudge(policy, finder.candidates, counts);
  return keys.map((k, i) => judge.judge(k, i));
}

/** The same decisions made with a plain Map of every key (the obvious, memory-hungry way). */
function reference(keys: string[], policy: 'last' | 'first' | 'error'): string[] {
  const n = new Map<string, number>();
  const lastAt = new Map<string, number>();
  keys.forEach((k, i) => {
    n.set(k, (n.get(k) ?? 0) + 1);
    lastAt.set(k, i);
  });
  const seen = new Set<string>();
  return keys.map((k, i) => {
    if (policy === 'error') return n.get(k)! > 1 ? 'reject' : 'send';
    if (policy === 'last') return lastAt.get(k) === i ? 'send' : 'skip';
    if (seen.has(k)) return 'skip';
    seen.add(k);
    return 'send';
  });
}

describe('duplicate keys', () => {
  it('agrees exactly with a full key map under every policy (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.uuid(), fc.constantFrom('a', 'b', 'c', 'same')), { maxLength: 300 }), (keys) => {
        for (const policy of ['last', 'first', 'error'] as const) expect(verdicts(keys, policy)).toEqual(reference(keys, policy));
      }),
    );
  });

  it('never lets an invalid occurrence win: the last (or first) VALID row of a key is the one sent (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom('a', 'b', 'c'), fc.boolean()), { maxLength: 40 }), (rows) => {
        // the engine's CSV scan: only a (probable) repeat is validated; -1 = no valid later occurrence
        const finder = new DuplicateFinder(0);
        rows.forEach(([k, valid], i) => {
          if (!finder.note(k)) return;
          if (valid) finder.candidates.set(k, i);
          else if (!finder.candidates.has(k)) finder.candidates.set(k, -1);
        });
        for (const policy of ['last', 'first'] as const) {
          const judge = new DedupeJudge(policy, finder.candidates, null);
          const got = rows.map(([k, valid], i) => (valid ? judge.judge(k, i) : 'invalid'));
          const validAt = rows.map(([k, valid], i) => ({ k, valid, i })).filter((r) => r.valid);
          const want = rows.map(([k, valid], i) => {
            if (!valid) return 'invalid';
            const same = validAt.filter((r) => r.k === k);
            return (policy === 'last' ? same[same.length - 1].i : same[0].i) === i ? 'send' : 'skip';
          });
          expect(got).toEqual(want);
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('keeps only candidates in memory for a large unique input', () => {
    const finder = new DuplicateFinder(200_000 * 40);
    for (let i = 0; i < 200_000; i++) finder.note(`00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`);
    expect(finder.candidates.size).toBeLessThan(50); // false positives only, a tiny share
  });
});
