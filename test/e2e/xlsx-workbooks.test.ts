import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/stores.js';
import { sheetXml, textRow, writeBook } from '../support/xlsx-build.js';
import { catalog, ensureBuilt, type Serve, startServe } from './support.js';

// Issue 37 item 2: workbooks as people make them. A title above the header (--header-row, and a
// hint naming the header row when it is missing), notes on the first sheet (the refusal lists
// the sheets and --sheet), cells merged down a column (filled, never half-filled), merged across
// columns of data (refused, naming them).

const dir = tempDir('xlsx-workbooks-');
let serve: Serve;
const run = (argv: string[]) => catalog(['--url', serve.url, ...argv]);

const merged = (refs: string[]) => `<mergeCells count="${refs.length}">${refs.map((r) => `<mergeCell ref="${r}"/>`).join('')}</mergeCells>`;
/** A sheet as an office makes it: a title, a note, the header on row 3, a description merged down rows 4-6. */
const releases = (extraMerges: string[] = []) =>
  sheetXml(
    [
      textRow(1, ['Catalog export, March']),
      textRow(2, ['made by the label office']),
      textRow(3, ['release_title', 'catalog_number', 'description']),
      textRow(4, ['Blue', 'CAT-1', 'Spring reissue']),
      textRow(5, ['Red', 'CAT-2', '']),
      textRow(6, ['Green', 'CAT-3', '']),
      textRow(7, ['Solo', 'CAT-4', 'on its own']),
    ].join(''),
    { after: merged(['A1:C1', 'C4:C6', ...extraMerges]) },
  );
const notes = sheetXml([textRow(1, ['Read me first']), textRow(2, ['The releases are on the next sheet.'])].join(''));

beforeAll(async () => {
  ensureBuilt();
  serve = await startServe(['--data', join(tempDir('xlsx-workbooks-data-'), 'data')]);
  writeBook(join(dir, 'office.xlsx'), { sheets: [{ name: 'Read me', xml: notes }, { name: 'Releases', xml: releases() }] });
  writeBook(join(dir, 'wide.xlsx'), { sheets: [{ name: 'Releases', xml: releases(['A7:B7']) }] });
});
afterAll(async () => {
  await serve?.stop();
});

describe('workbooks as people make them (bin/catalog, catalog serve over PGlite)', () => {
  it('notes on the first sheet: the unknown-field refusal lists the sheets and suggests --sheet', async () => {
    const r = await run(['releases', 'import', join(dir, 'office.xlsx')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch('unknown field "Read me first" for releases.');
    expect(r.stderr).toMatch('Its first sheet, "Read me", was read; the workbook\'s sheets are "Read me", "Releases": name the one to import with --sheet (e.g. --sheet "Releases").');
  });

  it('a title above the header: the refusal says which row seems to be the header, and --header-row reads it', async () => {
    const r = await run(['releases', 'import', join(dir, 'office.xlsx'), '--sheet', 'Releases']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch('unknown field "Catalog export, March" for releases.');
    expect(r.stderr).toMatch('Row 1 looks like a title; the header seems to be row 3: pass --header-row 3.');
    expect((await run(['releases', 'count'])).stdout.trim()).toBe('0');

    const ok = await run(['releases', 'import', join(dir, 'office.xlsx'), '--sheet', 'Releases', '--header-row', '3']);
    expect(ok.code, ok.stderr).toBe(0);
    const rows = JSON.parse((await run(['releases', 'list', '--select', 'release_title,catalog_number,description', '--order', 'catalog_number', '-o', 'json'])).stdout);
    // C4:C6 merged: every row of the range holds its value, as the sheet shows it
    expect(rows).toEqual([
      { release_title: 'Blue', catalog_number: 'CAT-1', description: 'Spring reissue' },
      { release_title: 'Red', catalog_number: 'CAT-2', description: 'Spring reissue' },
      { release_title: 'Green', catalog_number: 'CAT-3', description: 'Spring reissue' },
      { release_title: 'Solo', catalog_number: 'CAT-4', description: 'on its own' },
    ]);
  });

  it('cells merged across columns of data are refused, naming them; nothing is imported', async () => {
    expect((await run(['releases', 'remove', '--all-rows', '--yes'])).code).toBe(0);
    const r = await run(['releases', 'import', join(dir, 'wide.xlsx'), '--header-row', '3']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch('the merged cells A7:B7 (sheet "Releases") span several columns of data, so which field holds the value is unclear');
    expect((await run(['releases', 'count'])).stdout.trim()).toBe('0');
  });

  it('--header-row is for workbooks: a CSV input refuses it; a header row that is empty is named', async () => {
    const csv = join(dir, 'plain.csv');
    writeFileSync(csv, 'release_title\nBlue\n');
    const r = await run(['releases', 'import', csv, '--header-row', '2']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch("--header-row is for workbooks (.xlsx), not csv: a CSV file's header is its first line");
    const empty = await run(['releases', 'import', join(dir, 'office.xlsx'), '--sheet', 'Releases', '--header-row', '12']);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toMatch('row 12 of the sheet is empty, and --header-row 12 names it as the header');
    const zero = await run(['releases', 'import', join(dir, 'office.xlsx'), '--header-row', '0']);
    expect(zero.code).toBe(2);
    expect(zero.stderr).toMatch("--header-row needs a whole number ≥ 1, not '0'");
  });
});
