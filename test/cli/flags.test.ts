import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/cli/errors.js';
import { parseAssignments, checkRecords } from '../../src/cli/flags/body.js';
import { buildReadQuery, byId, parseFilters } from '../../src/cli/flags/query.js';
import { didYouMean, editDistance } from '../../src/format/suggest.js';
import { bodyValue, checkText, isDate } from '../../src/cli/flags/values.js';
import { builtinSchema } from '../../src/schema/catalog.js';
import { displayDefault, schemaFromOpenApi } from '../../src/schema/model.js';
import { compileQuery } from '../../src/grammar/compile.js';
import { openApiDocument } from '../../src/server/openapi.js';

const schema = builtinSchema();
const artists = schema.tables.get('artists')!;
const releases = schema.tables.get('releases')!;
const labels = schema.tables.get('labels')!;

function usage(fn: () => unknown): UsageError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    return err as UsageError;
  }
  throw new Error('expected a usage error');
}

describe('list flags → query model', () => {
  it('~ on a JSON path read as text (->>) ignores accents as on a text field, issue 27', () => {
    const q = buildReadQuery({ where: ['streaming->>name~beyonce*'] }, artists, schema);
    const text = buildReadQuery({ where: ['stage_name~beyonce*'] }, artists, schema);
    const cond = q.where[0].condition as { op: string; value: string };
    expect(cond.op).toBe('imatch');
    expect(cond.value).toBe((text.where[0].condition as { value: string }).value);
    // -> (JSON, not text) stays as written
    expect((buildReadQuery({ where: ['streaming->name~x'] }, artists, schema).where[0].condition as { op: string }).op).toBe('ilike');
  });

  it('--order takes an embedded field as --where writes it (labels.name.desc → labels(name).desc), issue 27', () => {
    const q = buildReadQuery({ select: 'release_title,labels(name)', order: 'labels.name.desc.nullslast,release_title' }, releases, schema);
    expect(compileQuery(q)).toBe('select=release_title,labels(name)&order=labels(name).desc.nullslast,release_title');
    expect(usage(() => buildReadQuery({ select: 'release_title', order: 'labels.name' }, releases, schema)).message).toMatch(/'labels' is not embedded in this request/);
    // a field's own direction words stay as they are
    expect(compileQuery(buildReadQuery({ order: 'release_date.desc' }, releases, schema))).toBe('order=release_date.desc');
  });

  it('compiles both --where forms, --order, --limit and --offset', () => {
    const q = buildReadQuery(
      { where: ['release_date>=2024-01-01', 'genre=in.(House,Techno)', 'label_id=is.null'], order: 'release_date.desc', limit: '10', offset: '20' },
      releases,
      schema,
    );
    expect(q.where.map((w) => w.condition)).toEqual([
      { kind: 'filter', field: { name: 'release_date', jsonPath: [] }, negated: false, op: 'gte', value: '2024-01-01' },
      { kind: 'filter', field: { name: 'genre', jsonPath: [] }, negated: false, op: 'in', value: ['House', 'Techno'] },
      { kind: 'filter', field: { name: 'label_id', jsonPath: [] }, negated: false, op: 'is', value: 'null' },
    ]);
    expect(q.order).toEqual([{ path: [], terms: [{ field: { name: 'release_date', jsonPath: [] }, direction: 'desc' }] }]);
    expect(q.page).toEqual([{ path: [], limit: 10, offset: 20 }]);
    expect(compileQuery(q)).toBe('release_date=gte.2024-01-01&genre=in.(House,Techno)&label_id=is.null&order=release_date.desc&limit=10&offset=20');
  });

  it('joins every --or into one or=() group', () => {
    const q = buildReadQuery({ or: ['genre=House', 'genre=Techno'] }, releases, schema);
    expect(q.where).toHaveLength(1);
    expect(q.where[0].condition).toMatchObject({ kind: 'or', negated: false, conditions: [{ value: 'House' }, { value: 'Techno' }] });
    expect(compileQuery(q)).toBe('or=(genre.eq.House,genre.eq.Techno)');
  });

  it('turns ~ into a match with * wildcards that ignores case and accents (imatch with letter classes; issue 17: was ilike)', () => {
    const q = buildReadQuery({ where: ['stage_name~*dj*', 'stage_name !~ *test*'] }, artists, schema);
    expect(decodeURIComponent(compileQuery(q))).toBe(
      'stage_name=imatch.^.*[dďđDĎĐ][jĵJĴ].*$&stage_name=not.imatch.^.*[tţťŧțTŢŤŦȚ][eèéêëēĕėęěEÈÉÊËĒĔĖĘĚ][sśŝşšșSŚŜŞŠȘ][tţťŧțTŢŤŦȚ].*$',
    );
    // the raw PostgREST form stays exactly as written
    expect(compileQuery(buildReadQuery({ where: ['stage_name=ilike.*dj*'] }, artists, schema))).toBe('stage_name=ilike.*dj*');
  });

  it('accepts embedding in --select and filters on an embed that is selected', () => {
    const q = buildReadQuery({ select: 'release_title,labels(name)', where: ['labels.name=eq.Verve'] }, releases, schema);
    expect(compileQuery(q)).toBe('select=release_title,labels(name)&labels.name=eq.Verve');
  });

  it('normalises booleans and checks values by type before anything is sent', () => {
    expect(compileQuery(buildReadQuery({ where: ['is_signed=yes'] }, artists, schema))).toBe('is_signed=eq.true');
    expect(usage(() => buildReadQuery({ where: ['release_date>=2024-13-01'] }, releases, schema)).message).toMatch(/bad value for release_date \(date\)/);
    expect(usage(() => buildReadQuery({ where: ['label_id=123'] }, releases, schema)).message).toMatch(/label_id \(uuid\)/);
    expect(usage(() => buildReadQuery({ where: ['id=in.(x,y)'] }, releases, schema)).message).toMatch(/id \(uuid\): 'x'/);
    expect(usage(() => buildReadQuery({ where: ['is_signed=maybe'] }, artists, schema)).hint).toMatch(/true or false/);
  });

  it('names unknown fields with a suggestion and the list of fields', () => {
    const e = usage(() => buildReadQuery({ where: ['relase_date>=2024-01-01'] }, releases, schema));
    expect(e.message).toBe("unknown field 'relase_date' in releases; did you mean 'release_date'?");
    expect(e.hint).toContain('fields of releases: id, created, updated');
    expect(usage(() => buildReadQuery({ select: 'id,stagename' }, artists, schema)).message).toMatch(/did you mean 'stage_name'/);
    expect(usage(() => buildReadQuery({ order: 'nme' }, labels, schema)).message).toMatch(/did you mean 'name'/);
  });

  it('explains a field the interface removed', () => {
    expect(usage(() => buildReadQuery({ select: 'slug' }, artists, schema, ['slug'])).message).toMatch(/'slug' was removed from artists/);
  });

  it('refuses text matching on non-text fields and filters on embeds that are not selected', () => {
    expect(usage(() => buildReadQuery({ where: ['release_date~2024*'] }, releases, schema)).hint).toMatch(/compare dates instead/);
    expect(usage(() => buildReadQuery({ where: ['labels.name=eq.x'] }, releases, schema)).hint).toMatch(/add it to --select/);
    expect(usage(() => buildReadQuery({ select: 'id,countries(name)' }, releases, schema)).message).toMatch(/no relationship to 'countries'/);
  });

  it('reports grammar errors as usage errors that name the flag', () => {
    expect(usage(() => buildReadQuery({ where: ['just words'] }, labels, schema)).message).toMatch(/^--where 'just words'/);
    expect(usage(() => buildReadQuery({ order: 'name.sideways' }, labels, schema)).message).toMatch(/^--order 'name.sideways'/);
    expect(usage(() => buildReadQuery({ limit: '-1' }, labels, schema)).message).toMatch(/--limit needs a whole number/);
    expect(usage(() => parseFilters([], ['genre=House', 'labels.name=x'])).message).toMatch(/same collection/);
  });

  it('filters by id on the primary key, checking it is a uuid', () => {
    const id = '3f2a9c1e-8b1d-4e7a-9c55-0d6f1b2a4e10';
    expect(byId(labels, id).condition).toMatchObject({ op: 'eq', value: id, field: { name: 'id' } });
    expect(usage(() => byId(labels, '42')).message).toMatch(/id \(uuid\)/);
  });
});

