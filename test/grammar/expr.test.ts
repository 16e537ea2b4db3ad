import { describe, expect, it } from 'vitest';
import { GrammarError } from '../../src/grammar/errors.js';
import { parseWhereExpr } from '../../src/grammar/expr.js';
import type { WhereClause } from '../../src/grammar/types.js';
import { F, field, or } from './support.js';

describe('parseWhereExpr: PostgREST form', () => {
  it.each<[string, WhereClause]>([
    ['release_date=gte.2024-01-01', { path: [], condition: F('release_date', 'gte', '2024-01-01') }],
    ['genre=in.(House,Techno)', { path: [], condition: F('genre', 'in', ['House', 'Techno']) }],
    ['label_id=is.null', { path: [], condition: F('label_id', 'is', 'null') }],
    ['stage_name=not.ilike.*dj*', { path: [], condition: F('stage_name', 'ilike', '*dj*', { negated: true }) }],
    ['labels.name=eq.x', { path: ['labels'], condition: F('name', 'eq', 'x') }],
    ['field=not.in.(a,b)', { path: [], condition: F('field', 'in', ['a', 'b'], { negated: true }) }],
    ['or=(a.eq.1,b.eq.2)', { path: [], condition: or(F('a', 'eq', '1'), F('b', 'eq', '2')) }],
    ['title=eq.a+b', { path: [], condition: F('title', 'eq', 'a+b') }],
  ])('%s', (text, out) => {
    expect(parseWhereExpr(text)).toStrictEqual(out);
  });
});

describe('parseWhereExpr: short form', () => {
  it.each<[string, WhereClause]>([
    ['release_date>=2024-01-01', { path: [], condition: F('release_date', 'gte', '2024-01-01') }],
    ['release_date >= 2024-01-01', { path: [], condition: F('release_date', 'gte', '2024-01-01') }],
    ['release_date<=2024', { path: [], condition: F('release_date', 'lte', '2024') }],
    ['n<5', { path: [], condition: F('n', 'lt', '5') }],
    ['n > 5', { path: [], condition: F('n', 'gt', '5') }],
    ['title=Kind of Blue', { path: [], condition: F('title', 'eq', 'Kind of Blue') }],
    ['title = Vol. 2: Live (x)', { path: [], condition: F('title', 'eq', 'Vol. 2: Live (x)') }],
    ['title!=x', { path: [], condition: F('title', 'neq', 'x') }],
    ['stage_name~*dj*', { path: [], condition: F('stage_name', 'ilike', '*dj*') }],
    ['stage_name !~ *dj*', { path: [], condition: F('stage_name', 'ilike', '*dj*', { negated: true }) }],
    ['labels.name = Verve', { path: ['labels'], condition: F('name', 'eq', 'Verve') }],
    ['meta->>format=vinyl', { path: [], condition: F(field('meta', '->>', 'format'), 'eq', 'vinyl') }],
    ['meta->>year>=1960', { path: [], condition: F(field('meta', '->>', 'year'), 'gte', '1960') }],
    ['"a=b"=1', { path: [], condition: F('a=b', 'eq', '1') }],
    ['title=', { path: [], condition: F('title', 'eq', '') }],
    ['title=eq', { path: [], condition: F('title', 'eq', 'eq') }],
    // issue 27: trailing spaces belong to the value (spaces after the operator are layout)
    ['genre=techno ', { path: [], condition: F('genre', 'eq', 'techno ') }],
    ['genre =  techno  ', { path: [], condition: F('genre', 'eq', 'techno  ') }],
  ])('%s', (text, out) => {
    expect(parseWhereExpr(text)).toStrictEqual(out);
  });

  it.each(['title', '=x', 'bad name!x', 'a b c', 'na%me=1', 'na%me=eq.1', 'x.=eq.1'])('rejects %j with a GrammarError', (text) => {
    expect(() => parseWhereExpr(text)).toThrow(GrammarError);
  });

  it('explains what it expected', () => {
    try {
      parseWhereExpr('title');
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(GrammarError);
      expect((e as GrammarError).message).toBe('invalid where expression "title"');
      expect((e as GrammarError).details).toBe('no operator found');
      expect((e as GrammarError).hint).toContain('field=op.value');
    }
  });
});
