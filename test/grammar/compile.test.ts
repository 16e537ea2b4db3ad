import { describe, expect, it } from 'vitest';
import { compileCondition, compileName, compileOrder, compileQuery, compileSelect } from '../../src/grammar/compile.js';
import { parseQuery } from '../../src/grammar/parse.js';
import type { Query } from '../../src/grammar/types.js';
import { and, F, field, not, or } from './support.js';

const q = (over: Partial<Query>): Query => ({ where: [], order: [], page: [], ...over });

describe('compileName', () => {
  it.each([
    ['release_title', 'release_title'], ['Order Items', 'Order Items'], ['first-name', 'first-name'], ['café', 'café'],
    ['a.b', '"a.b"'], [' x', '" x"'], ['a"b', '"a\\"b"'], ['a\\b', '"a\\\\b"'], ['a-', '"a-"'], ['a->b', '"a->b"'], ['*', '"*"'], ['', '""'],
  ])('%j → %s', (name, out) => {
    expect(compileName(name)).toBe(out);
  });
});

describe('compileQuery', () => {
  it.each<[Query, string]>([
    [q({ where: [{ path: [], condition: F('release_title', 'eq', 'C++ & more #1 100%') }] }), 'release_title=eq.C%2B%2B%20%26%20more%20%231%20100%25'],
    [q({ where: [{ path: [], condition: F('release_title', 'eq', 'Vol. 2: Live (Remastered), a;b=c') }] }), 'release_title=eq.Vol.%202:%20Live%20(Remastered),%20a%3Bb%3Dc'],
    [q({ where: [{ path: [], condition: F('t', 'eq', 'Café 日') }] }), 't=eq.Caf%C3%A9%20%E6%97%A5'],
    [q({ where: [{ path: [], condition: F('id', 'in', ['a', 'b,c', 'd)', '"e', ' f', 'g h']) }] }), 'id=in.(a,%22b,c%22,%22d)%22,%22%5C%22e%22,%20f,g%20h)'],
    [q({ where: [{ path: [], condition: F('id', 'in', [' a', 'b']) }] }), 'id=in.(%22%20a%22,b)'],
    [q({ where: [{ path: [], condition: F('id', 'in', []) }] }), 'id=in.()'],
    [q({ where: [{ path: ['labels'], condition: F('name', 'like', '*Blue*', { negated: true }) }] }), 'labels.name=not.like.*Blue*'],
    [q({ where: [{ path: [], condition: F('order', 'eq', '1') }] }), '%22order%22=eq.1'],
    [q({ where: [{ path: [], condition: F('select', 'eq', '1') }] }), '%22select%22=eq.1'],
    [q({ where: [{ path: ['labels'], condition: F('or', 'eq', '1') }] }), 'labels.%22or%22=eq.1'],
    [q({ where: [{ path: [], condition: F(field('meta', '->', 'a.b', '->>', '0'), 'eq', '1') }] }), 'meta->%22a.b%22->>0=eq.1'],
    [q({ where: [{ path: [], condition: F('t', 'fts', 'a&b', { language: 'english', negated: true }) }] }), 't=not.fts(english).a%26b'],
    [q({ where: [{ path: [], condition: F('t', 'like', '{a*,b*}', { modifier: 'any' }) }] }), 't=like(any).%7Ba*,b*%7D'],
    [q({ where: [{ path: ['labels'], condition: not(or(F('a', 'eq', 'x,y'), and(F('b', 'is', 'null'), F('c', 'cs', '{1,2}')))) }] }),
      'labels.not.or=(a.eq.%22x,y%22,and(b.is.null,c.cs.%7B1,2%7D))'],
    [q({ select: [], where: [] }), ''],
    [q({ page: [{ path: [], limit: 10, offset: 20 }, { path: ['releases'], limit: 2 }] }), 'limit=10&offset=20&releases.limit=2'],
    [q({ columns: ['id', 'release title'], onConflict: ['a.b'] }), 'columns=id,release%20title&on_conflict=%22a.b%22'],
  ])('%#: %s', (model, out) => {
    expect(compileQuery(model)).toBe(out);
    // An empty select list is not written, and reads back as "no select".
    expect(parseQuery(out)).toStrictEqual(model.select?.length === 0 ? q({}) : model);
  });
});

describe('compileCondition: tree values', () => {
  it.each<[ReturnType<typeof F>, string]>([
    [F('a', 'eq', 'plain text'), 'a.eq.plain text'],
    [F('a', 'eq', 'x,y'), 'a.eq."x,y"'],
    [F('a', 'eq', 'x)'), 'a.eq."x)"'],
    [F('a', 'eq', '"q"'), 'a.eq."\\"q\\""'],
    [F('a', 'eq', 'x(y'), 'a.eq.x(y'],
    [F('a', 'cs', '{1,2}'), 'a.cs.{1,2}'],
    [F('a', 'eq', '{1}x'), 'a.eq."{1}x"'],
    [F('a', 'eq', ''), 'a.eq.'],
    [F('a', 'eq', 'back\\slash'), 'a.eq.back\\slash'],
  ])('%s', (c, out) => {
    expect(compileCondition(c)).toBe(out);
  });
});

describe('compileSelect / compileOrder', () => {
  it('writes every select form', () => {
    expect(compileSelect([
      { type: 'star' },
      { type: 'field', field: field('meta', '->>', 'year'), alias: 'yr', cast: 'int' },
      { type: 'embed', relation: 'labels', alias: 'label', hint: 'label_id', join: 'inner', spread: false, select: [{ type: 'field', field: field('name') }] },
      { type: 'embed', relation: 'genres', spread: true, select: [] },
      { type: 'embed', relation: 'labels', hint: 'leftover', spread: false, select: [{ type: 'field', field: field('tags', '->', '-1') }] },
    ])).toBe('*,yr:meta->>year::int,label:labels!label_id!inner(name),...genres(),labels!"leftover"(tags->"-1")');
  });

  it('writes every order form', () => {
    expect(compileOrder([
      { field: field('id') },
      { field: field('meta', '->>', 'year'), direction: 'desc', nulls: 'last' },
      { relation: 'labels', field: field('name'), nulls: 'first' },
    ])).toBe('id,meta->>year.desc.nullslast,labels(name).nullsfirst');
  });
});