describe('FIELD=VALUE', () => {
  it('keeps text exactly as typed, leading zeros, spaces and all', () => {
    expect(parseAssignments(['catalog_number=007', 'genre=  spaced  ', 'label=a=b'], releases)).toEqual({
      catalog_number: '007',
      genre: '  spaced  ',
      label: 'a=b',
    });
  });

  it('converts booleans, dates, JSON and empty values by type', () => {
    expect(parseAssignments(['is_signed=no', 'birthdate=1990-02-28', 'metadata={"a":[1]}', 'city='], artists)).toEqual({
      is_signed: false,
      birthdate: '1990-02-28',
      metadata: { a: [1] },
      city: '',
    });
    expect(parseAssignments(['birthdate='], artists)).toEqual({ birthdate: null });
    expect(parseAssignments(['city:=null', 'tracks:=["a","b"]'], artists)).toEqual({ city: null, tracks: ['a', 'b'] });
  });

  it('rejects unknown fields, bad values, duplicates and non-pairs', () => {
    expect(usage(() => parseAssignments(['stagename=x'], artists)).message).toMatch(/did you mean 'stage_name'/);
    expect(usage(() => parseAssignments(['birthdate=1990-02-30'], artists)).message).toMatch(/birthdate \(date\)/);
    expect(usage(() => parseAssignments(['metadata={oops'], artists)).hint).toMatch(/JSON/);
    expect(usage(() => parseAssignments(['city=a', 'city=b'], artists)).message).toMatch(/given twice/);
    expect(usage(() => parseAssignments(['city'], artists)).message).toMatch(/expected FIELD=VALUE/);
    expect(usage(() => parseAssignments(['city:=nope'], artists)).message).toMatch(/needs a JSON value/);
  });

  it('checks JSON records key by key', () => {
    expect(checkRecords([{ name: 'a' }, { name: 'b' }], labels)).toEqual({ records: [{ name: 'a' }, { name: 'b' }], single: false });
    expect(checkRecords({ name: 'a' }, labels).single).toBe(true);
    expect(usage(() => checkRecords([{ nam: 'a' }], labels)).message).toMatch(/did you mean 'name'/);
    expect(usage(() => checkRecords({ is_signed: 'yes' }, artists)).message).toMatch(/is_signed/);
    expect(usage(() => checkRecords([1], labels)).message).toMatch(/item 1 must be a JSON object/);
  });
});

