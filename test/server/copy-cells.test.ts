import { describe, expect, it } from 'vitest';
// @ts-expect-error plain ESM JavaScript without type declarations (the bench's mulberry32)
import { prng } from '../../bench/lib/generate.js';
import { COPY_CSV } from '../../src/grammar/media.js';
import { TABLES } from '../../src/schema/catalog.js';
import { bodyCredits, bodyCreditsSliced, copyCreditsPlain, CreditIds } from '../../src/server/link-batch.js';
import { parsePayload, parsePayloadSliced } from '../../src/server/payload.js';
import { SLICE_RECORDS } from '../../src/shared/turns.js';
import type { WritePlan } from '../../src/server/plan.js';

/**
 * Issue 36: the COPY body's jsonb cells are found once, where the payload's depth check reads them
 * (payload.ts CopyCells), and the credits read (link-batch.ts copyCreditsPlain) takes them from
 * there instead of tokenizing the body again. Both ways must give the same answer and collect the
 * same credits, on bodies with plain and tricky credit lists, NULLs, empty strings, blank lines,
 * ragged records, quoted line ends and CRLF.
 */
const tracks = TABLES.find((t) => t.name === 'tracks')!;
const JSON_COLUMNS: ReadonlySet<string> = new Set(tracks.columns.filter((c) => c.type === 'jsonb').map((c) => c.name));
const COPY = COPY_CSV;

const uuid = (r: () => number) => {
  const hex = () => Math.floor(r() * 16).toString(16);
  const part = (n: number) => Array.from({ length: n }, hex).join('');
  return `${part(8)}-${part(4)}-4${part(3)}-a${part(3)}-${part(12)}`;
};
const csv = (s: string) => `"${s.replaceAll('"', '""')}"`;

function creditCell(r: () => number): string {
  const pick = r();
  if (pick < 0.15) return ''; // NULL
  if (pick < 0.2) return '""'; // an empty string: no JSON
  if (pick < 0.25) return csv('[{"name": "Line\nbreak"}]');
  if (pick < 0.3) return csv(`[{"name": "X", "share": 100.0000000000000001}]`);
  if (pick < 0.33) return csv('[{"name": "   "}]');
  if (pick < 0.36) return csv('[{"name": "esc \\" aped"}]');
  const n = 1 + Math.floor(r() * 3);
  const list = Array.from({ length: n }, (_, i) => (r() < 0.7 ? { id: uuid(r), name: `Artist ${i} ✓`, role: r() < 0.5 ? 'producer' : undefined, share: r() < 0.3 ? 50 : undefined } : { name: `Named ${i}` }));
  return csv(JSON.stringify(list));
}

function body(seed: number): { text: string; columns: string[] } {
  const r = prng(seed);
  const columns = ['id', 'track_title', 'primary_artists', 'writer_artists'];
  const lines = [columns.join(',')];
  const records = 1 + Math.floor(r() * 40);
  for (let i = 0; i < records; i++) {
    const pick = r();
    if (pick < 0.03) lines.push(''); // a blank line
    else if (pick < 0.05) lines.push(`${uuid(r)},ragged`); // too few fields
    else lines.push([uuid(r), r() < 0.2 ? csv('a "title",\nwith a line end') : `Title ${i}`, creditCell(r), creditCell(r)].join(','));
  }
  const eol = seed % 3 === 0 ? '\r\n' : '\n';
  return { text: `${lines.join(eol)}${eol}`, columns };
}

describe("the credits read takes the depth check's cells (one tokenizing of a COPY body)", () => {
  it('gives the answer and the credits the tokenizer gives, on 600 generated bodies', () => {
    let plain = 0;
    let indexed = 0;
    for (let seed = 1; seed <= 600; seed++) {
      const { text, columns } = body(seed);
      const bytes = Buffer.from(text);
      const payload = parsePayload(bytes, COPY, { method: 'POST', jsonColumns: JSON_COLUMNS });
      expect(payload.copyCells?.columns).toEqual(['primary_artists', 'writer_artists']);
      const plan = { table: tracks, columns: columns.map((n) => tracks.columns.find((c) => c.name === n)!) } as unknown as WritePlan;
      const withIndex = new CreditIds();
      const withTokenizer = new CreditIds();
      const a = copyCreditsPlain(payload.copy!, { ...plan, payload } as WritePlan, withIndex);
      const b = copyCreditsPlain(payload.copy!, plan, withTokenizer);
      expect([seed, a]).toEqual([seed, b]);
      if (a) expect([seed, withIndex.arrays()]).toEqual([seed, withTokenizer.arrays()]);
      plain += a ? 1 : 0;
      indexed += payload.copyCells!.records;
    }
    // both outcomes occur, over many records
    expect(plain).toBeGreaterThan(20);
    expect(plain).toBeLessThan(580);
    expect(indexed).toBeGreaterThan(6000);
  });

  it("a plan whose columns differ from the body's header reads the body itself", () => {
    const bytes = Buffer.from(`id,primary_artists\n${'7d000000-0000-4000-8000-000000000001'},${csv('[{"name": "A"}]')}\n`);
    const payload = parsePayload(bytes, COPY, { method: 'POST', jsonColumns: JSON_COLUMNS });
    const other = { table: tracks, columns: ['id', 'primary_artists', 'track_title'].map((n) => tracks.columns.find((c) => c.name === n)!), payload } as unknown as WritePlan;
    // three columns against a two-field record: not plain (the tokenizer's own count), whichever way
    expect(copyCreditsPlain(payload.copy!, other)).toBe(false);
  });
});

