import { parse as parseCsv } from 'csv-parse/sync';
import { parse as parseYaml } from 'yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { csvField, tsvField } from '../../src/format/delimited.js';
import { createWriter, FORMATS, type FormatName, type Row } from '../../src/format/index.js';
import { relativeTime } from '../../src/format/relative-time.js';
import { displayWidth, fitWidths, loadWidths, truncate, wrapWords } from '../../src/format/width.js';
import { bufferOutput } from '../../src/io/streams.js';
import { TRICKY } from '../support/tricky.js';

// displayWidth of text other than printable ASCII needs the width library loaded (the writers load it themselves)
beforeAll(loadWidths);


async function render(format: FormatName, rows: Row[], opts: { single?: boolean; tty?: boolean; columns?: number } = {}): Promise<string> {
  const out = bufferOutput({ isTTY: opts.tty, columns: opts.columns });
  const w = await createWriter(format, { out, single: opts.single, now: Date.parse('2025-01-25T12:00:00Z') });
  for (const r of rows) await w.write([r]);
  await w.end();
  return out.text();
}

/** Reads TSV written by tsvField back (the inverse of its escapes). */
function parseTsv(text: string): string[][] {
  const unescape = (f: string) => f.replace(/\\([\\tnr])/g, (_, c: string) => ({ '\\': '\\', t: '\t', n: '\n', r: '\r' })[c] as string);
  return text.replace(/\n$/, '').split('\n').map((line) => line.split('\t').map(unescape));
}

describe('every format keeps tricky text exactly', () => {
  const rows: Row[] = TRICKY.map((name, i) => ({ n: i, name, missing: null, flag: i % 2 === 0, meta: { k: name } }));

  it('json (piped and terminal) parses back to the same rows', async () => {
    expect(JSON.parse(await render('json', rows))).toEqual(rows);
    expect(JSON.parse(await render('json', rows, { tty: true }))).toEqual(rows);
    expect(JSON.parse(await render('json', []))).toEqual([]);
    expect(JSON.parse(await render('json', rows.slice(0, 1), { single: true }))).toEqual(rows[0]);
  });

  it('ndjson has one line per row, each parsing back', async () => {
    const lines = (await render('ndjson', rows)).trimEnd().split('\n');
    expect(lines).toHaveLength(rows.length);
    expect(lines.map((l) => JSON.parse(l))).toEqual(rows);
  });

  it('yaml parses back to the same rows (strings that look like numbers or booleans stay strings)', async () => {
    expect(parseYaml(await render('yaml', rows))).toEqual(rows);
    expect(parseYaml(await render('yaml', rows.slice(0, 1), { single: true }))).toEqual(rows[0]);
    expect(parseYaml(await render('yaml', []))).toEqual([]);
  });

  it('csv parses back with a standard parser; empty text is "" and null is an empty field', async () => {
    const text = await render('csv', rows);
    const parsed = parseCsv(text, { columns: true, relax_quotes: false }) as Record<string, string>[];
    expect(parsed.map((r) => r.name)).toEqual(TRICKY);
    expect(parsed[0].missing).toBe('');
    expect(text).toContain(',"",'); // the empty name
    expect(JSON.parse(parsed[0].meta)).toEqual({ k: TRICKY[0] });
    expect(csvField('')).toBe('""');
    expect(csvField(null)).toBe('');
    expect(csvField('007')).toBe('007');
  });

  it('tsv escapes tabs, newlines and backslashes so each row is one line', async () => {
    const text = await render('tsv', rows);
    const [header, ...body] = parseTsv(text);
    expect(header).toEqual(['n', 'name', 'missing', 'flag', 'meta']);
    expect(body.map((r) => r[1])).toEqual(TRICKY);
    expect(tsvField('a\tb\nc\\d')).toBe('a\\tb\\nc\\\\d');
  });

  it('table off a terminal prints every value whole, line by line', async () => {
    const text = await render('table', rows);
    for (const value of TRICKY.filter(Boolean)) {
      for (const line of value.split(/\r?\n/)) expect(text).toContain(line.trim());
    }
    expect(text.split('\n')[0]).toMatch(/^n\s+name\s+missing\s+flag\s+meta$/);
  });

  it('a single record renders as field/value pairs in a table', async () => {
    const text = await render('table', [{ id: 'x', name: '東京' }], { single: true });
    expect(text).toBe('id    x\nname  東京\n');
  });

  it('lists every format', () => {
    expect([...FORMATS]).toEqual(['table', 'json', 'ndjson', 'csv', 'tsv', 'yaml']);
  });
});