describe('values and suggestions', () => {
  it('knows real dates', () => {
    expect(isDate('2024-02-29')).toBe(true);
    expect(isDate('2023-02-29')).toBe(false);
    expect(isDate('2024-1-1')).toBe(false);
  });

  it('converts body values by type', () => {
    const f = (type: string) => ({ name: 'f', type, nullable: true, primaryKey: false });
    expect(bodyValue(f('boolean'), 'TRUE')).toBe(true);
    expect(bodyValue(f('integer'), '42')).toBe(42);
    expect(bodyValue(f('text'), 'null')).toBe('null');
    expect(bodyValue(f('uuid'), '')).toBeNull();
    expect(checkText(f('timestamp with time zone'), '2024-05-17T12:00:00Z')).toBe('2024-05-17T12:00:00Z');
  });

  it('reads uuid, boolean and timestamp values as import does (schema/codecs.ts): a timestamp needs its zone', () => {
    const f = (type: string) => ({ name: 'f', type, nullable: true, primaryKey: false });
    expect(checkText(f('uuid'), '{A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11}')).toBe('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11');
    expect(bodyValue(f('boolean'), 'off')).toBe(false);
    expect(() => checkText(f('timestamp with time zone'), '2024-05-17T12:00:00')).toThrow(/bad value for f/);
    let hint = '';
    try {
      checkText(f('timestamp with time zone'), '2024-05-17 12:00');
    } catch (e) {
      hint = (e as { hint?: string }).hint ?? '';
    }
    expect(hint).toMatch(/no time zone/);
    // a date alone is the start of that local day, sent with its zone
    expect(checkText(f('timestamp with time zone'), '2024-05-17')).toBe(new Date(2024, 4, 17).toISOString());
  });

  it('suggests the closest name only when it is close', () => {
    expect(editDistance('stagename', 'stage_name')).toBe(1);
    expect(didYouMean('relase_date', ['release_date', 'label_id'])).toBe('release_date');
    expect(didYouMean('Stage-Name', ['stage_name'])).toBe('stage_name');
    expect(didYouMean('zzz', ['release_date'])).toBeUndefined();
  });
});

describe('the schema model', () => {
  it('reads the root description the same way as the built-in schema', () => {
    const fromDoc = schemaFromOpenApi(openApiDocument());
    expect(fromDoc.version).toBe('12.2.3');
    for (const [name, t] of schema.tables) {
      const other = fromDoc.tables.get(name)!;
      expect(other.primaryKey).toEqual(t.primaryKey);
      expect(other.columns.map((f) => [f.name, f.type, f.nullable, Boolean(f.primaryKey), f.foreignKey])).toEqual(t.columns.map((f) => [f.name, f.type, f.nullable, Boolean(f.primaryKey), f.foreignKey]));
    }
  });

  it('shows defaults as the root description does', () => {
    expect(displayDefault("''::text")).toBe('');
    expect(displayDefault('false')).toBe(false);
    expect(displayDefault('now()')).toBe('now()');
    expect(displayDefault(undefined)).toBeUndefined();
  });
});