/**
 * The service reads a COPY body's cells and credits a slice of records at a time, letting the
 * event loop turn between slices (src/server/turns.ts): the same cells, the same credits, the same
 * refusals as reading it at once, on bodies of several slices.
 */
describe('a COPY body read a slice at a time', () => {
  /** One body of many records: the records of `count` generated bodies, one header, ending in `extra`. */
  function large(first: number, count: number, extra = ''): Buffer {
    const records = Array.from({ length: count }, (_, i) => body(first + i).text.replace(/^[^\n]*\n/, '').replace(/\r\n/g, '\n'));
    return Buffer.from(`id,track_title,primary_artists,writer_artists\n${records.join('')}${extra}`);
  }
  const columns = ['id', 'track_title', 'primary_artists', 'writer_artists'];
  const plan = { table: tracks, columns: columns.map((n) => tracks.columns.find((c) => c.name === n)!) } as unknown as WritePlan;

  it('finds the cells and credits reading it at once finds, on bodies of several slices', async () => {
    let plain = 0;
    for (let first = 1; first <= 400; first += 100) {
      const bytes = large(first, 100);
      const [a, b] = [parsePayload(bytes, COPY, { method: 'POST', jsonColumns: JSON_COLUMNS }), await parsePayloadSliced(bytes, COPY, { method: 'POST', jsonColumns: JSON_COLUMNS })];
      expect(a.copyCells!.records).toBeGreaterThan(2 * SLICE_RECORDS);
      // the same cells (typed arrays compared whole, not element by element)
      const cells = (p: typeof a) => ({ ...p.copyCells!, counts: Buffer.from(p.copyCells!.counts.buffer).toString('base64'), at: Buffer.from(p.copyCells!.at.buffer).toString('base64'), flags: Buffer.from(p.copyCells!.flags).toString('base64') });
      expect(cells(b)).toEqual(cells(a));
      expect({ ...b, copy: null, copyCells: null }).toEqual({ ...a, copy: null, copyCells: null });
      expect(b.copy).toBe(bytes);
      const whole = bodyCredits(a.copy!, { ...plan, payload: a } as WritePlan, true);
      const sliced = await bodyCreditsSliced(b.copy!, { ...plan, payload: b } as WritePlan, true);
      expect([first, sliced.plain]).toEqual([first, whole.plain]);
      expect(sliced.ids!.arrays()).toEqual(whole.ids!.arrays());
      plain += whole.plain ? 1 : 0;
    }
    // one body of plain lists only, over several slices: read to its end
    const lines = Array.from({ length: 3 * SLICE_RECORDS }, (_, i) => `${uuid(prng(i + 1))},T ${i},${csv(JSON.stringify([{ id: uuid(prng(i + 7)), name: `A ${i}` }]))},`);
    const bytes = Buffer.from(`${columns.join(',')}\n${lines.join('\n')}\n`);
    const payload = await parsePayloadSliced(bytes, COPY, { method: 'POST', jsonColumns: JSON_COLUMNS });
    const sliced = await bodyCreditsSliced(payload.copy!, { ...plan, payload } as WritePlan, true);
    expect(sliced.plain).toBe(true);
    expect(sliced.ids!.count).toBe(3 * SLICE_RECORDS);
    expect(sliced.ids!.arrays()).toEqual(bodyCredits(payload.copy!, { ...plan, payload } as WritePlan, true).ids!.arrays());
    expect(plain).toBeLessThan(4); // the generated bodies hold tricky lists: not plain
  });

  it('refuses a malformed record or a cell nested too deep in a later slice as reading it at once does', async () => {
    const deep = `${'['.repeat(600)}${']'.repeat(600)}`;
    for (const extra of ['7d000000-0000-4000-8000-000000000001,"unclosed\n', `7d000000-0000-4000-8000-000000000001,Deep,${csv(deep)},\n`]) {
      const bytes = large(1, 60, extra);
      const once = (() => {
        try {
          parsePayload(bytes, COPY, { method: 'POST', jsonColumns: JSON_COLUMNS });
          return null;
        } catch (err) {
          return err as Error;
        }
      })();
      expect(once).not.toBeNull();
      await expect(parsePayloadSliced(bytes, COPY, { method: 'POST', jsonColumns: JSON_COLUMNS })).rejects.toEqual(once);
    }
  });
});
