import { describe, expect, it } from 'vitest';
import { CsvTokenizer, ESCAPED, TOKENS_OK } from '../../src/format/csv-tokens.js';
import { plainCreditsCell } from '../../src/server/credit-scan.js';
import { plainCreditsText } from '../../src/server/link-batch.js';

/**
 * The byte reader of credit cells (credit-scan.ts) against the JSON route it stands in for
 * (link-batch.ts plainCreditsText): it may say "in doubt" (null) where the JSON route says plain,
 * never "plain" where the JSON route does not. Cells are written as CSV does (quoted, `"` doubled)
 * and read back through the tokenizer, as copyCreditsPlain reads a COPY body.
 */
function scan(json: string): true | null {
  const body = Buffer.from(`"${json.replaceAll('"', '""')}"\n`);
  const t = new CsvTokenizer();
  expect(t.read(body, 0, body.length, true)).toBe(TOKENS_OK);
  return plainCreditsCell(body, t.from(0), t.to(0), (t.flags[0] & ESCAPED) !== 0);
}

const ID = 'a0000000-07e4-405b-a638-17019647759c';
const PLAIN = [
  '[]',
  ' [ ] ',
  `[{"id":"${ID}","name":"Björn Müller 0"}]`,
  `[{"name":"Zoë Nakamura","share":33},{"name":"Kenji","share":0},{"name":"A","share":100},{"name":"B","share":12.5}]`,
  `[ {"id": "${ID}", "name": " Léa ", "role": "producer", "share": 50} ,\n {"name":"Ты и я"} ]`,
  `[{"role":"","name":"x"}]`,
];
const NOT_PLAIN = [
  '',
  'null',
  '{}',
  '[null]',
  '[{}]',
  '[1]',
  '["Léa"]',
  '[{"name":""}]',
  '[{"name":"   "}]',
  '[{"name":null}]',
  '[{"name":"x","id":null}]',
  `[{"name":"x","id":"${ID.toUpperCase()}"}]`,
  `[{"name":"x","id":"${ID.slice(1)}"}]`,
  `[{"name":"x","id":"${ID}0"}]`,
  '[{"name":"x","id":"not a uuid"}]',
  '[{"name":"x","share":101}]',
  '[{"name":"x","share":-1}]',
  '[{"name":"x","share":"5"}]',
  '[{"name":"x","share":01}]',
  '[{"name":"x","share":1.}]',
  '[{"name":"x","share":1234567890123456789}]',
  '[{"name":"x","role":5}]',
  '[{"name":"x","extra":1}]',
  '[{"name":"x"}',
  '[{"name":"x"},]',
  '[{"name":"x"}] x',
  '[{"name":"x",}]',
  '[{"name" "x"}]',
];
/** Plain to JSON.parse, but beyond what the byte reader reads: it must say "in doubt". */
const IN_DOUBT = ['[{"name":"L\\u00e9a"}]', '[{"name":"a\\"b"}]', '[{"name":"x","name":"y"}]', '[{"name":"x","share":1E1}]'];

describe('the byte reader of credit cells', () => {
  it('reads the plain lists as plain, as the JSON route does', () => {
    for (const json of PLAIN) {
      expect(plainCreditsText(json), json).toBe(true);
      expect(scan(json), json).toBe(true);
    }
  });

  it('never says plain where the JSON route does not', () => {
    for (const json of [...NOT_PLAIN, ...IN_DOUBT]) {
      if (!plainCreditsText(json)) expect(scan(json), json).toBeNull();
    }
    expect(NOT_PLAIN.filter((j) => plainCreditsText(j))).toEqual([]);
  });

  it('leaves escapes, repeated keys and exponents to the JSON route', () => {
    for (const json of IN_DOUBT) expect(scan(json), json).toBeNull();
  });

  it('agrees with the JSON route on every one-byte change of plain lists (never plain where it is not)', () => {
    const bytes = '[]{},:" 0123456789.-abcdefxyzEe\\\n';
    let checked = 0;
    let agreedPlain = 0;
    for (const json of PLAIN) {
      for (let i = 0; i < json.length; i++) {
        for (const c of bytes) {
          for (const variant of [json.slice(0, i) + c + json.slice(i + 1), json.slice(0, i) + c + json.slice(i), json.slice(0, i) + json.slice(i + 1)]) {
            const viaJson = plainCreditsText(variant);
            const viaBytes = scan(variant);
            if (viaBytes === true) {
              expect(viaJson, variant).toBe(true);
              agreedPlain++;
            }
            checked++;
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(10_000);
    expect(agreedPlain).toBeGreaterThan(100);
  });
});
