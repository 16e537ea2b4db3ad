import { mkdtempSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import ExcelJS from 'exceljs';
import { excelNumberText, xlsxReader } from '../../../src/import/readers/xlsx.js';
import { xlsxWriter } from '../../../src/format/xlsx.js';
import { tableByName } from '../../../src/schema/catalog.js';
import type { SourceRecord } from '../../../src/import/types.js';

const dir = mkdtempSync(join(tmpdir(), 'xlsx-'));

async function read(path: string, sheet?: string): Promise<SourceRecord[]> {
  const out: SourceRecord[] = [];
  for await (const r of xlsxReader(path, sheet).records()) out.push(r);
  return out;
}

describe('xlsx reader', () => {
  it('numbers as Excel shows them: no float noise, 12-digit UPCs whole', () => {
    expect(excelNumberText(123456789012)).toBe('123456789012');
    expect(excelNumberText(0.1 + 0.2)).toBe('0.3');
    expect(excelNumberText(1.5)).toBe('1.5');
    expect(excelNumberText(-42)).toBe('-42');
    expect(excelNumberText(0.0000001)).toBe('0.0000001');
  });

  it('reads dates, numeric UPCs, booleans, empty and multi-line cells, formulas, with sheet row numbers', async () => {
    const book = new ExcelJS.Workbook();
    const first = book.addWorksheet('Releases');
    first.addRow(['title', 'upc', 'release_date', 'is_compilation', 'notes']);
    first.addRow(['Blue', 123456789012, new Date(Date.UTC(2024, 3, 3)), true, 'line one\nline two']);
    first.addRow([]); // row 3 empty
    first.addRow(['Red', 98765432109, null, false, null]);
    first.getCell('A5').value = 'Sum';
    first.getCell('B5').value = { formula: '1+1', result: 2 };
    first.getCell('C5').value = new Date(Date.UTC(2024, 0, 2, 10, 30));
    first.getCell('E5').value = { richText: [{ text: 'bold ' }, { text: 'and not' }] };
    first.addRow(['x', 0.1 + 0.2, null, null, null, 'extra']);
    const other = book.addWorksheet('Other');
    other.addRow(['name']);
    other.addRow(['only here']);
    const p = join(dir, 'a.xlsx');
    await book.xlsx.writeFile(p);

    const rows = await read(p);
    expect(rows.map((r) => r.line)).toEqual([2, 4, 5, 6]);
    expect(rows[0].headers).toEqual(['title', 'upc', 'release_date', 'is_compilation', 'notes']);
    expect(rows[0].values).toEqual({ title: 'Blue', upc: '123456789012', release_date: '2024-04-03', is_compilation: 'true', notes: 'line one\nline two' });
    expect(rows[1].values).toEqual({ title: 'Red', upc: '98765432109', release_date: '', is_compilation: 'false', notes: '' });
    expect(rows[2].values).toEqual({ title: 'Sum', upc: '2', release_date: '2024-01-02T10:30:00', is_compilation: '', notes: 'bold and not' });
    expect(rows[2].error).toBeUndefined();
    expect(rows[3].cells?.[1]).toBe('0.3');
    expect(rows[3].error).toBe('expected 5 cells as in the header row, found 6');

    const named = await read(p, 'Other');
    expect(named.map((r) => [r.line, r.values])).toEqual([[2, { name: 'only here' }]]);
    await expect(read(p, 'Nope')).rejects.toThrow(/has no sheet named "Nope": its sheets are "Releases", "Other"/);
  });

  it('a file that is not a workbook is a clear error', async () => {
    const p = join(dir, 'not.xlsx');
    await writeFile(p, 'name\nplain text\n');
    await expect(read(p)).rejects.toThrow(/could not be read as an Excel workbook/);
  });
});

describe('xlsx writer', () => {
  it('writes text columns as text, dates as dates, a bold frozen header, and reads back identically', async () => {
    const table = tableByName('releases')!;
    const columns = ['id', 'release_title', 'upc_code', 'release_date', 'is_compilation', 'created'];
    const chunks: Uint8Array[] = [];
    const w = await xlsxWriter({ write: async (c) => void chunks.push(typeof c === 'string' ? Buffer.from(c) : c) }, { table, columns });
    const rows = [
      { id: '0b7c0c3e-8d7e-4d1e-9f55-0c0f5f1e6a01', release_title: 'Ünïcode "q", x', upc_code: '012345678905', release_date: '2024-04-03', is_compilation: true, created: '2024-01-02T10:30:00.123456+00:00' },
      { id: '0b7c0c3e-8d7e-4d1e-9f55-0c0f5f1e6a02', release_title: 'two\nlines', upc_code: null, release_date: null, is_compilation: false, created: '2024-01-02T10:30:00+00:00' },
    ];
    await w.write(rows);
    await w.end();
    const p = join(dir, 'out.xlsx');
    await writeFile(p, Buffer.concat(chunks));

    const book = new ExcelJS.Workbook();
    await book.xlsx.load(readFileSync(p) as unknown as ArrayBuffer);
    const ws = book.worksheets[0];
    expect(ws.getRow(1).getCell(1).font?.bold).toBe(true);
    expect(ws.views[0]).toMatchObject({ state: 'frozen', ySplit: 1 });
    expect(ws.getCell('C2').value).toBe('012345678905');
    expect(ws.getCell('C2').numFmt).toBe('@');
    expect(ws.getCell('D2').value).toBeInstanceOf(Date);
    expect(ws.getCell('E2').value).toBe(true);

    const back = await read(p);
    expect(back.map((r) => r.values)).toEqual([
      { ...rows[0], is_compilation: 'true' },
      { ...rows[1], upc_code: '\\N', release_date: '', is_compilation: 'false' },
    ]);
  });
});
