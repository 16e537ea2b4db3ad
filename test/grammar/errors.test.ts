import { describe, expect, it } from 'vitest';
import { GrammarError } from '../../src/grammar/errors.js';
import { parseQuery } from '../../src/grammar/parse.js';

/** The GrammarError a query string raises. */
function failure(qs: string): GrammarError {
  try {
    parseQuery(qs);
  } catch (e) {
    if (e instanceof GrammarError) return e;
    throw e;
  }
  throw new Error(`expected ${qs} to fail`);
}

describe('PGRST100 texts given by the reference (exact)', () => {
  it.each<[string, string, string]>([
    ['id=0', '"failed to parse filter (0)" (line 1, column 1)', 'unexpected "0" expecting "not" or operator (eq, gt, ...)'],
    ['order=id.asc.nullslasttt', '"failed to parse order (id.asc.nullslasttt)" (line 1, column 17)', 'unexpected \'t\' expecting "," or end of input'],
    ['or=()', '"failed to parse logic tree (())" (line 1, column 4)',
      'unexpected ")" expecting field name (* or [a..z0..9_$]), negation operator (not) or logic operator (and, or)'],
    ['order=id.ac', '"failed to parse order (id.ac)" (line 1, column 4)', 'unexpected "c" expecting "asc", "desc", "nullsfirst" or "nullslast"'],
  ])('%s', (qs, message, details) => {
    const e = failure(qs);
    expect({ code: e.code, status: e.status, message: e.message, details: e.details, hint: e.hint })
      .toStrictEqual({ code: 'PGRST100', status: 400, message, details, hint: null });
  });
});

describe('PGRST100 texts from PostgREST 12 source doctests (same Parsec rules)', () => {
  it.each<[string, string, string]>([
    ['a.b=noop.0', '"failed to parse filter (noop.0)" (line 1, column 1)', 'unexpected "o" expecting "not" or operator (eq, gt, ...)'],
    ['id=eq().value', '"failed to parse filter (eq().value)" (line 1, column 4)', 'unexpected ")" expecting operator (eq, gt, ...)'],
    ['id=is().value', '"failed to parse filter (is().value)" (line 1, column 3)', 'unexpected "(" expecting operator (eq, gt, ...)'],
    ['id=in().value', '"failed to parse filter (in().value)" (line 1, column 3)', 'unexpected "(" expecting operator (eq, gt, ...)'],
    ['id=fts().value', '"failed to parse filter (fts().value)" (line 1, column 5)', 'unexpected ")" expecting operator (eq, gt, ...)'],
    ['select=id,clients(name[])', '"failed to parse select parameter (id,clients(name[]))" (line 1, column 16)',
      'unexpected \'[\' expecting letter, digit, "-", "->>", "->", "::", ".", ")", "," or end of input'],
    ['select=data->>-78xy', '"failed to parse select parameter (data->>-78xy)" (line 1, column 11)',
      'unexpected \'x\' expecting digit, "->", "::", ".", "," or end of input'],
    ['select=name::', '"failed to parse select parameter (name::)" (line 1, column 7)', 'unexpected end of input expecting letter or digit'],
    ['order=clients(name,id)', '"failed to parse order (clients(name,id))" (line 1, column 8)',
      'unexpected \'(\' expecting letter, digit, "-", "->>", "->", delimiter (.), "," or end of input'],
    ['order=id.descc', '"failed to parse order (id.descc)" (line 1, column 8)', 'unexpected \'c\' expecting delimiter (.), "," or end of input'],
    ['order=id.nulsfist', '"failed to parse order (id.nulsfist)" (line 1, column 4)', 'unexpected "n" expecting "asc", "desc", "nullsfirst" or "nullslast"'],
    ['order=id.asc.nlsfst', '"failed to parse order (id.asc.nlsfst)" (line 1, column 8)', 'unexpected "l" expecting "nullsfirst" or "nullslast"'],
    ['order=id.asc.smth34', '"failed to parse order (id.asc.smth34)" (line 1, column 8)', 'unexpected "s" expecting "nullsfirst" or "nullslast"'],
    ['or=(id.in.1,2,id.eq.3)', '"failed to parse logic tree ((id.in.1,2,id.eq.3))" (line 1, column 10)', 'unexpected "1" expecting "("'],
    ['and=(ord(id.eq.1,id.eq.1),id.eq.2)', '"failed to parse logic tree ((ord(id.eq.1,id.eq.1),id.eq.2))" (line 1, column 7)', 'unexpected "d" expecting "("'],
    ['or=(id.eq.1,not.xor(id.eq.2,id.eq.3))', '"failed to parse logic tree ((id.eq.1,not.xor(id.eq.2,id.eq.3)))" (line 1, column 16)',
      'unexpected "x" expecting logic operator (and, or)'],
  ])('%s', (qs, message, details) => {
    const e = failure(qs);
    expect([e.code, e.message, e.details]).toStrictEqual(['PGRST100', message, details]);
  });
});

