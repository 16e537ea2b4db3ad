import { describe, expect, it } from 'vitest';
import { MEDIA, negotiate, parseAccept, parseMediaType } from '../../src/grammar/media.js';

const types = (h: string | null | undefined): string[] => parseAccept(h).map((m) => m.type);
const TABLE = [MEDIA.json, MEDIA.csv, MEDIA.object, MEDIA.array];

describe('parseAccept', () => {
  it('defaults to */* when absent or empty', () => {
    expect(parseAccept(undefined)).toStrictEqual([{ type: '*/*', params: {}, q: 1 }]);
    expect(parseAccept('')).toStrictEqual([{ type: '*/*', params: {}, q: 1 }]);
  });

  it('orders by q, then specificity, otherwise as given', () => {
    expect(types('text/csv, application/json')).toStrictEqual(['text/csv', 'application/json']);
    expect(types('application/json;q=0.5, text/csv')).toStrictEqual(['text/csv', 'application/json']);
    expect(types('*/*, text/csv')).toStrictEqual(['text/csv', '*/*']);
    expect(types('text/unknowntype, */*')).toStrictEqual(['text/unknowntype', '*/*']);
    expect(types('a/b;q=0.1, c/d;q=0.9, e/f;q=.5')).toStrictEqual(['e/f', 'c/d', 'a/b']);
  });

  it('lower-cases types and keeps parameters', () => {
    expect(parseAccept('Application/Vnd.PgRST.Array+JSON; nulls=stripped')).toStrictEqual([
      { type: 'application/vnd.pgrst.array+json', params: { nulls: 'stripped' }, q: 1 },
    ]);
    expect(parseMediaType('text/csv; charset=UTF-8')).toStrictEqual({ type: 'text/csv', params: { charset: 'utf-8' }, q: 1 });
  });
});

describe('negotiate', () => {
  it.each<[string | undefined, string | null]>([
    [undefined, MEDIA.json],
    ['*/*', MEDIA.json],
    ['text/csv', MEDIA.csv],
    ['text/*', MEDIA.csv],
    ['text/csv, application/json', MEDIA.csv],
    ['application/vnd.pgrst.object', MEDIA.object],
    ['application/vnd.pgrst.object+json', MEDIA.object],
    ['application/vnd.pgrst.array+json;nulls=stripped', MEDIA.array],
    ['text/unknowntype', null],
    ['text/unknowntype, */*', MEDIA.json],
    ['application/openapi+json', null],
    ['text/csv;q=0', null],
  ])('%s → %s', (accept, out) => {
    expect(negotiate(parseAccept(accept), TABLE)).toBe(out);
  });
});
