import { describe, expect, it } from 'vitest';
import { CR, CsvTokenizer, LF, TOKENS_MALFORMED } from '../../src/format/csv-tokens.js';
import { CopyTranscoder, fieldPlans, MALFORMED, MORE, OK, RAGGED } from '../../src/import/pass/copy-transcode.js';
import { KeyScan } from '../../src/import/pass/key-scan.js';
import type { ColumnDef } from '../../src/schema/catalog.js';
import { DuplicateFinder } from '../../src/io/duplicate-finder.js';
// @ts-expect-error plain ESM JavaScript without type declarations
import { prng } from '../../bench/lib/generate.js';

/**
 * The scan's key reader (src/import/pass/key-scan.ts) reads what the transcoder reads: for every
 * record of generated files (quotes, doubled quotes, line ends inside quotes, CRLF, blank lines,
 * NULs, empty and null-token keys, ragged and malformed records), the same end, line count, key
 * and refusal, and the same answer when the bytes are cut anywhere inside a record (MORE).
 */

const col = (name: string, type: string, nullable = true): ColumnDef => ({ name, type, nullable }) as ColumnDef;
const COLUMNS: Record<'uuid' | 'text', ColumnDef[]> = {
  uuid: [col('id', 'uuid'), col('track_title', 'text'), col('lyrics', 'text')],
  text: [col('track_title', 'text'), col('isrc_code', 'text'), col('lyrics', 'text')],
};

/** The bench's deterministic generator (mulberry32), so a failure names its seed. */
const rng: (seed: number) => () => number = prng;

const CELLS = [
  '7b000000-0000-4000-8000-000000000001',
  '7B000000-0000-4000-8000-00000000000A',
  '"7b000000-0000-4000-8000-000000000002"',
  '{7b000000-0000-4000-8000-000000000003}',
  'not-a-uuid',
  '',
  '\\N',
  '"\\N"',
  'plain text',
  '"with, a comma"',
  '"with ""doubled"" quotes"',
  '"a line\nbreak inside"',
  '"a CRLF\r\ninside"',
  '"""',
  'a\u0000nul',
  '"quoted\u0000nul"',
  'Ты и я',
  '"スタジオ 2, 東京"',
  'lone\rcr',
];
const BROKEN = ['a"quote', '"closed"then', '"never closed'];

function file(seed: number, delimiter: string): Buffer {
  const r = rng(seed);
  const pick = <T,>(xs: T[]) => xs[Math.floor(r() * xs.length)];
  const lines: string[] = ['id,title,lyrics'.replaceAll(',', delimiter)];
  const count = 5 + Math.floor(r() * 25);
  for (let i = 0; i < count; i++) {
    const roll = r();
    if (roll < 0.05) lines.push('');
    const width = roll < 0.1 ? 2 : roll < 0.15 ? 4 : 3;
    const cells = Array.from({ length: width }, () => (r() < 0.02 ? pick(BROKEN) : pick(CELLS)));
    lines.push(cells.join(delimiter));
  }
  const eol = r() < 0.3 ? '\r\n' : '\n';
  const tail = r() < 0.5 ? eol : r() < 0.5 ? '\r' : '';
  return Buffer.from(lines.join(eol) + tail, 'utf8');
}

type Reading = Array<{ at: number; status: string; next?: number; lines?: number; key?: string | null }>;

/** Every record of `buf` as ByteCsvFile reads them (blank lines skipped), and where each started. */
function readAll(reader: CopyTranscoder, buf: Buffer): Reading {
  const out: Reading = [];
  const n = buf.length;
  let p = 0;
  while (p < n) {
    if (buf[p] === LF) {
      p++;
      continue;
    }
    if (buf[p] === CR && (p + 1 < n ? buf[p + 1] === LF : true)) {
      p += p + 1 < n ? 2 : 1;
      continue;
    }
    const status = reader.record(buf, p, n, true, null, 0);
    if (status === MALFORMED) {
      out.push({ at: p, status: 'malformed' });
      break;
    }
    // the scan notes no key of a ragged record the transcoder counts; the key reader cannot count fields
    out.push({ at: p, status: 'read', next: reader.next, lines: reader.lines, key: status === RAGGED ? undefined : reader.key });
    p = reader.next;
  }
  return out;
}

function readers(kind: 'uuid' | 'text', delimiter: string, nullToken: string | null) {
  const key = kind === 'uuid' ? 'id' : 'isrc_code';
  const plans = fieldPlans(COLUMNS[kind], [key]);
  expect(KeyScan.fits(plans, 1, false)).toBe(true);
  return { tc: new CopyTranscoder(plans, nullToken, 1, true, delimiter), ks: new KeyScan(plans, nullToken, 1, delimiter) };
}