describe('other PGRST100 cases', () => {
  it.each<[string, string, string]>([
    ['x=', '"failed to parse filter ()" (line 1, column 1)', 'unexpected end of input expecting "not" or operator (eq, gt, ...)'],
    ['apikey=abc', '"failed to parse filter (abc)" (line 1, column 1)', 'unexpected "a" expecting "not" or operator (eq, gt, ...)'],
    ['label_id=is.nil', '"failed to parse filter (is.nil)" (line 1, column 5)', 'unexpected "i" expecting null or trilean value (unknown, true, false)'],
    ['label_id=is.not_null', '"failed to parse filter (is.not_null)" (line 1, column 5)', 'unexpected "o" expecting null or trilean value (unknown, true, false)'],
    ['id=neq(any).x', '"failed to parse filter (neq(any).x)" (line 1, column 4)', 'unexpected "(" expecting operator (eq, gt, ...)'],
    ['id=in(any).(1)', '"failed to parse filter (in(any).(1))" (line 1, column 3)', 'unexpected "(" expecting operator (eq, gt, ...)'],
    ['id=cs(all).{1}', '"failed to parse filter (cs(all).{1})" (line 1, column 3)', 'unexpected "(" expecting operator (eq, gt, ...)'],
    ['%3D=eq.1', '"failed to parse tree path (=)" (line 1, column 1)', 'unexpected "=" expecting field name (* or [a..z0..9_$])'],
    ['or=(a.eq.1', '"failed to parse logic tree ((a.eq.1)" (line 1, column 10)', 'unexpected end of input expecting "," or ")"'],
    ['select=id,', '"failed to parse select parameter (id,)" (line 1, column 4)',
      'unexpected end of input expecting "...", field name (* or [a..z0..9_$]), "*" or "count()"'],
    ['order=', '"failed to parse order ()" (line 1, column 1)', 'unexpected end of input expecting field name (* or [a..z0..9_$])'],
  ])('%s', (qs, message, details) => {
    const e = failure(qs);
    expect([e.code, e.message, e.details]).toStrictEqual(['PGRST100', message, details]);
  });

  it('counts columns in characters, not UTF-16 units', () => {
    expect(failure('order=%F0%9F%8E%B5.x').message).toBe('"failed to parse order (🎵.x)" (line 1, column 1)');
    expect(failure('order=id%F0%9F%8E%B5').message).toBe('"failed to parse order (id🎵)" (line 1, column 3)');
  });
});

describe('error precedence follows PostgREST: order, logic, columns, select, filters, on_conflict', () => {
  it.each<[string, string]>([
    ['id=0&order=id.ac', 'order'],
    ['id=0&or=()', 'logic tree'],
    ['select=id,&columns=', 'columns parameter'],
    ['id=0&select=id,', 'select parameter'],
    ['on_conflict=&id=0', 'filter'],
  ])('%s fails on the %s', (qs, what) => {
    expect(failure(qs).message).toContain(`failed to parse ${what} (`);
  });

  it('reports a parse error before disabled aggregates (PGRST123)', () => {
    expect(failure('select=count()&id=0').code).toBe('PGRST100');
    expect(failure('select=count()').code).toBe('PGRST123');
  });
});
