import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileCondition, compileOrder, compileQuery, compileSelect } from '../../src/grammar/compile.js';
import { parseLogicTree, parseOrder, parseQuery, parseSelect } from '../../src/grammar/parse.js';
import { conditionArb, orderArb, queryArb, selectArb } from './support-arbitraries.js';

const RUNS = 2500;
// fast-check builds some records without a prototype; structuredClone gives plain objects (keeping undefined keys).
const plain = <T>(x: T): T => structuredClone(x);

describe('parse(compile(model)) round trip', () => {
  it('whole queries: parseQuery(compileQuery(q)) deep-equals q', () => {
    fc.assert(fc.property(queryArb, (q) => {
      expect(parseQuery(compileQuery(q))).toStrictEqual(plain(q));
    }), { numRuns: RUNS });
  });

  it('select lists', () => {
    fc.assert(fc.property(selectArb.filter((s) => s.length > 0), (items) => {
      expect(parseSelect(compileSelect(items))).toStrictEqual(plain(items));
    }), { numRuns: RUNS });
  });

  it('order terms', () => {
    fc.assert(fc.property(orderArb, (o) => {
      expect(parseOrder(compileOrder(o.terms))).toStrictEqual(plain(o.terms));
    }), { numRuns: RUNS });
  });

  it('conditions inside a logic tree', () => {
    fc.assert(fc.property(conditionArb, (c) => {
      const parsed = parseLogicTree('or', `(${compileCondition(c)})`);
      expect(parsed.condition).toStrictEqual({ kind: 'or', negated: false, conditions: [plain(c)] });
    }), { numRuns: RUNS });
  });
});
