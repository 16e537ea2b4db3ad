import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type XlsxPhase, xlsxReader } from '../../../src/import/readers/xlsx.js';
import type { SourceRecord } from '../../../src/import/types.js';
import { MAIN_NS, part, sheetXml, textRow, writeBook, type BookSpec } from '../../support/xlsx-build.js';

// Issue 37 item 1: workbooks read with a streaming XML parser (saxes) instead of regular
// expressions. Each workbook here is written by hand, part by part, so the XML is exactly what
// the case is about: prefixed markup, quotes, entities, rich and inline strings, empty values.

const dir = mkdtempSync(join(tmpdir(), 'xlsx-xml-'));
let n = 0;

function book(spec: BookSpec): string {
  const p = join(dir, `b${n++}.xlsx`);
  writeBook(p, spec);
  return p;
}

async function read(path: string, o: { sheet?: string; headerRow?: number; signal?: AbortSignal; onPhase?: (p: XlsxPhase) => void } = {}): Promise<SourceRecord[]> {
  const out: SourceRecord[] = [];
  for await (const r of xlsxReader(path, o.sheet, 'in.xlsx', o).records()) out.push(r);
  return out;
}

const SST = (items: string[], prefix = '') => {
  const x = prefix ? `${prefix}:` : '';
  const ns = prefix ? `xmlns:${prefix}="${MAIN_NS}"` : `xmlns="${MAIN_NS}"`;
  return `<?xml version="1.0" encoding="UTF-8"?><${x}sst ${ns} count="${items.length}" uniqueCount="${items.length}">${items.map((i) => `<${x}si>${i}</${x}si>`).join('')}</${x}sst>`;
};

