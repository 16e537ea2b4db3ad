import { inflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { csvHeader, csvRows } from '../../src/format/csv-dialect.js';
import { csvColumn } from '../../src/export/writers.js';
import { xlsxWriter } from '../../src/format/xlsx.js';
import { CsvTokenizer, TOKENS_MORE, TOKENS_OK } from '../../src/format/csv-tokens.js';
import { xlsxCsvWriter } from '../../src/format/xlsx-csv.js';
import type { TableDef } from '../../src/schema/catalog.js';

const table: TableDef = {
  name: 'things',
  singular: 'thing',
  primaryKey: ['id'],
  columns: [
    { name: 'id', type: 'uuid', nullable: false, primaryKey: true },
    { name: 'title', type: 'text', nullable: true, default: "''::text" },
    { name: 'note', type: 'text', nullable: true },
    { name: 'n', type: 'integer', nullable: true },
    { name: 'price', type: 'numeric', nullable: true },
    { name: 'day', type: 'date', nullable: true },
    { name: 'ok', type: 'boolean', nullable: true, default: 'false' },
  ] as TableDef['columns'],
};
const columns = table.columns.map((c) => c.name);

const texts = ['plain', '', null, ' edge', 'edge ', 'tab\tin', 'line\nbreak', 'a "quote", comma', '<&>"', 'Björn Müller', 'スタジオ 2, 東京', '_x0041_', 'x_y', '\u00a0nbsp', 'ends\u3000', 'ctl\u0001', '\\N', 'ﾃｽﾄ', 'end\uFEFF'];
const rows = texts.map((t, i) => ({
  id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
  title: t,
  note: texts[(i + 3) % texts.length],
  n: i % 4 === 0 ? null : i * 7 - 20,
  price: i % 3 === 0 ? null : i + 0.25,
  day: i % 5 === 0 ? null : i % 5 === 1 ? '1900-01-15' : `20${String(10 + i).padStart(2, '0')}-0${1 + (i % 9)}-1${i % 10}`,
  ok: i % 3 === 0 ? null : i % 3 === 1,
}));

/** The text of one entry of a zip written by src/format/zip.ts (through its central directory). */
function entry(zip: Buffer, name: string): string {
  const dirStart = zip.readUInt32LE(zip.length - 22 + 16);
  for (let at = dirStart; zip.readUInt32LE(at) === 0x02014b50; ) {
    const size = zip.readUInt32LE(at + 20);
    const nameLength = zip.readUInt16LE(at + 28);
    const offset = zip.readUInt32LE(at + 42);
    if (zip.toString('utf8', at + 46, at + 46 + nameLength) === name) {
      const data = offset + 30 + zip.readUInt16LE(offset + 26) + zip.readUInt16LE(offset + 28);
      return inflateRawSync(zip.subarray(data, data + size)).toString('utf8');
    }
    at += 46 + nameLength;
  }
  throw new Error(`no ${name}`);
}

function collector() {
  const chunks: Buffer[] = [];
  return { out: { write: async (c: string | Uint8Array) => void chunks.push(Buffer.from(c)) }, bytes: () => Buffer.concat(chunks) };
}

async function fromCsv(csv: Buffer, chunk: number, nullToken?: string): Promise<string> {
  const c = collector();
  const w = await xlsxCsvWriter(c.out, { table, columns, nullToken });
  for (let i = 0; i < csv.length; i += chunk) await w.write(csv.subarray(i, i + chunk));
  await w.end();
  return entry(c.bytes(), 'xl/worksheets/sheet1.xml');
}

async function fromJson(nullToken?: string): Promise<string> {
  const c = collector();
  const w = await xlsxWriter(c.out, { table, columns, nullToken });
  await w.write(rows.slice(0, 5));
  await w.write(rows.slice(5));
  await w.end();
  return entry(c.bytes(), 'xl/worksheets/sheet1.xml');
}

function csvOf(nullToken?: string): Buffer {
  const byName = new Map(table.columns.map((c) => [c.name, c]));
  const lines = csvRows(columns.map((n) => csvColumn(n, byName.get(n))), nullToken);
  return Buffer.from(csvHeader(columns) + lines(rows));
}

describe('xlsxCsvWriter: an xlsx sheet from the CSV export bytes', () => {
  it('writes the same sheet as xlsxWriter from the same rows as JSON, whatever the chunks', async () => {
    const expected = await fromJson();
    expect(expected).toContain('<v>1</v>'); // booleans, numbers and dates are there to compare
    expect(expected).toContain('s="2"><v>');
    for (const chunk of [1, 7, 64, 1 << 20]) expect(await fromCsv(csvOf(), chunk)).toBe(expected);
  });

  it('with --null, the token as a text cell; with --null "", an empty text cell', async () => {
    expect(await fromCsv(csvOf('NULL'), 13, 'NULL')).toBe(await fromJson('NULL'));
    expect(await fromCsv(csvOf(''), 13, '')).toBe(await fromJson(''));
  });

  it('stops at a row cut off at the end', async () => {
    const c = collector();
    const w = await xlsxCsvWriter(c.out, { table, columns });
    await w.write(Buffer.from(`${csvHeader(columns)}x,"open`));
    await expect(w.end()).rejects.toThrow(/ended inside a row/);
  });

  it('its fields are the shared tokenizer\'s: the end of quoted and bare fields, and more needed for a cut one (was csvFieldEnd)', () => {
    const b = Buffer.from('"a,""b""",c\n');
    const t = new CsvTokenizer();
    expect(t.read(b, 0, b.length, false)).toBe(TOKENS_OK);
    expect([t.ends[0], t.starts[1], t.ends[1]]).toEqual([9, 10, 11]);
    expect(t.read(b, 0, 5, false)).toBe(TOKENS_MORE);
    expect(t.read(b, 0, 11, false)).toBe(TOKENS_MORE);
  });
});
