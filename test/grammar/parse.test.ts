import { describe, expect, it } from 'vitest';
import { parseFilter, parseOrder, parseQuery, parseSelect } from '../../src/grammar/parse.js';
import type { Condition, Query, SelectItem, WhereClause } from '../../src/grammar/types.js';
import { and, F, field, not, or } from './support.js';

const where = (qs: string): WhereClause[] => parseQuery(qs).where;
const one = (qs: string): Condition => {
  const w = where(qs);
  expect(w).toHaveLength(1);
  return w[0].condition;
};

describe('filters: every operator', () => {
  it.each<[string, Condition]>([
    ['release_title=eq.Kind of Blue', F('release_title', 'eq', 'Kind of Blue')],
    ['release_title=eq.Kind+of+Blue', F('release_title', 'eq', 'Kind of Blue')],
    ['release_title=eq.C%2B%2B', F('release_title', 'eq', 'C++')],
    ['release_title=eq.Vol. 2: Live (Remastered)', F('release_title', 'eq', 'Vol. 2: Live (Remastered)')],
    ['release_title=eq.', F('release_title', 'eq', '')],
    ['release_title=eq.a%26b%3Dc%23d%25e', F('release_title', 'eq', 'a&b=c#d%e')],
    ['release_title=eq.Caf%C3%A9%20%E6%97%A5', F('release_title', 'eq', 'Café 日')],
    ['release_title=eq.100%', F('release_title', 'eq', '100%')],
    ['label_id=neq.x', F('label_id', 'neq', 'x')],
    ['release_date=gt.1990-01-01', F('release_date', 'gt', '1990-01-01')],
    ['release_date=gte.2000-01-01', F('release_date', 'gte', '2000-01-01')],
    ['release_date=lt.2010-01-01', F('release_date', 'lt', '2010-01-01')],
    ['release_date=lte.2010-12-31', F('release_date', 'lte', '2010-12-31')],
    ['release_title=like.*Blue*', F('release_title', 'like', '*Blue*')],
    ['release_title=ilike.*blue*', F('release_title', 'ilike', '*blue*')],
    ['release_title=match.^Kind', F('release_title', 'match', '^Kind')],
    ['release_title=imatch.^kind', F('release_title', 'imatch', '^kind')],
    ['id=in.(a,b,c)', F('id', 'in', ['a', 'b', 'c'])],
    ['label_id=isdistinct.abc', F('label_id', 'isdistinct', 'abc')],
    ['release_title=fts(english).blue%26note', F('release_title', 'fts', 'blue&note', { language: 'english' })],
    ['release_title=fts.blue%7Cgreen', F('release_title', 'fts', 'blue|green')],
    ['release_title=plfts.The%20Blue%20Note', F('release_title', 'plfts', 'The Blue Note')],
    ['release_title=phfts(english).kind%20of%20blue', F('release_title', 'phfts', 'kind of blue', { language: 'english' })],
    ['release_title=wfts.blue%20or%20green', F('release_title', 'wfts', 'blue or green')],
    ['release_title=fts( english ).x', F('release_title', 'fts', 'x', { language: 'english' })],
    ['tags=cs.{jazz,live}', F('tags', 'cs', '{jazz,live}')],
    ['meta=cs.{"k":1}', F('meta', 'cs', '{"k":1}')],
    ['tags=cd.{jazz,live,bop}', F('tags', 'cd', '{jazz,live,bop}')],
    ['period=ov.[2017-01-01,2017-06-30]', F('period', 'ov', '[2017-01-01,2017-06-30]')],
    ['period=sl.(1,10)', F('period', 'sl', '(1,10)')],
    ['period=sr.(1,10)', F('period', 'sr', '(1,10)')],
    ['period=nxr.(1,10)', F('period', 'nxr', '(1,10)')],
    ['period=nxl.(1,10)', F('period', 'nxl', '(1,10)')],
    ['period=adj.(3,10]', F('period', 'adj', '(3,10]')],
  ])('%s', (qs, expected) => {
    expect(one(qs)).toStrictEqual(expected);
  });
});

describe('filters: is', () => {
  it.each([
    ['label_id=is.null', 'null'], ['label_id=is.NULL', 'null'], ['flag=is.true', 'true'], ['flag=is.FAlSe', 'false'],
    ['flag=is.unknown', 'unknown'], ['flag=is.UnKnOwN', 'unknown'],
  ])('%s', (qs, value) => {
    expect(one(qs)).toStrictEqual(F(qs.split('=')[0], 'is', value));
  });
});

