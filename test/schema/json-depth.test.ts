import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH, jsonTextTooDeep, jsonTooDeep, stringifyDeep, valueTooDeep } from '../../src/schema/json-depth.js';

const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

/** The depth of a parsed value, recursively (the reference; small values only). */
function depthOf(v: unknown): number {
  if (v === null || typeof v !== 'object') return 0;
  const children = Array.isArray(v) ? v : Object.values(v as Record<string, unknown>);
  return 1 + Math.max(0, ...children.map(depthOf));
}

describe('JSON nesting depth, checked without recursion', () => {
  it('finds the first bracket past the limit, not counting brackets inside strings or after escaped quotes', () => {
    expect(jsonTooDeep(Buffer.from('[[1]]'), 2)).toBe(-1);
    expect(jsonTooDeep(Buffer.from('[[1]]'), 1)).toBe(1);
    expect(jsonTooDeep(Buffer.from('{"a":"[[[[","b":"\\"[[["}'), 1)).toBe(-1);
    expect(jsonTooDeep(Buffer.from('{"a\\\\":[[1]]}'), 2)).toBe(8);
    // a quoted CSV field's content: every quote doubled
    expect(jsonTooDeep(Buffer.from('{""a"":""[[[["",""b"":""\\""[[[""}'), 1, 0, undefined, 2)).toBe(-1);
    expect(jsonTooDeep(Buffer.from('{""a"":[[1]]}'), 2, 0, undefined, 2)).toBe(8);
    expect(jsonTextTooDeep(nested(MAX_JSON_DEPTH))).toBe(false);
    expect(jsonTextTooDeep(nested(MAX_JSON_DEPTH + 1))).toBe(true);
  });

  it('agrees with a recursive measure on random JSON, as text (plain and CSV-quoted) and as a value', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), fc.nat(7), (value, limit) => {
        const deep = depthOf(value) > limit;
        const text = JSON.stringify(value);
        expect(jsonTooDeep(Buffer.from(text), limit) >= 0).toBe(deep);
        expect(jsonTooDeep(Buffer.from(text.replaceAll('"', '""')), limit, 0, undefined, 2) >= 0).toBe(deep);
        expect(valueTooDeep(value, limit)).toBe(deep);
      }),
      { numRuns: 500 },
    );
  });

  it('measures and writes a value nested 200,000 deep without a stack overflow', () => {
    const value = JSON.parse(nested(200_000)) as unknown;
    expect(valueTooDeep(value)).toBe(true);
    expect(() => JSON.stringify(value)).toThrow(RangeError);
    expect(stringifyDeep(value)).toBe(nested(200_000));
    expect(stringifyDeep({ a: [1, 'x', null, { b: undefined, c: true }], d: undefined })).toBe(JSON.stringify({ a: [1, 'x', null, { c: true }] }));
  });
});
