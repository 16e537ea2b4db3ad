import { describe, expect, it } from 'vitest';
import { OMIT, coerce, instantKey } from '../../src/import/shape/coerce.js';
import { FieldResolver, parseMaps, resolveFields } from '../../src/import/shape/mapping.js';
import { sameValue } from '../../src/import/send/existing.js';
import type { ColumnDef } from '../../src/schema/catalog.js';
import { table } from './support-files.js';

const col = (name: string, tableName = 'artists'): ColumnDef => table(tableName).columns.find((c) => c.name === name)!;
const value = (c: ColumnDef, raw: unknown, fromText = true) => {
  const r = coerce(c, raw, fromText, '\\N');
  return r === OMIT ? 'OMIT' : r.ok ? r.value : `${r.code}`;
};

describe('coerce', () => {
  it.each([
    ['stage_name', '  0042 "x", y\n', '  0042 "x", y\n'],
    ['stage_name', '', 'OMIT'],
    ['stage_name', '\\N', null],
    ['is_signed', 'Yes', true],
    ['is_signed', 'f', false],
    ['is_signed', 'maybe', '22P02'],
    ['birthdate', '2024-02-29', '2024-02-29'],
    ['birthdate', '2023-02-29', '22008'],
    ['birthdate', '29.02.2024', '22007'],
    ['id', '{A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11}', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'],
    ['id', 'nope', '22P02'],
    ['id', '\\N', '23502'],
    ['metadata', '{"a":[1,"x"]}', { a: [1, 'x'] }],
    ['metadata', '"just text"', 'just text'],
    ['metadata', '{a:1}', '22P02'],
    ['created', '2024-01-15 09:00:00+01', '2024-01-15 09:00:00+01'],
    ['created', '2024-01-15T09:00:00', '22007'],
    // NUL: PostgreSQL refuses it in text and jsonb; refused here so a dry run counts it too
    ['stage_name', 'a\u0000b', '22021'],
    ['metadata', '{"a":"x\\u0000y"}', '22P05'],
    ['metadata', '{"a":"x\\\\u0000y"}', { a: 'x\\u0000y' }],
  ])('%s %j → %j', (name, raw, expected) => {
    expect(value(col(name), raw)).toEqual(expected);
  });

  it('takes JSON values as they are (null = explicit null, "" kept for text)', () => {
    expect(value(col('metadata'), '{"a":1}', false)).toBe('{"a":1}');
    expect(value(col('stage_name'), '', false)).toBe('');
    expect(value(col('birthdate'), '', false)).toBe('OMIT');
    expect(value(col('stage_name'), null, false)).toBe(null);
    expect(value(col('stage_name'), 42, false)).toBe('42');
    expect(value(col('is_signed'), true, false)).toBe(true);
    expect(value(col('stage_name'), 'a\u0000', false)).toBe('22021');
    expect(value(col('metadata'), { k: ['\u0000'] }, false)).toBe('22P05');
  });

  it('compares instants to the microsecond, across zones', () => {
    expect(instantKey('2024-01-15 09:00:00+01')).toBe(instantKey('2024-01-15T08:00:00.000000Z'));
    expect(instantKey('2024-01-15T08:00:00.000001Z')).not.toBe(instantKey('2024-01-15T08:00:00Z'));
  });
});

describe('field mapping', () => {
  const releases = table('releases');
  it('matches exactly, then case/space/underscore-insensitively, with --map first', () => {
    const m = resolveFields(['ID', 'Release Title', 'release-date', 'UPC'], releases, { map: parseMaps(['UPC=upc_code']) });
    expect([...m.fields].map(([k, c]) => [k, c.name])).toEqual([
      ['ID', 'id'],
      ['Release Title', 'release_title'],
      ['release-date', 'release_date'],
      ['UPC', 'upc_code'],
    ]);
  });

  it('names the valid fields when a header is unknown, or skips it with --ignore-unknown', () => {
    expect(() => resolveFields(['id', 'colour'], releases)).toThrow(/unknown field "colour" for releases\. Valid fields: id, created/);
    expect(resolveFields(['id', 'colour'], releases, { ignoreUnknown: true }).ignored).toEqual(['colour']);
  });

  it('refuses two headers for one field and a --map naming no header', () => {
    expect(() => resolveFields(['name', 'Name'], table('labels'))).toThrow(/both "name" and "Name"/);
    expect(() => resolveFields(['id'], releases, { map: { Title: 'release_title' } })).toThrow(/no field "Title"/);
    expect(() => new FieldResolver(releases, { map: { Title: 'nope' } })).toThrow(/has no field "nope"/);
    expect(() => parseMaps(['nothing'])).toThrow(/Source Header=field/);
  });
});

describe('sameValue (what makes a stored row unchanged)', () => {
  const jsonb = { name: 'x', type: 'jsonb', nullable: true } as unknown as ColumnDef;
  it('compares jsonb as jsonb does: key order ignored, array order kept, nesting and types exact', () => {
    expect(sameValue(jsonb, { a: 1, b: [1, { c: 'x', d: null }] }, { b: [1, { d: null, c: 'x' }], a: 1 })).toBe(true);
    expect(sameValue(jsonb, [1, 2], [2, 1])).toBe(false);
    expect(sameValue(jsonb, { a: 1 }, { a: 1, b: 2 })).toBe(false);
    expect(sameValue(jsonb, { a: 1, b: 2 }, { a: 1 })).toBe(false);
    expect(sameValue(jsonb, { a: '1' }, { a: 1 })).toBe(false);
    expect(sameValue(jsonb, [], {})).toBe(false);
    expect(sameValue(jsonb, { a: null }, {})).toBe(false);
  });
});