describe('the scan key reader reads as the transcoder does', () => {
  for (const kind of ['uuid', 'text'] as const) {
    for (const delimiter of [',', ';', '\t']) {
      it(`${kind} key, delimiter ${JSON.stringify(delimiter)}: 150 generated files, whole and cut inside every record`, () => {
        let records = 0;
        let malformed = 0;
        const cuts: unknown[] = [];
        for (let seed = 1; seed <= 150; seed++) {
          const buf = file(seed * 7 + kind.length, delimiter);
          const { tc, ks } = readers(kind, delimiter, seed % 3 === 0 ? null : '\\N');
          const want = readAll(tc, buf);
          const got = readAll(ks, buf);
          for (let i = 0; i < want.length; i++) if (want[i].key === undefined) delete got[i]?.key;
          expect(got, `seed ${seed}: ${JSON.stringify(buf.toString('utf8'))}`).toEqual(want);
          records += want.filter((w) => w.status === 'read').length;
          malformed += want.filter((w) => w.status === 'malformed').length;
          // cut anywhere inside each record: both ask for more, or both give the same answer
          for (const { at } of want) {
            const end = Math.min(buf.length, (want.find((w) => w.at > at)?.at ?? buf.length) + 2);
            for (let k = at + 1; k < end; k++) {
              const a = tc.record(buf, at, k, false, null, 0);
              const b = ks.record(buf, at, k, false, null, 0);
              const want = a === MORE || a === MALFORMED ? [a] : [OK, tc.next, tc.lines, a === RAGGED ? null : tc.key];
              const got = b === MORE || b === MALFORMED ? [b] : [OK, ks.next, ks.lines, a === RAGGED ? null : ks.key];
              if (JSON.stringify(got) !== JSON.stringify(want)) cuts.push({ seed, bytes: buf.subarray(at, k).toString('utf8'), want, got });
            }
          }
        }
        expect(cuts.slice(0, 3)).toEqual([]);
        // the generator made what the comparison is about
        expect(records).toBeGreaterThan(500);
        expect(malformed).toBeGreaterThan(5);
      });
    }
  }

  it('is used only where it reads enough: one uuid or text key (or none), no dates to check', () => {
    const uuidPlans = fieldPlans(COLUMNS.uuid, ['id']);
    expect(KeyScan.fits(uuidPlans, 1, false)).toBe(true);
    expect(KeyScan.fits(uuidPlans, 1, true)).toBe(false);
    expect(KeyScan.fits(fieldPlans(COLUMNS.uuid, null), 0, false)).toBe(true);
    expect(KeyScan.fits(fieldPlans(COLUMNS.text, ['isrc_code', 'track_title']), 2, false)).toBe(false);
    expect(KeyScan.fits(fieldPlans([col('on', 'boolean')], ['on']), 1, false)).toBe(false);
  });

  it("the tokenizer's skim answers read's statuses", () => {
    for (const text of ['a"b\n', '"a"b\n', '"never closed']) {
      const buf = Buffer.from(text);
      expect([text, new CsvTokenizer().skim(buf, 0, buf.length, true, 0)]).toEqual([text, new CsvTokenizer().read(buf, 0, buf.length, true)]);
      expect(new CsvTokenizer().skim(buf, 0, buf.length, true, 0)).toBe(TOKENS_MALFORMED);
    }
  });

  it("gives a record's cells when asked (a probable repeat is shaped in full)", () => {
    const { ks } = readers('text', ',', '\\N');
    const buf = Buffer.from('title,isrc_code,lyrics\n"a ""b""",QZ1,"x\ny"\n');
    expect(ks.record(buf, 23, buf.length, true, null, 0)).not.toBe(MALFORMED);
    expect(ks.cells(buf)).toEqual(['a "b"', 'QZ1', 'x\ny']);
    expect([ks.key, ks.lines, ks.next]).toEqual(['QZ1', 2, buf.length]);
  });
});

/** Files whose records mostly start with a canonical uuid (some repeated, some not canonical), the rest as file() makes them. */
function keyedFile(seed: number, delimiter: string): Buffer {
  const r = rng(seed);
  const pick = <T,>(xs: T[]) => xs[Math.floor(r() * xs.length)];
  const lines: string[] = ['id,title,lyrics'.replaceAll(',', delimiter)];
  const count = 10 + Math.floor(r() * 30);
  for (let i = 0; i < count; i++) {
    const roll = r();
    if (roll < 0.03) lines.push('');
    const key = roll < 0.75 ? `7b000000-0000-4000-8000-${String(Math.floor(r() * count)).padStart(12, '0')}` : pick(CELLS);
    const width = roll > 0.97 ? 2 : 3;
    const cells = [key, ...Array.from({ length: width - 1 }, () => (r() < 0.02 ? pick(BROKEN) : pick(CELLS)))];
    lines.push(cells.join(delimiter));
  }
  const eol = r() < 0.3 ? '\r\n' : '\n';
  return Buffer.from(lines.join(eol) + (r() < 0.7 ? eol : ''), 'utf8');
}