describe('xlsx reader: the XML as writers write it', () => {
  it('reads prefixed markup (<x:row>, as the Open XML SDK writes), both quote styles, entities, rich and inline strings, phonetic hints left out', async () => {
    const strings = SST(
      [
        "<x:t>release_title</x:t>",
        "<x:r><x:t>Bold </x:t></x:r><x:r><x:rPr><x:b/></x:rPr><x:t xml:space='preserve'>&amp; &lt;plain&gt; &quot;q&quot; &apos;a&apos;</x:t></x:r><x:rPh sb='0' eb='1'><x:t>ふりがな</x:t></x:rPh>",
        '<x:t>&#x1F680; caf&#233; line_x000D_\nbreak _x005F_x0041_</x:t>',
      ],
      'x',
    );
    const rows = [
      "<x:row r='1'><x:c r='A1' t='s'><x:v>0</x:v></x:c><x:c r=\"B1\" t=\"inlineStr\"><x:is><x:t>upc_code</x:t></x:is></x:c><x:c r='C1' t='inlineStr'><x:is><x:t>release_date</x:t></x:is></x:c><x:c r='D1' t='inlineStr'><x:is><x:r><x:t>is_</x:t></x:r><x:r><x:t>compilation</x:t></x:r></x:is></x:c></x:row>",
      "<x:row r='2'><x:c r='A2' t='s'><x:v>1</x:v></x:c><x:c r='B2'><x:v>123456789012</x:v></x:c><x:c r='C2' s='1'><x:v>45385</x:v></x:c><x:c r='D2' t='b'><x:v>1</x:v></x:c></x:row>",
      "<x:row r='3'><x:c r='A3' t='s'><x:v>2</x:v></x:c><x:c r='B3'/><x:c r='C3' s='1'><x:v/></x:c><x:c r='D3' t='s'></x:c></x:row>",
    ];
    const p = book({ prefix: 'x', sharedStrings: strings, sheets: [{ name: 'Releases', xml: sheetXml(rows.join(''), { prefix: 'x' }) }] });
    const recs = await read(p);
    expect(recs[0].headers).toEqual(['release_title', 'upc_code', 'release_date', 'is_compilation']);
    expect(recs.map((r) => [r.line, r.values])).toEqual([
      [2, { release_title: `Bold & <plain> "q" 'a'`, upc_code: '123456789012', release_date: '2024-04-03', is_compilation: 'true' }],
      [3, { release_title: '🚀 café line\r\nbreak _x0041_', upc_code: '', release_date: '', is_compilation: '' }],
    ]);
  });

  it('a formula without a saved result (openpyxl writes <v></v>) rejects its row naming the cell, never reads as 0; a formula with one gives it; an error value names its cell', async () => {
    const rows = [
      textRow(1, ['release_title', 'catalog_number', 'upc_code']),
      '<row r="2"><c r="A2" t="inlineStr"><is><t>Saved</t></is></c><c r="C2"><f>1+1</f><v>2</v></c></row>',
      '<row r="7"><c r="A7" t="inlineStr"><is><t>Unsaved</t></is></c><c r="C7"><f>SUM(C2:C6)</f><v></v></c></row>',
      '<row r="8"><c r="A8" t="inlineStr"><is><t>No value</t></is></c><c r="B8" t="str"><f>A8&amp;"x"</f></c></row>',
      '<row r="9"><c r="A9" t="inlineStr"><is><t>Empty text</t></is></c><c r="B9" t="str"><f>""</f><v></v></c></row>',
      '<row r="10"><c r="A10" t="inlineStr"><is><t>Error</t></is></c><c r="C10" t="e"><f>1/0</f><v>#DIV/0!</v></c></row>',
    ];
    const recs = await read(book({ sheets: [{ name: 'S', xml: sheetXml(rows.join('')) }] }));
    expect(recs.map((r) => [r.line, r.cells, r.error])).toEqual([
      [2, ['Saved', '', '2'], undefined],
      [7, ['Unsaved', '', ''], expect.stringMatching(/^cell C7 holds a formula \(=SUM\(C2:C6\)\) with no saved result/)],
      [8, ['No value', '', ''], expect.stringMatching(/^cell B8 holds a formula \(=A8&"x"\) with no saved result/)],
      [9, ['Empty text', '', ''], undefined],
      [10, ['Error', '', ''], 'cell C10 holds the Excel error #DIV/0!'],
    ]);
  });

  it('a date-time cell: its date when the time is midnight, else a date column rejects it naming the time (date styles, t="d", serial numbers)', async () => {
    const rows = [
      textRow(1, ['release_title', 'release_date']),
      '<row r="2"><c r="A2" t="inlineStr"><is><t>midnight</t></is></c><c r="B2" s="2"><v>45385</v></c></row>',
      '<row r="3"><c r="A3" t="inlineStr"><is><t>half past ten</t></is></c><c r="B3" s="2"><v>45385.4375</v></c></row>',
      '<row r="4"><c r="A4" t="inlineStr"><is><t>iso midnight</t></is></c><c r="B4" t="d"><v>2024-04-03T00:00:00Z</v></c></row>',
      '<row r="5"><c r="A5" t="inlineStr"><is><t>iso time</t></is></c><c r="B5" t="d"><v>2024-04-03T18:05:09</v></c></row>',
      '<row r="6"><c r="A6" t="inlineStr"><is><t>plain serial</t></is></c><c r="B6"><v>45385.5</v></c></row>',
      '<row r="7"><c r="A7" t="inlineStr"><is><t>plain date serial</t></is></c><c r="B7"><v>45385</v></c></row>',
    ];
    const recs = await read(book({ sheets: [{ name: 'S', xml: sheetXml(rows.join('')) }] }));
    expect(recs.map((r) => r.cells![1])).toEqual(['2024-04-03', '2024-04-03T10:30:00', '2024-04-03', '2024-04-03T18:05:09', '45385.5', '45385']);
    expect(recs.map((r) => r.dateOf!(1))).toEqual([
      undefined,
      { error: expect.stringMatching(/^cell B3 holds 2024-04-03 10:30:00, a date with the time of day 10:30:00/) },
      undefined,
      { error: expect.stringMatching(/^cell B5 holds 2024-04-03 18:05:09, a date with the time of day 18:05:09/) },
      { error: expect.stringMatching(/^cell B6 holds 2024-04-03 12:00:00/) },
      '2024-04-03',
    ]);
  });
});

