import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DedupeJudge, type Flagged } from '../../src/import/dedupe/judge.js';
import { DuplicateFinder } from '../../src/io/duplicate-finder.js';

/** The verdicts for a sequence of keys, the way the engine uses the two classes. */
function verdicts(keys: string[], policy: 'last' | 'first' | 'error', inputBytes = 0): string[] {
  const finder = new DuplicateFinder(inputBytes);
  const flagged = new Map<string, Flagged>();
  keys.forEach((k, i) => {
    if (!finder.note(k)) return;
    finder.candidates.set(k, i);
    flag(flagged, k, i, true);
  });
  const judge = new DedupeJudge(policy, finder.candidates, flagged);
  return keys.map((k, i) => judge.judge(k, i));
}

/** The scan's note of a probable repeat: where the key was first flagged, and its valid occurrences from there. */
function flag(flagged: Map<string, Flagged>, k: string, i: number, valid: boolean): void {
  let f = flagged.get(k);
  if (!f) flagged.set(k, (f = { at: i, valid: 0 }));
  if (valid) f.valid++;
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
        const flagged = new Map<string, Flagged>();
        rows.forEach(([k, valid], i) => {
          if (!finder.note(k)) return;
          if (valid) finder.candidates.set(k, i);
          else if (!finder.candidates.has(k)) finder.candidates.set(k, -1);
          flag(flagged, k, i, valid);
        });
        for (const policy of ['last', 'first'] as const) {
          const judge = new DedupeJudge(policy, finder.candidates, flagged);
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

  it('--dedupe error: exact verdicts from the scan alone, whatever the filter flags by mistake and whichever rows are invalid (property)', () => {
    // a stand-in for the Bloom filter that also says "seen" of keys it has not seen (false positives)
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom('a', 'b', 'c', 'd'), fc.boolean(), fc.boolean()), { maxLength: 40 }), (rows) => {
        const seen = new Set<string>();
        const candidates = new Map<string, number>();
        const flagged = new Map<string, Flagged>();
        rows.forEach(([k, valid, falsePositive], i) => {
          const probable = seen.has(k) || falsePositive;
          seen.add(k);
          if (!probable) return;
          if (valid) candidates.set(k, i);
          else if (!candidates.has(k)) candidates.set(k, -1);
          flag(flagged, k, i, valid);
        });
        const judge = new DedupeJudge('error', candidates, flagged);
        const got = rows.map(([k, valid], i) => (valid ? judge.judge(k, i) : 'invalid'));
        const want = rows.map(([k, valid]) => (!valid ? 'invalid' : rows.filter(([k2, v2]) => k2 === k && v2).length > 1 ? 'reject' : 'send'));
        expect(got).toEqual(want);
      }),
      { numRuns: 2000 },
    );
  });

  it('keeps only candidates in memory for a large unique input', () => {
    const finder = new DuplicateFinder(200_000 * 40);
    for (let i = 0; i < 200_000; i++) finder.note(`00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`);
    expect(finder.candidates.size).toBeLessThan(50); // false positives only, a tiny share
  });

  it('says "seen before" rarely for keys never seen: sequential uuids and ISRCs, the smallest filter', () => {
    const seen = (keys: (i: number) => string, bytes: number) => {
      const finder = new DuplicateFinder(bytes);
      let n = 0;
      for (let i = 0; i < 300_000; i++) if (finder.note(keys(i))) n++;
      return n;
    };
    // keys that differ in their last characters only: a filter whose bits depend on too few hash bits says "seen" for thousands
    expect(seen((i) => `70000000-eb51-4b7f-a847-${i.toString(16).padStart(12, '0')}`, 300_000 * 240)).toBeLessThan(10);
    expect(seen((i) => `US${String(i).padStart(10, '0')}`, 0)).toBeLessThan(30);
  });

  it("notes a key the same from its UTF-8 bytes as from its string (the scan reads key cells as bytes)", () => {
    const finder = new DuplicateFinder(0);
    const keys = ['ascii-key', 'Ünïcödé', '0f8a1c2e-0000-4000-8000-000000000001', '東京 1'];
    for (const key of keys) {
      const bytes = Buffer.concat([Buffer.from('x,'), Buffer.from(key), Buffer.from(',y')]);
      expect([key, finder.noteBytes(bytes, 2, bytes.length - 2)]).toEqual([key, false]);
      expect([key, finder.note(key)]).toEqual([key, true]);
    }
    expect(finder.note('a key never noted')).toBe(false);
  });
});