/**
 * The scan as the pass reads a file with the key reader: blank lines skipped, then `run` (when
 * `bulk`) or `record`, each key noted; the records, the line ends and the probable repeats found.
 */
function scanAll(ks: KeyScan, buf: Buffer, bulk: boolean): { records: number; lines: number; repeats: string[]; bulked: number; end: number } {
  const finder = new DuplicateFinder(1 << 20);
  const repeats: string[] = [];
  const n = buf.length;
  let [p, records, lines, bulked] = [0, 0, 0, 0];
  while (p < n) {
    if (buf[p] === LF || (buf[p] === CR && (p + 1 < n ? buf[p + 1] === LF : true))) {
      p += buf[p] === CR && p + 1 < n ? 2 : 1;
      lines++;
      continue;
    }
    const k = bulk ? ks.run(buf, p, n, finder, 1 + (records % 4)) : 0;
    if (k > 0) {
      [records, lines, bulked, p] = [records + k, lines + ks.lines, bulked + k, ks.next];
      continue;
    }
    if (ks.record(buf, p, n, true, null, 0) === MALFORMED) break;
    const key = ks.notedKey(finder);
    if (key !== null) repeats.push(key);
    [records, lines, p] = [records + 1, lines + ks.lines, ks.next];
  }
  return { records, lines, repeats, bulked, end: p };
}

describe('the scan key reader in bulk (KeyScan.run) reads as record() does', () => {
  for (const delimiter of [',', ';', '\t']) {
    it(`delimiter ${JSON.stringify(delimiter)}: 150 generated files, whole and cut inside every record`, () => {
      let bulked = 0;
      let repeats = 0;
      const cuts: unknown[] = [];
      for (let seed = 1; seed <= 150; seed++) {
        const buf = keyedFile(seed * 11, delimiter);
        const nullToken = seed % 3 === 0 ? null : '\\N';
        const { tc, ks } = readers('uuid', delimiter, nullToken);
        const want = scanAll(ks, buf, false);
        const got = scanAll(ks, buf, true);
        expect({ ...got, bulked: 0 }, `seed ${seed}: ${JSON.stringify(buf.toString('utf8'))}`).toEqual({ ...want, bulked: 0 });
        bulked += got.bulked;
        repeats += want.repeats.length;
        // cut anywhere: a run reads only a record wholly inside the bytes, and as record() reads it
        const fresh = { noteBytes: () => false } as unknown as DuplicateFinder;
        for (const { at, status } of readAll(tc, buf)) {
          if (status !== 'read') continue;
          ks.record(buf, at, buf.length, true, null, 0);
          const whole = [ks.next, ks.lines];
          for (let k = at + 1; k <= buf.length; k++) {
            const read = ks.run(buf, at, k, fresh, 1);
            if (read === 1 && (ks.next > k || JSON.stringify([ks.next, ks.lines]) !== JSON.stringify(whole))) cuts.push({ seed, at, k, whole, got: [ks.next, ks.lines] });
          }
        }
      }
      expect(cuts.slice(0, 3)).toEqual([]);
      // the files made what the comparison is about: records read in bulk, and repeats found both ways
      expect(bulked).toBeGreaterThan(500);
      expect(repeats).toBeGreaterThan(50);
    });
  }

  it("leaves to record() what it cannot read alone: another key, a stray quote, text after a closing quote, the bytes' end", () => {
    const { ks } = readers('uuid', ',', '\\N');
    const finder = new DuplicateFinder(1 << 20);
    const u = '7b000000-0000-4000-8000-000000000001';
    for (const text of [`"${u}",a\n`, `${u.toUpperCase()},a\n`, `${u},a"b\n`, `${u},"a"b\n`, `${u},"a\n`, `${u},a`, `\\N,a\n`, `\n${u},a\n`]) {
      expect([text, ks.run(Buffer.from(text), 0, Buffer.byteLength(text), finder, 10)]).toEqual([text, 0]);
    }
    const v = u.replace('01', '02');
    const two = Buffer.from(`${u},"x\ny",z\r\n${v},"a ""b""",c\n${u},again\n`);
    expect([ks.run(two, 0, two.length, finder, 10), ks.lines, two.toString('utf8', ks.next)]).toEqual([2, 3, `${u},again\n`]);
  });
});
