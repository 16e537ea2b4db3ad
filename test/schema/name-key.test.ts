import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nameKey } from '../../src/schema/keys.js';
import type { Store } from '../../src/store/store.js';
import { disposeStore, STORE_KINDS } from '../support/stores.js';

/**
 * The client folds names (nameKey: import's natural keys and references by name, check's
 * duplicate rules) and the database folds them (catalog_name_key: the names in credit lists)
 * by one rule: they must agree, or a name would match on one side and not the other.
 */

// letters with and without accents, Greek (a final sigma), Cyrillic, Japanese (dakuten), Hebrew
// (points), ligatures and compatibility forms, and every kind of space either side knows
const CHARS = [...'aAeÉéèÊüÜñÑçÇøØåÅßẞıİ', ...'ΟΔΟΣςσΩω', ...'АРИЯария', ...'かがカガﾊﾟ', ...'שָׁלוֹם', ...'ﬁ①ＡＢ', ' ', '  ', '\t', '\n', '\u00a0', '\u2003', '\u2007', '\u202f', '\u3000', '\ufeff', '\u0301', '\u0308', '-', '.', '1'];

describe.each(STORE_KINDS)('nameKey and the database’s catalog_name_key agree ($kind)', ({ make, skip }) => {
  let store: Store & { drop?(): Promise<void> };
  beforeAll(async () => {
    if (!skip) store = await make();
  });
  afterAll(async () => {
    if (!skip) await disposeStore(store);
  });

  it.skipIf(skip)('on names made of letters, marks and spaces from many scripts (property)', async () => {
    const names = fc.sample(fc.array(fc.constantFrom(...CHARS), { maxLength: 12 }).map((cs) => cs.join('')), { numRuns: 3000, seed: 25 });
    names.push('  Café   del Mar ', 'ΟΔΟΣ', 'が', 'Ωmega', '\ufeffBOM', 'Beyoncé\u00a0Knowles');
    // as hex: a client library's text decoder drops a leading U+FEFF from what it reads
    const sql = `select encode(convert_to(catalog_name_key(n), 'UTF8'), 'hex') as k from unnest($1::text[]) with ordinality as x(n, i) order by i`;
    const { rows } = await store.query<{ k: string }>(sql, [names]);
    const text = (hex: string) => Buffer.from(hex, 'hex').toString('utf8');
    const differ = names.map((n, i) => ({ n, client: nameKey(n), database: text(rows[i].k) })).filter((r) => r.client !== r.database);
    expect(differ.slice(0, 5)).toEqual([]);
    expect(rows.length).toBe(names.length);
  });
});
