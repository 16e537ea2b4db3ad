/**
 * Excel workbooks (issue 16): `catalog releases import FILE.xlsx` and `catalog releases export
 * FILE.xlsx` against `catalog serve --data DIR` (PGlite), at N rows: rows/s and the command's peak
 * RSS, plus the re-import of the export (every row unchanged, checked). Not yet called by
 * bench/run.js; the lead wires it in (e.g. `await xlsxSize(ctx, n)` beside pgliteSize), or run it
 * alone:
 *
 *   node bench/scenarios/xlsx.js --rows 100000      # prints one JSON line of figures
 *
 * The workbook is made here with exceljs' streaming writer: id, a two-line title, a 12-digit UPC
 * stored as a number, a real date and a boolean per row (the cell types the reader converts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { assertOk, runTimed } from '../lib/proc.js';
import { CATALOG_BIN, ROOT, startCatalog } from '../lib/service.js';

const uuid = (n) => `b0c5a000-0000-4000-8000-${String(n).padStart(12, '0')}`;

/** Writes an n-row releases workbook (streaming, so the bench's own memory stays flat). */
export async function makeWorkbook(path, n) {
  const book = new ExcelJS.stream.xlsx.WorkbookWriter({ filename: path, useSharedStrings: false, useStyles: true });
  const ws = book.addWorksheet('Releases');
  ws.addRow(['id', 'release_title', 'upc_code', 'release_date', 'is_compilation']).commit();
  for (let i = 1; i <= n; i++) {
    ws.addRow([uuid(i), `Title ${i}\nsecond line`, 100_000_000_000 + i, new Date(Date.UTC(2000 + (i % 25), i % 12, 1 + (i % 28))), i % 3 === 0]).commit();
  }
  ws.commit();
  await book.commit();
}

const figures = (res, n) => ({ ms: Math.round(res.ms), rowsPerSec: Math.round(n / (res.ms / 1000)), peakRssMb: res.peakKb ? Math.round(res.peakKb / 1024) : null });

/** One size: import, export and re-import of an n-row workbook; returns { import, export, reimport }. */
export async function xlsxRun(n, { scratch = mkdtempSync(join(tmpdir(), 'bench-xlsx-')) } = {}) {
  const input = join(scratch, `releases-${n}.xlsx`);
  const output = join(scratch, `releases-${n}-out.xlsx`);
  await makeWorkbook(input, n);
  const service = await startCatalog({ dataDir: join(scratch, 'data') });
  try {
    const cli = (args) => runTimed(process.execPath, [CATALOG_BIN, '--url', service.url, ...args], { cwd: ROOT });
    const imp = assertOk(await cli(['releases', 'import', input]), 'catalog releases import (xlsx)');
    if (!new RegExp(`${n.toLocaleString('en-US')} inserted`).test(imp.stderr)) throw new Error(`xlsx import did not insert ${n} rows: ${imp.stderr.trim()}`);
    const exp = assertOk(await cli(['releases', 'export', output, '--select', 'id,release_title,upc_code,release_date,is_compilation']), 'catalog releases export (xlsx)');
    const again = assertOk(await cli(['releases', 'import', output]), 'catalog releases import (xlsx export)');
    if (!new RegExp(`${n.toLocaleString('en-US')} unchanged`).test(again.stderr)) throw new Error(`the xlsx export did not import back unchanged: ${again.stderr.trim()}`);
    return { rows: n, import: figures(imp, n), export: figures(exp, n), reimport: figures(again, n) };
  } finally {
    await service.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** For bench/run.js: records `xlsx.{import,export}.N` (ms) and `xlsx.{import,export}.rss.N` (peak MB). */
export async function xlsxSize(ctx, n) {
  const keys = ['import', 'export'].flatMap((k) => [`xlsx.${k}.${n}`, `xlsx.${k}.rss.${n}`]);
  await ctx.R.attempt(keys, async () => {
    const r = await xlsxRun(n, { scratch: mkdtempSync(join(ctx.scratch, 'xlsx-')) });
    for (const k of ['import', 'export']) {
      ctx.R.add(`xlsx.${k}.${n}`, r[k].ms);
      ctx.R.add(`xlsx.${k}.rss.${n}`, r[k].peakRssMb);
    }
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const i = process.argv.indexOf('--rows');
  const n = i > 0 ? Number(process.argv[i + 1].replace(/k$/i, '000')) : 10_000;
  console.log(JSON.stringify(await xlsxRun(n)));
}
