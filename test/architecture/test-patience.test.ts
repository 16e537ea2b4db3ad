import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, sources } from './sources.js';

/**
 * Issue 39: the suite holds on a busy machine. A test sets no wall-clock limit of its own (the
 * per-test hang guard is vitest.config.ts testTimeout), and a wait for a condition is bounded by
 * test/support/patience.ts, not by a number sized for an idle machine. A deliberately short wait
 * (a request that must time out, a spinner's delay) is the code under test's own setting, passed
 * to it, and is not matched here.
 */
const OWN_TEST_LIMIT = /^\s*\}, \d[\d_]{3,}\);\s*$/m;
const FIXED_DEADLINE = /Date\.now\(\) \+ \d[\d_]*\s*;/;
/** A poll that gives up after a counted number of sleeps: `for (let i = 0; i < 200 …` with a setTimeout in its first lines. */
const COUNTED_POLL = /for \(let \w+ = 0; \w+ < [\d_]+[^\n]*(?:\n[^\n]*){0,4}setTimeout\(/;

describe('tests wait as long as a busy machine needs', () => {
  const TEST = join(ROOT, 'test');
  const files = sources(TEST).map((f) => [relative(TEST, f).split('\\').join('/'), readFileSync(f, 'utf8')] as const);

  it('reads the test tree (the rules below are checked over something)', () => {
    expect(files.length).toBeGreaterThan(100);
  });

  it('no test, hook or describe sets its own timeout', () => {
    expect(files.filter(([, text]) => OWN_TEST_LIMIT.test(text)).map(([rel]) => rel)).toEqual([]);
  });

  it('no wait for a condition ends at a fixed number of milliseconds from now', () => {
    const offenders = files.filter(([rel, text]) => rel !== 'architecture/test-patience.test.ts' && FIXED_DEADLINE.test(text)).map(([rel]) => rel);
    expect(offenders).toEqual([]);
  });

  it('no poll for a condition gives up after a counted number of sleeps (test/support/patience.ts eventually)', () => {
    const offenders = files.filter(([rel, text]) => rel !== 'architecture/test-patience.test.ts' && COUNTED_POLL.test(text)).map(([rel]) => rel);
    expect(offenders).toEqual([]);
  });

  it('the patterns catch what they are for', () => {
    expect(OWN_TEST_LIMIT.test("  it('x', async () => {\n  }, 60_000);\n")).toBe(true);
    expect(FIXED_DEADLINE.test('const deadline = Date.now() + 30_000;')).toBe(true);
    expect(FIXED_DEADLINE.test('const deadline = Date.now() + PATIENCE_MS;')).toBe(false);
    expect(COUNTED_POLL.test('for (let i = 0; i < 200 && !done(); i++) await new Promise((r) => setTimeout(r, 50));')).toBe(true);
    expect(COUNTED_POLL.test('for (let i = 0; i < 200; i++) {\n  if (await ready()) break;\n  await new Promise((r) => setTimeout(r, 50));\n}')).toBe(true);
    expect(COUNTED_POLL.test('for (let i = 0; i < 3; i++) rows.push(i);')).toBe(false);
  });
});
