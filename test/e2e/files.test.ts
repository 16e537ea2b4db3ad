import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import iconv from 'iconv-lite';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/stores.js';
import { catalog, ensureBuilt, startServe, type Serve } from './support.js';

/**
 * Files as people have them (issue 16): encodings, delimiters, date forms and Excel workbooks,
 * each file built here and imported through bin/catalog against a real `catalog serve`.
 */
const uuid = (prefix: string, n: number) => `${prefix}-0000-4000-8000-${String(n).padStart(12, '0')}`;
const between = (prefix: string) => ['--where', `id>=${prefix}-0000-0000-0000-000000000000`, '--where', `id<=${prefix}-ffff-ffff-ffff-ffffffffffff`];

describe('import of files as people have them (bin/catalog against catalog serve)', () => {
  let serve: Serve;
  let dir: string;
  const run = (args: string[]) => catalog(['--url', serve.url, ...args]);
  /** The rows stored under a uuid prefix, as NDJSON objects, ordered by id. */
  const stored = async (table: string, prefix: string, select: string): Promise<Record<string, unknown>[]> => {
    const out = join(dir, `${prefix}.ndjson`);
    const r = await run([table, 'export', out, '--select', select, '--order', 'id', ...between(prefix)]);
    expect(r.stderr).toMatch(/exported/);
    const text = readFileSync(out, 'utf8').trim();
    return text ? text.split('\n').map((l) => JSON.parse(l)) : [];
  };

  beforeAll(async () => {
    ensureBuilt();
    dir = tempDir('e2e-files-');
    serve = await startServe(['--data', join(dir, 'data')]);
  });
  afterAll(async () => {
    await serve?.stop();
  });

  const ARTISTS_1252 = (p: string) =>
    iconv.encode(`id,stage_name,city\r\n${uuid(p, 1)},Anna,Oslo\r\n${uuid(p, 2)},Björn,Malmö\r\n${uuid(p, 3)},“Zoë” – €,Zürich\r\n`, 'windows-1252');

  it('Windows-1252 without --encoding: one error naming line and byte and the flag, nothing imported, dry run the same', async () => {
    const input = join(dir, 'w1252.csv');
    writeFileSync(input, ARTISTS_1252('a1252000'));
    const byte = `id,stage_name,city\r\n${uuid('a1252000', 1)},Anna,Oslo\r\n${uuid('a1252000', 2)},Bj`.length + 1;
    for (const dry of [[], ['--dry-run']]) {
      const r = await run(['artists', 'import', input, ...dry]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`w1252.csv is not valid UTF-8: line 3, byte ${byte} (0xf6). Nothing was imported.`);
      expect(r.stderr).toMatch(/pass --encoding windows-1252/);
    }
    expect(await stored('artists', 'a1252000', 'id')).toEqual([]);
  });

  it('Windows-1252 with --encoding: every character lands; the dry run agrees with the real run', async () => {
    const input = join(dir, 'w1252b.csv');
    writeFileSync(input, ARTISTS_1252('b1252000'));
    const dry = await run(['artists', 'import', input, '--encoding', 'windows-1252', '--dry-run']);
    expect(dry.code).toBe(0);
    expect(dry.stderr).toMatch(/would insert 3\b/);
    expect(dry.stderr).toMatch(/ 0 rejected/);
    const r = await run(['artists', 'import', input, '--encoding', 'windows-1252']);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/3 inserted/);
    expect(await stored('artists', 'b1252000', 'stage_name,city')).toEqual([
      { stage_name: 'Anna', city: 'Oslo' },
      { stage_name: 'Björn', city: 'Malmö' },
      { stage_name: '“Zoë” – €', city: 'Zürich' },
    ]);
  });

  it('UTF-16LE with a BOM (Excel "Unicode text": tab-separated) is read as such', async () => {
    const input = join(dir, 'unicode.txt');
    const text = `id\tstage_name\tcity\r\n${uuid('c16e0000', 1)}\tBjörn\tMalmö\r\n${uuid('c16e0000', 2)}\t東京\tKyōto\r\n`;
    writeFileSync(input, Buffer.concat([Buffer.from([0xff, 0xfe]), iconv.encode(text, 'utf-16le')]));
    const r = await run(['artists', 'import', input, '--format', 'csv']);
    expect(r.stderr).toMatch(/2 inserted/);
    expect(r.code).toBe(0);
    expect(await stored('artists', 'c16e0000', 'stage_name,city')).toEqual([
      { stage_name: 'Björn', city: 'Malmö' },
      { stage_name: '東京', city: 'Kyōto' },
    ]);
  });

  it('semicolon and tab files: detected from the header, by .tsv, and by --delimiter; a wrong flag names the right one', async () => {
    const rows = (p: string, d: string) =>
      `id${d}stage_name${d}city${d}is_signed\n${uuid(p, 1)}${d}"Smith${d} Jones"${d}Paris, TX${d}true\n${uuid(p, 2)}${d}Ana${d}Lyon${d}false\n`;
    const cases: Array<[string, string, string, string[]]> = [
      ['d5e00001', 'semi.csv', ';', []],
      ['d5e00002', 'semi-flag.csv', ';', ['--delimiter', ';']],
      ['d5e00003', 'tabs.tsv', '\t', []],
      ['d5e00004', 'tabs.csv', '\t', []],
      ['d5e00005', 'tabs-flag.csv', '\t', ['--delimiter', 'tab']],
      ['d5e00006', 'pipes.csv', '|', []],
    ];
    for (const [p, name, d, flags] of cases) {
      const input = join(dir, name);
      writeFileSync(input, rows(p, d));
      const r = await run(['artists', 'import', input, ...flags]);
      expect(r.stderr, name).toMatch(/2 inserted/);
      expect(await stored('artists', p, 'stage_name,city,is_signed')).toEqual([
        { stage_name: `Smith${d} Jones`, city: 'Paris, TX', is_signed: true },
        { stage_name: 'Ana', city: 'Lyon', is_signed: false },
      ]);
    }
    const wrong = await run(['artists', 'import', join(dir, 'semi.csv'), '--delimiter', ',']);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/the header is one name, "id;stage_name;city;is_signed", which holds semicolons: .*pass --delimiter ';'/);
  });

  it('dd/mm/yyyy: --date-format converts; without it an ambiguous date refuses the file before anything is written', async () => {
    const p = 'e0da7e00';
    const input = join(dir, 'dates.csv');
    writeFileSync(input, `id,stage_name,birthdate\n${uuid(p, 1)},Early,2001-02-03\n${uuid(p, 2)},Ambiguous,03/04/1990\n${uuid(p, 3)},Clear,25/12/1985\n`);
    for (const dry of [[], ['--dry-run']]) {
      const r = await run(['artists', 'import', input, ...dry]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/line 3: the date "03\/04\/1990" in column "birthdate" could be day 3 of month 4 or month 3, day 4: say how dates are written with --date-format DD\/MM\/YYYY or --date-format MM\/DD\/YYYY\. Nothing was imported\./);
      // issue 27: the column's own evidence, found anywhere in the file, names the one flag
      expect(r.stderr).toMatch(/The same column has "25\/12\/1985" \(line 4\), which can only be day first: pass --date-format DD\/MM\/YYYY\./);
    }
    expect(await stored('artists', p, 'id')).toEqual([]); // not even the row before it
    const ok = await run(['artists', 'import', input, '--date-format', 'DD/MM/YYYY']);
    expect(ok.stderr).toMatch(/3 inserted/);
    expect(ok.code).toBe(0);
    expect((await stored('artists', p, 'birthdate')).map((r) => r.birthdate)).toEqual(['2001-02-03', '1990-04-03', '1985-12-25']);
    // with the flag, a cell that is not a date that way rejects its row, naming it
    const bad = join(dir, 'dates-bad.csv');
    writeFileSync(bad, `id,stage_name,birthdate\n${uuid(p, 4)},Bad,31/02/1990\n`);
    const r = await run(['artists', 'import', bad, '--date-format', 'DD/MM/YYYY']);
    expect(r.code).toBe(3); // some rows rejected
    expect(r.stderr).toMatch(/line 2: 22007 column "birthdate": "31\/02\/1990" is not a date/);
  });

  it('rejects keep the input encoding, delimiter and every cell: fixed, they re-import with the same flags; dry run counts them the same', async () => {
    const p = 'f1ee0000';
    const input = join(dir, 'eu.csv');
    const text = [
      'id;stage_name;city;is_signed',
      `${uuid(p, 1)};Björn;Malmö;true`,
      `${uuid(p, 2)};Zoë;Zürich;peut-être`,
      `${uuid(p, 3)};Çelik;İzmir?;false;extra cell;another`,
      `${uuid(p, 4)};Øyvind;Tromsø;false`,
    ]
      .join('\r\n')
      .replace('İ', 'I');
    writeFileSync(input, iconv.encode(`${text}\r\n`, 'windows-1252'));
    const flags = ['--encoding', 'windows-1252'];
    const dry = await run(['artists', 'import', input, ...flags, '--dry-run']);
    expect(dry.stderr).toMatch(/would insert 2\b/);
    expect(dry.stderr).toMatch(/2 rejected/);
    const r = await run(['artists', 'import', input, ...flags]);
    expect(r.code).toBe(3); // some rows rejected
    expect(r.stderr).toMatch(/2 inserted/);
    expect(r.stderr).toMatch(/2 rejected/);
    const rejectsPath = `${input}.rejects.csv`;
    const bytes = readFileSync(rejectsPath);
    expect(bytes.includes(Buffer.from('Zoë', 'utf8'))).toBe(false); // not UTF-8 …
    expect(bytes.includes(iconv.encode('Zoë;Zürich;peut-être', 'windows-1252'))).toBe(true); // … the input's own bytes
    const rejects = iconv.decode(bytes, 'windows-1252');
    expect(rejects.split(/\r?\n/)[0]).toBe('_line;_code;_message;id;stage_name;city;is_signed');
    expect(rejects).toContain(`${uuid(p, 3)};Çelik;Izmir?;false;extra cell;another`); // every cell kept
    // the user fixes the two rows in the rejects file and imports it with the same flags
    const fixed = rejects.replace(/;peut-être(\r?\n)/, ';true$1').replace(';extra cell;another', '');
    const fixedPath = join(dir, 'eu-fixed.csv');
    writeFileSync(fixedPath, iconv.encode(fixed, 'windows-1252'));
    const again = await run(['artists', 'import', fixedPath, ...flags]);
    expect(again.stderr).toMatch(/2 inserted/);
    expect(again.code).toBe(0);
    expect(await stored('artists', p, 'stage_name,city,is_signed')).toEqual([
      { stage_name: 'Björn', city: 'Malmö', is_signed: true },
      { stage_name: 'Zoë', city: 'Zürich', is_signed: true },
      { stage_name: 'Çelik', city: 'Izmir?', is_signed: false },
      { stage_name: 'Øyvind', city: 'Tromsø', is_signed: false },
    ]);
  });

  it('xlsx: dates, numeric UPCs, booleans, empty and multi-line cells; rejects name sheet rows; an xlsx export imports back unchanged', async () => {
    const p = 'a15c0000';
    const book = new ExcelJS.Workbook();
    const ws = book.addWorksheet('Releases');
    ws.addRow(['id', 'release_title', 'upc_code', 'release_date', 'is_compilation', 'description']);
    ws.addRow([uuid(p, 1), 'Blue', 123456789012, new Date(Date.UTC(2024, 3, 3)), true, 'line one\nline two']);
    ws.addRow([uuid(p, 2), 'Red', 4006381333931, null, false, null]);
    ws.addRow([]);
    ws.addRow([uuid(p, 3), 'Broken', 1, 'not a date', 'maybe', '']);
    const input = join(dir, 'releases.xlsx');
    await book.xlsx.writeFile(input);
    const r = await run(['releases', 'import', input]);
    expect(r.stderr).toMatch(/2 inserted/);
    expect(r.stderr).toMatch(/line 5: 22/); // the sheet's row number
    expect(r.code).toBe(3); // some rows rejected
    const rows = await stored('releases', p, 'release_title,upc_code,release_date,is_compilation,description');
    expect(rows).toEqual([
      { release_title: 'Blue', upc_code: '123456789012', release_date: '2024-04-03', is_compilation: true, description: 'line one\nline two' },
      { release_title: 'Red', upc_code: '4006381333931', release_date: null, is_compilation: false, description: '' },
    ]);
    // its rejects are a CSV file that, fixed, imports with the same flags
    const rejects = readFileSync(`${input}.rejects.csv`, 'utf8');
    expect(rejects).toContain(`${uuid(p, 3)},Broken,1,not a date,maybe`);
    const fixed = join(dir, 'releases-fixed.csv');
    writeFileSync(fixed, rejects.replace(',not a date,maybe', ',2024-05-05,true'));
    const again = await run(['releases', 'import', fixed, '--sheet', 'Releases']);
    expect(again.stderr).toMatch(/1 inserted/);
    expect(again.code).toBe(0);
    const out = join(dir, 'releases-out.xlsx');
    const exp = await run(['releases', 'export', out, '--select', 'id,release_title,upc_code,release_date,is_compilation,description,created', ...between(p)]);
    expect(exp.stderr).toMatch(/exported 3 releases/);
    expect(exp.code).toBe(0);
    const back = await run(['releases', 'import', out]);
    expect(back.stderr).toMatch(/3 unchanged/);
    expect(back.code).toBe(0);
    const sheet = await run(['releases', 'import', input, '--sheet', 'Nope']);
    expect(sheet.code).toBe(2);
    expect(sheet.stderr).toMatch(/has no sheet named "Nope": its sheets are "Releases"/);
    const toStdout = await run(['releases', 'export', '--format', 'xlsx']);
    expect(toStdout.code).toBe(2);
    expect(toStdout.stderr).toMatch(/an xlsx export goes to a file/);
  });

  // 20,000 rows: many zip chunks and shared-string pages; the 100,000-row round trip, with the same
  // checks, is `npm run bench -- --only xlsx` (issue 39: large-data checks belong in the bench)
  it('a large xlsx round trip (20,000 rows): import, export, and the export imports back unchanged', async () => {
    const p = 'a100c000';
    const n = 20_000;
    const many = n.toLocaleString('en-US');
    const input = join(dir, 'rlarge.xlsx');
    const book = new ExcelJS.stream.xlsx.WorkbookWriter({ filename: input, useSharedStrings: false, useStyles: true });
    const ws = book.addWorksheet('Releases');
    ws.addRow(['id', 'release_title', 'upc_code', 'release_date', 'is_compilation']).commit();
    const date = (i: number) => new Date(Date.UTC(2000 + (i % 25), i % 12, 1 + (i % 28)));
    for (let i = 1; i <= n; i++) ws.addRow([uuid(p, i), `Title ${i}\nline 2`, 100_000_000_000 + i, date(i), i % 3 === 0]).commit();
    ws.commit();
    await book.commit();

    const imp = await run(['releases', 'import', input]);
    expect(imp.stderr).toContain(`${many} inserted`);
    expect(imp.code).toBe(0);
    const out = join(dir, 'rlarge-out.xlsx');
    const exp = await run(['releases', 'export', out, '--select', 'id,release_title,upc_code,release_date,is_compilation', '--order', 'id', ...between(p)]);
    expect(exp.stderr).toContain(`exported ${many} releases`);
    // the exported cells: text stays text (the UPC too), dates are dates, booleans booleans
    const seen: unknown[][] = [];
    for await (const sheet of new ExcelJS.stream.xlsx.WorkbookReader(out, { styles: 'cache', sharedStrings: 'cache', worksheets: 'emit' })) {
      for await (const row of sheet) if (row.number === 1 || row.number === 2 || row.number === n + 1) seen.push((row.values as unknown[]).slice(1));
    }
    expect(seen).toEqual([
      ['id', 'release_title', 'upc_code', 'release_date', 'is_compilation'],
      [uuid(p, 1), 'Title 1\nline 2', '100000000001', date(1), false],
      [uuid(p, n), `Title ${n}\nline 2`, String(100_000_000_000 + n), date(n), n % 3 === 0],
    ]);
    const back = await run(['releases', 'import', out]);
    expect(back.stderr).toContain(`0 inserted, 0 updated, ${many} unchanged, 0 rejected`);
    expect(back.code).toBe(0);
  });

  it('--dry-run agrees with the real run on every reject class: types, ragged rows, dates, foreign keys, repeated keys, NUL in text', async () => {
    const p = '99990000';
    const input = join(dir, 'mixed.csv');
    writeFileSync(
      input,
      `id;release_title;release_date;is_compilation;label_id\n${[
        `${uuid(p, 1)};Ok;2024-01-01;true;`,
        `${uuid(p, 2)};Bad date;31/02/2024;false;`,
        `${uuid(p, 3)};Bad bool;2024-01-01;maybe;`,
        `${uuid(p, 4)};No such label;2024-01-01;false;${uuid('deadbeef', 1)}`,
        `${uuid(p, 5)};Ragged;2024-01-01;false;;extra`,
        `${uuid(p, 6)};Ok too;01/02/2024;true;`,
        `${uuid(p, 7)};Twice;2024-01-01;true;`,
        `${uuid(p, 7)};Twice again;2024-01-01;true;`,
        `${uuid(p, 8)};NUL \u0000 inside;2024-01-01;true;`,
      ].join('\n')}\n`,
    );
    const summary = async (flags: string[]) => {
      const file = join(dir, `summary-${flags.join('')}.json`);
      const r = await run(['releases', 'import', input, '--date-format', 'DD/MM/YYYY', '--dedupe', 'error', '--summary', file, ...flags]);
      expect(r.code).toBe(3);
      const s = JSON.parse(readFileSync(file, 'utf8'));
      return { landed: s.inserted + s.updated, rejected: s.rejected, rows: s.rejectedRows.map((x: { line: number; code: string }) => [x.line, x.code]) };
    };
    const dry = await summary(['--dry-run']);
    const real = await summary([]);
    expect(dry).toEqual(real);
    expect(real).toEqual({
      landed: 2,
      rejected: 7,
      rows: [[3, '22007'], [4, '22P02'], [5, '23503'], [6, '22P02'], [8, '23505'], [9, '23505'], [10, '22021']],
    });
  });
});
