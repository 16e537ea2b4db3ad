import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAccept } from '../../src/grammar/media.js';
import { parseQuery } from '../../src/grammar/parse.js';
import { parsePrefer } from '../../src/grammar/prefer.js';
import { parseRange } from '../../src/grammar/range.js';
import { GrammarError } from '../../src/grammar/errors.js';
import { createApp, type App } from '../../src/server/app.js';
import type { Store } from '../../src/store/store.js';
import { makePGliteStore } from '../support/stores.js';
// @ts-expect-error plain JavaScript module shared with scripts/fuzz.mjs
import { checkOne, hostileCorpus, invariants, queryStringArbitrary, requestArbitrary, seedSmall } from './cases.mjs';

/**
 * The bounded slice of the fuzzing that `npm test` runs (scripts/fuzz.mjs runs 100,000 cases of the
 * same generators): the parser throws nothing but GrammarError, the header parsers never throw, and
 * the whole app answers random requests (grammar fragments, noise, the hostile corpus) without a 5xx,
 * with PostgREST-shaped error bodies, leaves the canary and the table list alone, and keeps serving.
 */

const CORPUS: string[] = hostileCorpus();
const PARSER_RUNS = 4000;
const SERVER_RUNS = 3000;

describe('parser fuzzing', () => {
  it(`parseQuery throws only GrammarError (${PARSER_RUNS} grammar-shaped and ${PARSER_RUNS / 2} arbitrary strings)`, () => {
    const onlyGrammarErrors = (s: string) => {
      try {
        parseQuery(s);
      } catch (err) {
        if (!(err instanceof GrammarError)) throw err;
        expect(err.status).toBe(400);
        expect(err.code).toBe('PGRST100');
      }
    };
    fc.assert(fc.property(queryStringArbitrary(CORPUS), onlyGrammarErrors), { numRuns: PARSER_RUNS });
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 60 }), onlyGrammarErrors), { numRuns: PARSER_RUNS / 2 });
  });

  it('Prefer, Range and Accept parsers never throw', () => {
    const header = fc.oneof(fc.constantFrom(...CORPUS), fc.string({ unit: 'binary', maxLength: 40 }), fc.array(fc.constantFrom('=', ',', ';', 'q=', '0-', '-', '*/*', 'text/csv', 'return', 'count', ' '), { maxLength: 8 }).map((x) => x.join('')));
    fc.assert(
      fc.property(header, (h) => {
        parsePrefer(h);
        parsePrefer([h, h]);
        parseRange(h);
        parseAccept(h);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('server fuzzing (createApp(...).handle over PGlite)', () => {
  let store: Store;
  let app: App;
  const logged: string[] = [];
  let before: string;

  beforeAll(async () => {
    store = await makePGliteStore();
    await seedSmall(store);
    app = createApp({ store, log: (l) => logged.push(l) });
    before = await invariants(store);
  });
  afterAll(async () => {
    await store?.close();
  });

  it(`answers ${SERVER_RUNS} random requests without a 5xx and leaves the canary alone`, async () => {
    await fc.assert(
      fc.asyncProperty(requestArbitrary(CORPUS), async (spec: { method: string; path: string }) => {
        const { problem } = await checkOne(app.handle, spec);
        expect(problem).toBeNull();
      }),
      { numRuns: SERVER_RUNS },
    );
    expect(logged).toEqual([]);
    expect(await invariants(store)).toBe(before);
    const alive = await app.handle(new Request('http://localhost/labels?select=id&limit=1'));
    expect(alive.status).toBe(200);
  });
});