describe('filters: negation and modifiers', () => {
  it.each<[string, Condition]>([
    ['id=not.eq.x', F('id', 'eq', 'x', { negated: true })],
    ['release_date=not.lt.2000-01-01', F('release_date', 'lt', '2000-01-01', { negated: true })],
    ['label_id=not.is.null', F('label_id', 'is', 'null', { negated: true })],
    ['release_title=not.like.*Live*', F('release_title', 'like', '*Live*', { negated: true })],
    ['id=not.in.(1,2)', F('id', 'in', ['1', '2'], { negated: true })],
    ['t=not.fts(english).x', F('t', 'fts', 'x', { negated: true, language: 'english' })],
    ['l=not.isdistinct.x', F('l', 'isdistinct', 'x', { negated: true })],
    ['release_title=like(any).{Kind*,Blue*}', F('release_title', 'like', '{Kind*,Blue*}', { modifier: 'any' })],
    ['release_date=gt(all).{1990-01-01,1995-06-01}', F('release_date', 'gt', '{1990-01-01,1995-06-01}', { modifier: 'all' })],
    ['id=eq(any).{a,b,c}', F('id', 'eq', '{a,b,c}', { modifier: 'any' })],
    ['id=not.eq(all).{a}', F('id', 'eq', '{a}', { negated: true, modifier: 'all' })],
    ['x=gte(any).{1}', F('x', 'gte', '{1}', { modifier: 'any' })],
    ['x=lte(all).{1}', F('x', 'lte', '{1}', { modifier: 'all' })],
    ['x=lt(any).{1}', F('x', 'lt', '{1}', { modifier: 'any' })],
    ['x=ilike(all).{a*}', F('x', 'ilike', '{a*}', { modifier: 'all' })],
    ['x=match(any).{^a}', F('x', 'match', '{^a}', { modifier: 'any' })],
    ['x=imatch(any).{^a}', F('x', 'imatch', '{^a}', { modifier: 'any' })],
    // A column may be called "not": only "not." followed by an operator negates.
    ['not=eq.1', F('not', 'eq', '1')],
  ])('%s', (qs, expected) => {
    expect(one(qs)).toStrictEqual(expected);
  });
});

describe('filters: in-list quoting (§3.3)', () => {
  it.each<[string, string[]]>([
    ['in.("Hebdon, John","Live (1961)")', ['Hebdon, John', 'Live (1961)']],
    ['in.("Quote:\\"","Backslash:\\\\")', ['Quote:"', 'Backslash:\\']],
    ['in.("a\\xb")', ['axb']],
    ['in.(")', ['"']],
    ['in.(\\)', ['\\']],
    ['in.(a"b,c)', ['a"b', 'c']],
    ['in.("ab"c)', ['"ab"c']],
    ['in.()', []],
    ['in.(   )', []],
    ['in.("")', []],
    ['in.( ,3,4)', ['', '3', '4']],
    ['in.( 1, 2, 3 )', ['1', ' 2', ' 3 ']],
    ['in.(a.b:c(d)', ['a.b:c(d']],
    ['in.(1,2)ignored', ['1', '2']],
  ])('%s', (value, expected) => {
    expect(parseFilter('id', value).condition).toStrictEqual(F('id', 'in', expected));
  });
});

