// Smoke test of the bench's data generator (bench/lib/generate.js): deterministic, valid CSV with
// the tricky text the bench relies on. The bench itself is never part of `npm test`.
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
// @ts-expect-error plain ESM JavaScript without type declarations
import * as gen from '../../bench/lib/generate.js';
// @ts-expect-error plain ESM JavaScript without type declarations
import { parseOptions } from '../../bench/lib/options.js';

async function tracksCsv(rows: number): Promise<string> {
  let out = '';
  await gen.writeTracks(rows, async (s: string) => {
    out += s;
  });
  return out;
}

describe('bench data generator', () => {
  it('is deterministic, and a smaller file is a prefix of a larger one', async () => {
    const a = await tracksCsv(300);
    const b = await tracksCsv(300);
    const c = await tracksCsv(600);
    expect(a).toBe(b);
    expect(c.startsWith(a)).toBe(true);
  });

  it('writes parseable CSV with unique ids and ISRCs, leading zeros, non-Latin text and JSON arrays', async () => {
    const records = parse(await tracksCsv(2000), { columns: true }) as Record<string, string>[];
    expect(records).toHaveLength(2000);
    expect(Object.keys(records[0])).toEqual(gen.TRACK_COLUMNS.map(([c]: [string]) => c));
    expect(new Set(records.map((r) => r.id)).size).toBe(2000);
    expect(new Set(records.map((r) => r.isrc_code)).size).toBe(2000);
    expect(records.length).toBeGreaterThan(0);
    expect(records.every((r) => /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(r.id))).toBe(true);
    expect(records.length).toBeGreaterThan(0);
    expect(records.every((r) => /^[A-Z]{2}[0-9A-Z]{3}\d{7}$/.test(r.isrc_code))).toBe(true);
    expect(records[5].isrc_code).toBe(gen.isrcFor(5));
    expect(records.some((r) => /^[A-Z]{2}0/.test(r.isrc_code))).toBe(true);
    expect(records.some((r) => /[^\u0000-\u024f]/.test(r.track_title))).toBe(true);
    expect(records.some((r) => r.track_title.includes('"') || r.track_title.includes(','))).toBe(true);
    expect(records.filter((r) => /love/i.test(r.track_title)).length).toBeGreaterThan(50);
    for (const r of records) {
      const artists = JSON.parse(r.primary_artists);
      expect(Array.isArray(artists) && artists.length >= 1 && typeof artists[0].name === 'string').toBe(true);
      expect(r.recording_year).toMatch(/^(19|20)\d\d$/);
    }
  });

  it('spreads releases over the labels so one label has many pages', () => {
    const releases = parse(gen.releasesCsv(3000), { columns: true }) as Record<string, string>[];
    const label0 = releases.filter((r) => r.label_id === gen.labelId(0));
    expect(label0.length).toBe(100);
    const labels = parse(gen.labelsCsv(), { columns: true }) as Record<string, string>[];
    expect(labels.map((l) => l.id)).toContain(gen.labelId(0));
  });

  it('parses bench options, with --quick as a small single run', () => {
    expect(parseOptions(['--quick'])).toMatchObject({ rows: [10000], runs: 1, quick: true });
    expect(parseOptions(['--rows', '1M,100k', '--runs', '2', '--only', 'import,export'])).toMatchObject({ rows: [100000, 1000000], runs: 2, only: ['import', 'export'] });
    expect(() => parseOptions(['--only', 'nope'])).toThrow(/unknown scenario/);
  });
});
