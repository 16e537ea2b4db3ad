import { describe, expect, it } from 'vitest';
import { formatContentRange, parseContentRange, parseRange, renderRange } from '../../src/grammar/range.js';

describe('Range header', () => {
  it.each<[string | null | undefined, unknown]>([
    ['0-9', { from: 0, to: 9 }], ['10-', { from: 10 }], ['1-0', { from: 1, to: 0 }], ['007-010', { from: 7, to: 10 }],
    ['items=0-9', null], ['-5', null], [' 0-9', null], ['0-9 ', null], ['a-b', null], ['', null], [null, null], [undefined, null],
  ])('%j', (h, out) => {
    expect(parseRange(h)).toStrictEqual(out);
  });

  it('renders', () => {
    expect(renderRange({ from: 0, to: 24 })).toBe('0-24');
    expect(renderRange({ from: 25 })).toBe('25-');
  });
});

describe('Content-Range (§6.2)', () => {
  it.each<[number, number, number | null, string]>([
    [0, 15, null, '0-14/*'], [2, 3, null, '2-4/*'], [0, 0, null, '*/*'], [0, 0, 0, '*/0'], [0, 15, 15, '0-14/15'],
    [0, 5, 15, '0-4/15'], [100, 0, 15, '*/15'], [15, 0, 15, '*/15'], [10, 5, null, '10-14/*'],
  ])('offset %i, %i rows, total %j → %s', (off, n, total, out) => {
    expect(formatContentRange(off, n, total)).toBe(out);
  });

  it.each<[string | null, unknown]>([
    ['0-14/15', { from: 0, to: 14, total: 15 }], ['0-14/*', { from: 0, to: 14 }], ['*/15', { total: 15 }], ['*/*', {}],
    ['bytes 0-1/2', null], ['', null], [null, null],
  ])('parses %j', (h, out) => {
    expect(parseContentRange(h)).toStrictEqual(out);
  });
});
