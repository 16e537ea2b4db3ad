import { describe, expect, it } from 'vitest';
import { parsePrefer } from '../../src/grammar/prefer.js';
import { resolveIds, type LookupRow } from '../../src/server/match.js';
import { takeMatch } from '../../src/server/match-preference.js';

/** The pure part of match=: which id each row of a body ends on (src/server/match.ts resolveIds). */
describe('resolveIds', () => {
  const row = (o: number, id: string, ...alts: Array<[string | null, string | null]>): LookupRow =>
    Object.assign({ o, id }, ...alts.map(([k, m], i) => ({ [`k${i}`]: k, [`m${i}`]: m })));

  it('the first alternative with a key that names a stored record decides; else the proposed id stays', () => {
    const rows = [row(1, 'p1', ['a', 'S1'], ['x', 'S2']), row(2, 'p2', [null, null], ['y', 'S3']), row(3, 'p3', ['b', null], ['z', null])];
    expect(resolveIds(rows, 2)).toEqual({ moves: [[1, 'S1'], [2, 'S3']], collapsed: 0 });
  });

  it('a key an earlier row of the body had names the record that row became, through any of its keys', () => {
    const rows = [row(1, 'p1', ['a', null], ['x', null]), row(2, 'p2', ['a', null], [null, null]), row(3, 'p3', [null, null], ['x', null]), row(4, 'p4', ['c', null], ['x', 'S9'])];
    // row 4: its ISRC is new, but its source id names a stored record, which wins over row 1's claim
    expect(resolveIds(rows, 2)).toEqual({ moves: [[2, 'p1'], [3, 'p1'], [4, 'S9']], collapsed: 2 });
  });

  it('rows proposing one id collapse, and a row may name a stored record by its id alone', () => {
    expect(resolveIds([row(1, 'S1', [null, null]), row(2, 'S1', ['k', null]), row(3, 'p3', ['k', null])], 1)).toEqual({ moves: [[3, 'S1']], collapsed: 2 });
  });
});

describe('takeMatch', () => {
  it('takes the first match= out of the invalid preferences (PostgREST keeps the first of a kind)', () => {
    const prefs = parsePrefer(['resolution=merge-duplicates, match=isrc_code|name', 'match=upc_code, nope']);
    const { value, prefs: rest } = takeMatch(prefs);
    expect(value).toBe('isrc_code|name');
    expect(rest.invalid).toEqual(['nope']);
    expect(rest.resolution).toBe('merge-duplicates');
    expect(takeMatch(parsePrefer('return=minimal')).value).toBeNull();
  });
});