describe('filters: keys, paths and JSON paths', () => {
  it.each<[string, WhereClause]>([
    ['labels.name=eq.Verve', { path: ['labels'], condition: F('name', 'eq', 'Verve') }],
    ['labels.countries.name=eq.Japan', { path: ['labels', 'countries'], condition: F('name', 'eq', 'Japan') }],
    ['labels=not.is.null', { path: [], condition: F('labels', 'is', 'null', { negated: true }) }],
    ['meta->>format=eq.vinyl', { path: [], condition: F(field('meta', '->>', 'format'), 'eq', 'vinyl') }],
    ['meta->year=gt.1960', { path: [], condition: F(field('meta', '->', 'year'), 'gt', '1960') }],
    ['meta->tracks->0->>title=eq.So What', { path: [], condition: F(field('meta', '->', 'tracks', '->', '0', '->>', 'title'), 'eq', 'So What') }],
    ['tags->-1=eq.jazz', { path: [], condition: F(field('tags', '->', '-1'), 'eq', 'jazz') }],
    ['meta->"a.b"->>c=eq.1', { path: [], condition: F(field('meta', '->', 'a.b', '->>', 'c'), 'eq', '1') }],
    ['%22information.cpe%22=like.*MS*', { path: [], condition: F('information.cpe', 'like', '*MS*') }],
    ['Order%20Items=eq.1', { path: [], condition: F('Order Items', 'eq', '1') }],
    ['first-name=eq.1', { path: [], condition: F('first-name', 'eq', '1') }],
    ['%22order%22=eq.1', { path: [], condition: F('order', 'eq', '1') }],
    ['labels.%22limit%22=eq.1', { path: ['labels'], condition: F('limit', 'eq', '1') }],
    ['caf%C3%A9=eq.1', { path: [], condition: F('café', 'eq', '1') }],
  ])('%s', (qs, expected) => {
    expect(where(qs)).toStrictEqual([expected]);
  });

  it('keeps JSON keys made of special characters', () => {
    expect(parseFilter('meta->!@#$%^&*_a', 'eq.1').condition).toStrictEqual(F(field('meta', '->', '!@#$%^&*_a'), 'eq', '1'));
  });

  it('ANDs repeated filters, keeps query-string order, splits on ; too, and drops keys without =', () => {
    expect(where('release_date=gte.2000-01-01&x&release_date=lt.2010-01-01;id=eq.1&or=(a.eq.1)')).toStrictEqual([
      { path: [], condition: F('release_date', 'gte', '2000-01-01') },
      { path: [], condition: F('release_date', 'lt', '2010-01-01') },
      { path: [], condition: F('id', 'eq', '1') },
      { path: [], condition: or(F('a', 'eq', '1')) },
    ]);
  });
});

describe('logic trees (§3.4)', () => {
  it.each<[string, WhereClause]>([
    ['or=(release_date.lt.1960-01-01,release_date.gt.2000-01-01)',
      { path: [], condition: or(F('release_date', 'lt', '1960-01-01'), F('release_date', 'gt', '2000-01-01')) }],
    ['or=(label_id.is.null,and(release_date.gte.1960-01-01,release_date.lt.1970-01-01))',
      { path: [], condition: or(F('label_id', 'is', 'null'), and(F('release_date', 'gte', '1960-01-01'), F('release_date', 'lt', '1970-01-01'))) }],
    ['not.or=(a.eq.1,b.eq.2)', { path: [], condition: not(or(F('a', 'eq', '1'), F('b', 'eq', '2'))) }],
    ['and=(a.eq.1,not.or(b.eq.2,not.and(c.eq.3)))',
      { path: [], condition: and(F('a', 'eq', '1'), not(or(F('b', 'eq', '2'), not(and(F('c', 'eq', '3')))))) }],
    ['labels.or=(name.eq.Verve,name.eq.Blue%20Note)', { path: ['labels'], condition: or(F('name', 'eq', 'Verve'), F('name', 'eq', 'Blue Note')) }],
    ['labels.not.and=(name.eq.a)', { path: ['labels'], condition: not(and(F('name', 'eq', 'a'))) }],
    ['or=(id.not.in.(1,3),arr.not.cs.{1,2,3})',
      { path: [], condition: or(F('id', 'in', ['1', '3'], { negated: true }), F('arr', 'cs', '{1,2,3}', { negated: true })) }],
    ['or=(release_title.eq."Live, Vol. 1",release_title.like."*(Live)*")',
      { path: [], condition: or(F('release_title', 'eq', 'Live, Vol. 1'), F('release_title', 'like', '*(Live)*')) }],
    ['or=(t.eq."a\\"b",t.eq.x"y)', { path: [], condition: or(F('t', 'eq', 'a"b'), F('t', 'eq', 'x"y')) }],
    ['or=(and_col.eq.x,or_col.eq.y)', { path: [], condition: or(F('and_col', 'eq', 'x'), F('or_col', 'eq', 'y')) }],
    ['or=(meta->>format.eq.cd,tags->0.eq.jazz)',
      { path: [], condition: or(F(field('meta', '->>', 'format'), 'eq', 'cd'), F(field('tags', '->', '0'), 'eq', 'jazz')) }],
    ['or=(id.eq(any).{1,2},t.fts(english).a%26b,t.is.NULL,t.isdistinct.,t.eq.)',
      { path: [], condition: or(F('id', 'eq', '{1,2}', { modifier: 'any' }), F('t', 'fts', 'a&b', { language: 'english' }), F('t', 'is', 'null'), F('t', 'isdistinct', ''), F('t', 'eq', '')) }],
    ['and=( and ( id.in.( 1, 2, 3 ) , id.eq.3 ) , or ( id.eq.2 , id.eq.3 ) )',
      { path: [], condition: and(and(F('id', 'in', ['1', ' 2', ' 3 ']), F('id', 'eq', '3 ')), or(F('id', 'eq', '2 '), F('id', 'eq', '3 '))) }],
    ['or=(a.eq.x(y,b.eq.{a,b})', { path: [], condition: or(F('a', 'eq', 'x(y'), F('b', 'eq', '{a,b}')) }],
  ])('%s', (qs, expected) => {
    expect(where(qs)).toStrictEqual([expected]);
  });
});