describe('xlsx reader: workbooks as people make them', () => {
  const titled = [textRow(1, ['Catalog export, March']), textRow(2, ['made by the label office']), textRow(3, ['release_title', 'catalog_number']), textRow(4, ['Blue', 'CAT-1']), textRow(5, ['Red', 'CAT-2'])];

  it('--header-row names the header; rows above it are skipped; without it, a title row gets a hint naming the header row', async () => {
    const p = book({ sheets: [{ name: 'S', xml: sheetXml(titled.join('')) }] });
    const recs = await read(p, { headerRow: 3 });
    expect(recs.map((r) => [r.line, r.values])).toEqual([
      [4, { release_title: 'Blue', catalog_number: 'CAT-1' }],
      [5, { release_title: 'Red', catalog_number: 'CAT-2' }],
    ]);
    expect(recs[0].advice).toBeUndefined();
    const guessed = await read(p);
    expect(guessed[0].headers).toEqual(['Catalog export, March']);
    expect(guessed[0].advice).toBe('Row 1 looks like a title; the header seems to be row 3: pass --header-row 3.');
    await expect(read(p, { headerRow: 9 })).rejects.toThrow('in.xlsx: row 9 of the sheet is empty, and --header-row 9 names it as the header');
    // a --header-row that names the note under the title gets the same hint
    expect((await read(p, { headerRow: 2 }))[0].advice).toBe('Row 2 looks like a title; the header seems to be row 3: pass --header-row 3.');
  });

  it('an ordinary header gets no hint; the first sheet of several gets the list of sheets and --sheet', async () => {
    const plain = book({ sheets: [{ name: 'S', xml: sheetXml(titled.slice(2).join('')) }] });
    expect((await read(plain))[0].advice).toBeUndefined();
    const notes = sheetXml([textRow(1, ['Read me first']), textRow(2, ['This workbook lists our releases.'])].join(''));
    const two = book({ sheets: [{ name: 'Read me', xml: notes }, { name: 'Releases', xml: sheetXml(titled.slice(2).join('')) }] });
    const first = await read(two);
    expect(first[0].advice).toBe('Its first sheet, "Read me", was read; the workbook\'s sheets are "Read me", "Releases": name the one to import with --sheet (e.g. --sheet "Releases").');
    expect((await read(two, { sheet: 'Releases' }))[0].advice).toBeUndefined();
  });

  it('cells merged down a column are filled; merged across columns in the data, or joining the header to the data, are refused naming them', async () => {
    const rows = [textRow(1, ['label', 'release_title']), textRow(2, ['Chinook', 'Blue']), textRow(3, ['', 'Red']), textRow(4, ['', 'Green']), textRow(5, ['Other', 'Solo'])];
    const merged = (refs: string[]) => `<mergeCells count="${refs.length}">${refs.map((r) => `<mergeCell ref="${r}"/>`).join('')}</mergeCells>`;
    const filled = await read(book({ sheets: [{ name: 'S', xml: sheetXml(rows.join(''), { after: merged(['A2:A4']) }) }] }));
    expect(filled.map((r) => r.cells)).toEqual([
      ['Chinook', 'Blue'],
      ['Chinook', 'Red'],
      ['Chinook', 'Green'],
      ['Other', 'Solo'],
    ]);
    await expect(read(book({ sheets: [{ name: 'S', xml: sheetXml(rows.join(''), { after: merged(['A2:A4', 'A5:B5']) }) }] }))).rejects.toThrow(
      'in.xlsx: the merged cells A5:B5 (sheet "S") span several columns of data, so which field holds the value is unclear',
    );
    await expect(read(book({ sheets: [{ name: 'S', xml: sheetXml(rows.join(''), { after: merged(['B1:B2']) }) }] }))).rejects.toThrow('in.xlsx: the merged cells B1:B2 (sheet "S") join the header row (row 1) to the rows below');
    const header = [textRow(1, ['label', '', 'release_title']), textRow(2, ['Chinook', 'x', 'Blue'])];
    await expect(read(book({ sheets: [{ name: 'S', xml: sheetXml(header.join(''), { after: merged(['A1:B1']) }) }] }))).rejects.toThrow(
      'in.xlsx: the header row (row 1) has an empty cell in column 2 (B1 is part of the merged cells A1:B1)',
    );
    await expect(read(book({ sheets: [{ name: 'S', xml: sheetXml(rows.join(''), { after: merged(['A2:A4', 'A3:A5']) }) }] }))).rejects.toThrow('in.xlsx: the merged cells A3:A5 (sheet "S") overlap other merged cells');
    // merged cells right of the header hold no field: left alone (a row with a cell there is too long anyway)
    expect((await read(book({ sheets: [{ name: 'S', xml: sheetXml(rows.join(''), { after: merged(['C2:D3']) }) }] }))).map((r) => r.cells)).toHaveLength(4);
    // a title merged across the top is no business of the data
    const title = [textRow(1, ['Catalog']), textRow(2, ['label', 'release_title']), textRow(3, ['Chinook', 'Blue'])];
    expect((await read(book({ sheets: [{ name: 'S', xml: sheetXml(title.join(''), { after: merged(['A1:B1']) }) }] }), { headerRow: 2 })).map((r) => r.cells)).toEqual([['Chinook', 'Blue']]);
  });
});

