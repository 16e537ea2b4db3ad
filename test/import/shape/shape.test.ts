import { describe, expect, it } from 'vitest';
import { FieldResolver } from '../../../src/import/shape/mapping.js';
import { CopyRow, RowShaper, Shape, planShape } from '../../../src/import/shape/shape.js';
import { ImportError } from '../../../src/import/types.js';
import { table } from '../support-files.js';

const artists = table('artists');
const csvShaper = (opts: { map?: Record<string, string> } = {}) => new RowShaper(new FieldResolver(artists, opts), true, '\\N', []);
const csvRec = (cells: string[], headers: string[], line = 2) => ({ index: line - 2, line, values: {}, cells, headers });

describe('shape stage', () => {
  it('maps headers to fields and coerces cells by column type (empty = default, null token = null)', () => {
    const s = csvShaper({ map: { Name: 'stage_name' } }).shape(csvRec(['X', 'yes', '', '\\N'], ['Name', 'is_signed', 'city', 'birthdate']));
    expect(s).toEqual({ ok: true, row: { stage_name: 'X', is_signed: true, birthdate: null } });
  });

  it('names every bad value of a record, with its column and source header', () => {
    const s = csvShaper({ map: { Born: 'birthdate' } }).shape(csvRec(['maybe', '31/01/2024'], ['is_signed', 'Born']));
    expect(s).toMatchObject({ ok: false, code: '22P02' });
    expect(!s.ok && s.message).toMatch(/column is_signed: .*boolean.*; column "Born" \(field birthdate\): .*date/);
  });

  it('runs the checks on a row that shaped well, and only then', () => {
    const seen: unknown[] = [];
    const shaper = new RowShaper(new FieldResolver(artists, {}), false, null, [
      { name: 'seen', check: (row) => (seen.push(row), row.city === 'Nowhere' ? { code: 'CHECK', message: 'no such city' } : null) },
    ]);
    expect(shaper.shape({ index: 0, line: 1, values: { city: 'Oslo' } })).toEqual({ ok: true, row: { city: 'Oslo' } });
    expect(shaper.shape({ index: 1, line: 2, values: { city: 'Nowhere' } })).toEqual({ ok: false, code: 'CHECK', message: 'no such city' });
    expect(shaper.shape({ index: 2, line: 3, values: { is_signed: 'perhaps' } })).toMatchObject({ ok: false, code: '22P02' });
    expect(seen).toHaveLength(2);
  });

  it('plans columns in table order and the conflict key only when the input has it', () => {
    const r = new FieldResolver(artists, {});
    for (const h of ['city', 'id', 'stage_name']) r.resolve(h);
    expect(planShape(artists, r, ['id'], { ignoreDuplicates: false })).toMatchObject({ columns: ['id', 'stage_name', 'city'], conflictKey: ['id'], keyColumn: { name: 'id' } });
    const noId = new FieldResolver(artists, {});
    noId.resolve('stage_name');
    expect(planShape(artists, noId, ['id'], { ignoreDuplicates: false })).toMatchObject({ columns: ['stage_name'], conflictKey: null, keyColumn: null });
    expect(() => planShape(artists, noId, ['id'], { ignoreDuplicates: true })).toThrow(/--ignore-duplicates needs the conflict key \(id\)/);
    let err: unknown;
    try {
      planShape(artists, noId, ['city'], { onConflict: ['city'], ignoreDuplicates: false });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ImportError);
    expect(err).toMatchObject({ kind: 'usage', message: '--on-conflict city: the input has no city field' });
  });

  it('fills left-out cells with known constant defaults; a volatile default makes the row incomplete', () => {
    const r = new FieldResolver(artists, {});
    for (const h of ['id', 'stage_name', 'is_signed', 'birthdate']) r.resolve(h);
    const shape = new Shape(csvShaper(), planShape(artists, r, ['id'], { ignoreDuplicates: false }));
    const row = shape.jsonRow({ index: 0, line: 2, values: {} }, { id: 'a0000000-0000-4000-8000-000000000001' }, 'k');
    expect(JSON.parse(row.json!)).toEqual({ id: 'a0000000-0000-4000-8000-000000000001', stage_name: '', is_signed: false, birthdate: null });
    expect(row).toMatchObject({ complete: true, key: 'k', kind: 'insert', copyOut: null });
    expect(row.bytes).toBe(Buffer.byteLength(row.json!) + 1);
    const r2 = new FieldResolver(artists, {});
    for (const h of ['stage_name', 'created']) r2.resolve(h);
    const shape2 = new Shape(csvShaper(), planShape(artists, r2, ['id'], { ignoreDuplicates: false }));
    expect(shape2.jsonRow({ index: 0, line: 2, values: {} }, { stage_name: 'x' }, null).complete).toBe(false);
  });

  it('a COPY row decodes its source record only when asked, and its JSON form on demand', () => {
    const headers = ['id', 'stage_name'];
    const src = Buffer.from('a0000000-0000-4000-8000-000000000001,"Smith, Jones"\n');
    const row = new CopyRow('a0000000-0000-4000-8000-000000000001', 7, 9, src, 0, src.length - 1, { headers, delimiter: ',' });
    expect(row.record).toMatchObject({ index: 7, line: 9, values: { id: 'a0000000-0000-4000-8000-000000000001', stage_name: 'Smith, Jones' } });
    const r = new FieldResolver(artists, {});
    for (const h of headers) r.resolve(h);
    const shape = new Shape(csvShaper(), planShape(artists, r, ['id'], { ignoreDuplicates: false }));
    expect(JSON.parse(shape.jsonOf(row))).toEqual({ id: 'a0000000-0000-4000-8000-000000000001', stage_name: 'Smith, Jones' });
  });
});
