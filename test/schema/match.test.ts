import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isrcKey, upcKey } from '../../src/schema/keys.js';
import { keyExpressions, parseMatch, renderMatch } from '../../src/schema/match.js';
import { sourceIdsProblem } from '../../src/schema/source-ids.js';
import type { Store } from '../../src/store/store.js';
import { disposeStore, STORE_KINDS } from '../support/stores.js';

describe('the match= grammar', () => {
  it.each([
    ['isrc_code', [{ kind: 'key', columns: ['isrc_code'] }]],
    ['source_ids.legacy|isrc_code', [{ kind: 'source', source: 'legacy' }, { kind: 'key', columns: ['isrc_code'] }]],
    ['upc_code|catalog_number', [{ kind: 'key', columns: ['upc_code'] }, { kind: 'key', columns: ['catalog_number'] }]],
    ['genre+name', [{ kind: 'key', columns: ['genre', 'name'] }]],
    [' genre + name | source_ids.my-src_2 ', [{ kind: 'key', columns: ['genre', 'name'] }, { kind: 'source', source: 'my-src_2' }]],
  ])('parses %j', (text, alts) => {
    expect(parseMatch(text)).toEqual(alts);
    expect(parseMatch(renderMatch(alts as never))).toEqual(alts);
  });

  it.each(['', 'isrc_code|', '|isrc_code', 'genre+', 'source_ids.', 'source_ids.a b', 'na-me', "name'"])('refuses %j', (text) => {
    expect(parseMatch(text)).toHaveProperty('error');
  });

  it('writes a key as the indexes are written: one column as it is, parts of several with null as empty', () => {
    expect(keyExpressions([{ name: 'isrc_code', type: 'text' }], (c) => c.name)).toEqual(['catalog_isrc_key(isrc_code)']);
    expect(keyExpressions([{ name: 'upc_code', type: 'text' }], (c) => `x.${c.name}`)).toEqual(['catalog_upc_key(x.upc_code)']);
    expect(keyExpressions([{ name: 'birthdate', type: 'date' }], (c) => c.name)).toEqual(['catalog_name_key((birthdate)::text)']);
    expect(keyExpressions([{ name: 'genre', type: 'text' }, { name: 'name', type: 'text' }], (c) => c.name)).toEqual([
      "coalesce(catalog_name_key(genre), '')",
      "coalesce(catalog_name_key(name), '')",
    ]);
  });

  it('checks a body’s source_ids', () => {
    expect(sourceIdsProblem(null)).toBeNull();
    expect(sourceIdsProblem({ a: '1', b: null, 'c-d_9': 'x y' })).toBeNull();
    expect(sourceIdsProblem('x')).toEqual({ path: 'source_ids', reason: 'must be an object of source names and ids, not string' });
    expect(sourceIdsProblem({ a: { b: 1 } })).toEqual({ path: 'source_ids.a', reason: 'must be text (the id in that source), not object' });
    expect(sourceIdsProblem({ ['x'.repeat(65)]: '1' })?.reason).toMatch(/not a source name/);
    expect(sourceIdsProblem({ a: '😀'.repeat(512) })).toBeNull(); // characters, not UTF-16 units
    expect(sourceIdsProblem({ a: '😀'.repeat(513) })?.reason).toBe('is longer than 512 characters');
  });
});

// separators, case, every kind of space either side knows, letters that are no ISRC's
const CHARS = [...'USABCZ0123456789abcxyz', '-', '_', '.', ' ', '\t', '\n', '\u00a0', '\u2003', '\u202f', '\u3000', '\ufeff', 'é', 'ß'];

describe.each(STORE_KINDS)('the client’s ISRC and UPC keys and the database’s agree ($kind)', ({ make, skip }) => {
  let store: Store & { drop?(): Promise<void> };
  beforeAll(async () => {
    if (!skip) store = await make();
  });
  afterAll(async () => {
    if (!skip) await disposeStore(store);
  });

  it.skipIf(skip)('catalog_isrc_key is isrcKey of the trimmed text, catalog_upc_key is upcKey (property)', async () => {
    const texts = fc.sample(fc.array(fc.constantFrom(...CHARS), { maxLength: 18 }).map((cs) => cs.join('')), { numRuns: 2000, seed: 35 });
    texts.push('us-abc-16-00121', ' USABC1600121 ', 'US.ABC.16.00121', '\u00a0us_abc_16_00121\u3000', 'usabc160012', '0 12345-67890 5', '');
    const sql = `select catalog_isrc_key(t) as i, catalog_upc_key(t) as u from unnest($1::text[]) with ordinality as x(t, n) order by n`;
    const { rows } = await store.query<{ i: string; u: string }>(sql, [texts]);
    // JS's toUpperCase also capitalises letters outside ASCII (ß, é), which the database's upper()
    // may leave: only ASCII-fixable keys are compared for case
    const ascii = (s: string) => !/[^\x00-\x7f]/.test(s.replace(/[\s\ufeff]/g, ''));
    const differ = texts
      .map((t, n) => ({ t, client: isrcKey(t.trim()), database: rows[n].i, upc: [upcKey(t), rows[n].u] }))
      .filter((r) => (ascii(r.t) && r.client !== r.database) || r.upc[0] !== r.upc[1]);
    expect(differ.slice(0, 5)).toEqual([]);
  });
});