describe('tables on a terminal', () => {
  it('fit the width, cutting long text with … and showing newlines as ⏎', async () => {
    const rows = [{ id: 'a1', title: 'x'.repeat(200), note: 'two\nlines' }];
    const text = await render('table', rows, { tty: true, columns: 60 });
    for (const line of text.trimEnd().split('\n')) expect(displayWidth(line)).toBeLessThanOrEqual(60);
    expect(text).toContain('…');
    expect(text).toContain('two⏎lines');
  });

  it('drop trailing columns that cannot fit and say so', async () => {
    const row = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`field_${i}`, `value ${i}`]));
    const out = bufferOutput({ isTTY: true, columns: 50 });
    const notices: string[] = [];
    const w = await createWriter('table', { out, notice: (m) => notices.push(m) });
    await w.write([row]);
    await w.end();
    expect(out.text().split('\n')[0]).toMatch(/^field_0/);
    expect(notices[0]).toMatch(/more fields not shown \(.*field_19\); choose with --select/);
  });

  it('show timestamps as relative times', async () => {
    const out = bufferOutput({ isTTY: true, columns: 100 });
    const w = await createWriter('table', { out, columnTypes: { created: 'timestamp with time zone' }, now: Date.parse('2025-01-25T12:00:00Z') });
    await w.write([{ created: '2025-01-25T11:55:00+00:00' }]);
    await w.end();
    expect(out.text()).toContain('5 minutes ago');
  });
});

describe('width helpers', () => {
  it('measure wide and combining characters', () => {
    expect(displayWidth('東京')).toBe(4);
    expect(displayWidth('e\u0301')).toBe(1);
    expect(displayWidth('abc')).toBe(3);
  });

  it('truncate to a width with an ellipsis, never splitting a wide character', () => {
    expect(truncate('Blue Note Records', 8)).toBe('Blue No…');
    expect(truncate('short', 8)).toBe('short');
    expect(displayWidth(truncate('東京東京東京', 5))).toBeLessThanOrEqual(5);
  });

  it('fit column widths into the room there is', () => {
    expect(fitWidths([10, 40, 30], 50, 2)).toEqual([10, 18, 18]);
    expect(fitWidths([5, 5], 80, 2)).toEqual([5, 5]);
    expect(fitWidths(Array(20).fill(10), 50, 2)).toEqual([10, 10, 10, 10]);
    // An id is never cut; the other columns share what is left.
    expect(fitWidths([36, 100, 100], 80, 2, [true])).toEqual([36, 20, 20]);
    expect(fitWidths([36, 100, 100], 50, 2, [true])).toEqual([36]);
  });

  it('say relative times the way people do', () => {
    const now = Date.parse('2025-01-25T12:00:00Z');
    expect(relativeTime('2025-01-25T11:59:50Z', now)).toBe('just now');
    expect(relativeTime('2025-01-24T12:00:00Z', now)).toBe('1 day ago');
    expect(relativeTime('2025-01-27T12:00:00Z', now)).toBe('in 2 days');
    expect(relativeTime('not a date', now)).toBe('not a date');
  });
});

describe('wrapWords', () => {
  it('fills lines up to the width and gives a longer word a line of its own', () => {
    expect(wrapWords(['one', 'two', 'three'], 7)).toEqual(['one two', 'three']);
    expect(wrapWords(['a', 'muchtoolongword', 'b'], 5)).toEqual(['a', 'muchtoolongword', 'b']);
    expect(wrapWords([], 10)).toEqual([]);
  });
});

describe('tables on a terminal tell null from empty text (issue 17)', () => {
  it('shows ∅ for null and leaves an empty string blank', async () => {
    const text = await render('table', [{ name: 'A', city: null, country: '' }], { tty: true, columns: 80 });
    const [head, row] = text.split('\n');
    expect(head).toMatch(/^name\s+city\s+country$/);
    expect(row).toMatch(/^A\s+∅\s*$/);
  });
});

describe('tables stream (issue 27)', () => {
  it('print the header and the first rows before the input ends, sized by those rows', async () => {
    const out = bufferOutput();
    const w = await createWriter('table', { out, firstRows: 2 });
    await w.write([{ id: 1, name: 'Aa' }]);
    expect(out.text()).toBe('');
    await w.write([{ id: 2, name: 'Bbbb' }]);
    // sized by the first two rows, written at once
    expect(out.text()).toBe('id  name\n1   Aa\n2   Bbbb\n');
    await w.write([{ id: 3, name: 'Cc' }]);
    expect(out.text().split('\n')[3]).toBe('3   Cc');
    await w.end();
  });

  it('lay out 300,000 rows without a stack overflow, every row on its line', async () => {
    const out = bufferOutput();
    const w = await createWriter('table', { out, columns: ['id', 'track_title'] });
    for (let i = 0; i < 300_000; i++) await w.write([{ id: i, track_title: `T${i}` }]);
    await w.end();
    const lines = out.text().trimEnd().split('\n');
    expect(lines).toHaveLength(300_001);
    expect(lines[300_000]).toBe('299999  T299999');
  });

  it('off a terminal, a value wider than the first rows pushes its line right but is printed whole', async () => {
    const out = bufferOutput();
    const w = await createWriter('table', { out, firstRows: 1 });
    await w.write([{ a: 'x', b: 'y' }]);
    await w.write([{ a: 'a much longer value', b: 'z' }]);
    await w.end();
    expect(out.text()).toBe('a  b\nx  y\na much longer value  z\n');
  });
});