describe('select (§4)', () => {
  const fld = (name: string, extra: Partial<SelectItem> = {}, ...path: string[]): SelectItem => ({ type: 'field', field: field(name, ...path), ...extra }) as SelectItem;
  const embed = (relation: string, select: SelectItem[], extra: Record<string, unknown> = {}): SelectItem =>
    ({ type: 'embed', relation, spread: false, ...extra, select }) as SelectItem;
  it.each<[string, SelectItem[] | undefined]>([
    ['select=*', [{ type: 'star' }]],
    ['select=id,release_title', [fld('id'), fld('release_title')]],
    ['select=id, release_title ,  labels ( name )', [fld('id'), fld('release_title'), embed('labels', [fld('name')])]],
    ['select=title:release_title', [fld('release_title', { alias: 'title' })]],
    ['select=id::text', [fld('id', { cast: 'text' })]],
    ['select=alias:release_date::text', [fld('release_date', { alias: 'alias', cast: 'text' })]],
    ['select=x::double precision', [fld('x', { cast: 'double precision' })]],
    ['select=meta->>format', [fld('meta', {}, '->>', 'format')]],
    ['select=meta->tracks->0->>title', [fld('meta', {}, '->', 'tracks', '->', '0', '->>', 'title')]],
    ['select=yr:meta->>year::int', [fld('meta', { alias: 'yr', cast: 'int' }, '->>', 'year')]],
    ['select=*,labels(*)', [{ type: 'star' }, embed('labels', [{ type: 'star' }])]],
    ['select=label:labels(name)', [embed('labels', [fld('name')], { alias: 'label' })]],
    ['select=labels!label_id(name)', [embed('labels', [fld('name')], { hint: 'label_id' })]],
    ['select=labels!releases_label_id_fkey(name)', [embed('labels', [fld('name')], { hint: 'releases_label_id_fkey' })]],
    ['select=labels!inner(name)', [embed('labels', [fld('name')], { join: 'inner' })]],
    ['select=labels!left(name)', [embed('labels', [fld('name')], { join: 'left' })]],
    ['select=labels!fk!inner(name)', [embed('labels', [fld('name')], { hint: 'fk', join: 'inner' })]],
    ['select=labels!inner!fk(name)', [embed('labels', [fld('name')], { hint: 'fk', join: 'inner' })]],
    ['select=labels!%22leftish%22(name)', [embed('labels', [fld('name')], { hint: 'leftish' })]],
    ['select=label_id(name)', [embed('label_id', [fld('name')])]],
    ['select=id,...labels(label_name:name)', [fld('id'), { type: 'embed', relation: 'labels', spread: true, select: [fld('name', { alias: 'label_name' })] }]],
    ['select=...labels!inner(name)', [{ type: 'embed', relation: 'labels', spread: true, join: 'inner', select: [fld('name')] }]],
    ['select=id,labels()', [fld('id'), embed('labels', [])]],
    ['select=id,labels(name,countries(name))', [fld('id'), embed('labels', [fld('name'), embed('countries', [fld('name')])])]],
    ['select=%22a.b%22,%22*%22', [fld('a.b'), fld('*')]],
    ['select=count', [fld('count')]],
    ['select=', undefined],
    ['select', undefined],
    ['', undefined],
  ])('%s', (qs, expected) => {
    expect(parseQuery(qs).select).toStrictEqual(expected);
  });

  it('takes the first select parameter', () => {
    expect(parseQuery('select=id&select=name').select).toStrictEqual([fld('id')]);
  });

  it('rejects aggregates with PGRST123 (disabled in v12 by default)', () => {
    for (const s of ['count()', 'id.sum()', 'total:id.avg()', 'x.max()::int', 'labels(count())']) {
      expect(() => parseSelect(s)).toThrow(expect.objectContaining({ code: 'PGRST123', status: 400, message: 'Use of aggregate functions is not allowed' }));
    }
  });
});