describe('xlsx reader: malformed parts exit 2 naming the part', () => {
  const header = textRow(1, ['release_title']);
  const cases: Array<[string, BookSpec, RegExp]> = [
    ['an unclosed element', { sheets: [{ name: 'S', xml: sheetXml(header).replace('</sheetData>', '') }] }, /xl\/worksheets\/sheet1\.xml, line \d+, column \d+: it is not well-formed XML: /],
    ['a cell inside a cell (150,000 unclosed <c>)', { sheets: [{ name: 'S', xml: sheetXml(`${header}<row r="2">${'<c>'.repeat(150_000)}</row>`) }] }, /xl\/worksheets\/sheet1\.xml, line 2, column \d+: a cell inside cell A2/],
    ['an undefined entity', { sheets: [{ name: 'S', xml: sheetXml(textRow(1, ['a']).replace('>a<', '>&nbsp;<')) }] }, /xl\/worksheets\/sheet1\.xml, line \d+, column \d+: it is not well-formed XML: undefined entity/],
    ['a shared string the table lacks', { sharedStrings: SST(['<t>a</t>']), sheets: [{ name: 'S', xml: sheetXml('<row r="1"><c r="A1" t="s"><v>7</v></c></row>') }] }, /cell A1 refers to shared string 7, which the workbook's table \(1 strings\) does not have/],
    ['text where a number belongs', { sheets: [{ name: 'S', xml: sheetXml(`${header}<row r="2"><c r="A2"><v>12abc</v></c></row>`) }] }, /cell A2 holds "12abc" where a number belongs/],
    ['a column past XFD', { sheets: [{ name: 'S', xml: sheetXml(`${header}<row r="2"><c r="XFE2"><v>1</v></c></row>`) }] }, /the cell XFE2 is past Excel's last column/],
    ['a malformed workbook part', { sheets: [{ name: 'S', xml: sheetXml(header) }], extra: [part('xl/workbook.xml', '<workbook><sheets><sheet name="S" r:id="rId1"></sheets></workbook>')] }, /xl\/workbook\.xml, line 1, column \d+: it is not well-formed XML/],
    ['a styles part that is not UTF-8', { sheets: [{ name: 'S', xml: sheetXml(header) }], extra: [part('xl/styles.xml', Buffer.from(`<styleSheet xmlns="${MAIN_NS}"><numFmts>\xff</numFmts></styleSheet>`, 'latin1'))] }, /xl\/styles\.xml, line \d+, column \d+: it is not UTF-8 text/],
  ];
  for (const [what, spec, message] of cases) {
    it(what, async () => {
      const err = await read(book(spec)).then(
        () => null,
        (e: Error & { kind?: string }) => e,
      );
      expect(err?.kind).toBe('usage');
      expect(err?.message).toMatch(/^in\.xlsx could not be read as an Excel workbook \(\.xlsx\): /);
      expect(err?.message).toMatch(message);
    });
  }

  it("a cell far to the right (XFD) is one cell, not 16,384: the row is too long, its cells are the header's and that one", async () => {
    const recs = await read(book({ sheets: [{ name: 'S', xml: sheetXml(`${textRow(1, ['a', 'b'])}<row r="2"><c r="A2"><v>1</v></c><c r="XFD2" t="inlineStr"><is><t>far</t></is></c></row>`) }] }));
    expect(recs.map((r) => [r.cells, r.error])).toEqual([[['1', '', 'far'], 'expected 2 cells as in the header row, found 16384']]);
  });

  it('a styles part listing more cell formats than Excel allows is refused, not held', async () => {
    const styles = `<styleSheet xmlns="${MAIN_NS}"><cellXfs>${'<xf numFmtId="14"/>'.repeat(70_000)}</cellXfs></styleSheet>`;
    await expect(read(book({ sheets: [{ name: 'S', xml: sheetXml(header) }], styles }))).rejects.toThrow('could not be read as an Excel workbook (.xlsx): xl/styles.xml lists more than 65,536 cell formats');
  });

  it('a file that is a zip of nothing useful, or cut short, is named as such', async () => {
    const cut = join(dir, 'cut.xlsx');
    const whole = book({ sheets: [{ name: 'S', xml: sheetXml(header) }] });
    const bytes = (await import('node:fs')).readFileSync(whole);
    writeFileSync(cut, bytes.subarray(0, bytes.length - 30));
    await expect(read(cut)).rejects.toThrow(/could not be read as an Excel workbook \(\.xlsx\): it is not a zip archive|damaged/);
  });
});

describe('xlsx reader: a stop ends the records in every phase', () => {
  it.each(['directory', 'workbook', 'bounds', 'styles', 'strings', 'sheet'] as XlsxPhase[])('stopped as the %s phase begins: an AbortError, no record', async (phase) => {
    const rows = [textRow(1, ['release_title']), ...Array.from({ length: 50 }, (_, i) => textRow(i + 2, [`t${i}`]))];
    const p = book({ sharedStrings: SST(['<t>x</t>']), sheets: [{ name: 'S', xml: sheetXml(rows.join('')) }] });
    const stop = new AbortController();
    const seen: XlsxPhase[] = [];
    const recs: SourceRecord[] = [];
    const onPhase = (at: XlsxPhase) => {
      seen.push(at);
      if (at === phase) stop.abort();
    };
    await expect(
      (async () => {
        for await (const r of xlsxReader(p, undefined, 'in.xlsx', { signal: stop.signal, onPhase }).records()) recs.push(r);
      })(),
    ).rejects.toMatchObject({ name: 'AbortError' });
    expect(recs).toEqual([]);
    expect(seen.at(-1)).toBe(phase);
    expect(await read(p)).toHaveLength(50); // the same file, not stopped
  });

  it('stopped after its first records, a read just ends (the pass stops at its next record)', async () => {
    const rows = [textRow(1, ['release_title']), ...Array.from({ length: 20_000 }, (_, i) => textRow(i + 2, [`title ${i}`]))];
    const p = book({ sheets: [{ name: 'S', xml: sheetXml(rows.join('')) }] });
    const stop = new AbortController();
    const recs: SourceRecord[] = [];
    for await (const r of xlsxReader(p, undefined, 'in.xlsx', { signal: stop.signal }).records()) {
      recs.push(r);
      if (recs.length === 10) stop.abort();
    }
    expect(recs.length).toBeGreaterThanOrEqual(10);
    expect(recs.length).toBeLessThan(20_000);
  });

  it("the scan pass's workbook is handed to the load pass once (not read again), and read again when the file changed", async () => {
    const p = book({ sheets: [{ name: 'S', xml: sheetXml(textRow(1, ['release_title']) + textRow(2, ['Blue'])) }] });
    const phases = async () => {
      const seen: XlsxPhase[] = [];
      await read(p, { onPhase: (at) => seen.push(at) });
      return seen;
    };
    expect(await phases()).toEqual(['directory', 'workbook', 'bounds', 'styles', 'strings', 'sheet']);
    expect(await phases()).toEqual(['sheet']);
    expect(await phases()).toEqual(['directory', 'workbook', 'bounds', 'styles', 'strings', 'sheet']);
    writeBook(p, { sheets: [{ name: 'S', xml: sheetXml(textRow(1, ['release_title']) + textRow(2, ['Green']) + textRow(3, ['Red'])) }] });
    expect((await read(p)).map((r) => r.cells)).toEqual([['Green'], ['Red']]);
  });
});