describe('order (§5)', () => {
  const t = (name: string, extra: Record<string, unknown> = {}, ...path: string[]) => ({ field: field(name, ...path), ...extra });
  it.each<[string, unknown[]]>([
    ['id', [t('id')]],
    ['id.desc', [t('id', { direction: 'desc' })]],
    ['id.asc.nullsfirst', [t('id', { direction: 'asc', nulls: 'first' })]],
    ['id.nullslast', [t('id', { nulls: 'last' })]],
    ['label_id.desc.nullslast,id.desc', [t('label_id', { direction: 'desc', nulls: 'last' }), t('id', { direction: 'desc' })]],
    ['meta->>year.desc', [t('meta', { direction: 'desc' }, '->>', 'year')]],
    ['tags->0.asc', [t('tags', { direction: 'asc' }, '->', '0')]],
    ['labels(name).desc.nullslast', [t('name', { relation: 'labels', direction: 'desc', nulls: 'last' })]],
    ['name , label(name),id', [t('name'), t('name', { relation: 'label' }), t('id')]],
  ])('%s', (text, expected) => {
    expect(parseOrder(text)).toStrictEqual(expected);
  });

  it('keeps one clause per order parameter with its embed path', () => {
    expect(parseQuery('order=id&releases.order=release_date.desc').order).toStrictEqual([
      { path: [], terms: [t('id')] },
      { path: ['releases'], terms: [t('release_date', { direction: 'desc' })] },
    ]);
  });
});

describe('limit / offset (§6.1)', () => {
  it.each<[string, Query['page']]>([
    ['limit=10&offset=5', [{ path: [], limit: 10, offset: 5 }]],
    ['releases.limit=2&releases.offset=1', [{ path: ['releases'], limit: 2, offset: 1 }]],
    ['offset=3&limit=1&labels.limit=4', [{ path: [], offset: 3, limit: 1 }, { path: ['labels'], limit: 4 }]],
    ['limit=abc', []],
    ['limit=5&limit=abc', []],
    ['limit=abc&limit=5', [{ path: [], limit: 5 }]],
    ['limit=-1', [{ path: [], limit: -1 }]],
    ['offset=-3', [{ path: [], offset: -3 }]],
    ['limit=+10+', [{ path: [], limit: 10 }]],
    ['limit=0x10', [{ path: [], limit: 16 }]],
    ['limit=', []],
    ['limit=1.5', []],
  ])('%s', (qs, expected) => {
    expect(parseQuery(qs).page).toStrictEqual(expected);
  });
});

describe('columns and on_conflict', () => {
  it('parses both', () => {
    const q = parseQuery('columns=id,%20name%20,%22release%20title%22&on_conflict=name,country_id');
    expect(q.columns).toStrictEqual(['id', 'name', 'release title']);
    expect(q.onConflict).toStrictEqual(['name', 'country_id']);
  });

  it('reports a bad columns parameter', () => {
    expect(() => parseQuery('columns=')).toThrow(expect.objectContaining({
      code: 'PGRST100', message: '"failed to parse columns parameter ()" (line 1, column 1)',
    }));
  });
});

describe('reserved parameter names', () => {
  it('routes keys by their last dot-segment', () => {
    const q = parseQuery('labels.order=name&releases.limit=2&not.or=(a.eq.1)&labels.or=(b.eq.2)&labels.and=(c.eq.3)');
    expect(q.order).toStrictEqual([{ path: ['labels'], terms: [{ field: field('name') }] }]);
    expect(q.page).toStrictEqual([{ path: ['releases'], limit: 2 }]);
    expect(q.where.map((w) => [w.path, w.condition.kind, w.condition.kind !== 'filter' && w.condition.negated])).toStrictEqual([
      [[], 'or', true], [['labels'], 'or', false], [['labels'], 'and', false],
    ]);
  });

  it('returns an empty model for an empty query', () => {
    expect(parseQuery('')).toStrictEqual({ where: [], order: [], page: [] });
    expect(parseQuery('?')).toStrictEqual({ where: [], order: [], page: [] });
  });
});
