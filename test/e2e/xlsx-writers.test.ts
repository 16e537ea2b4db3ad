import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/stores.js';
import { prefixedBook } from '../support/xlsx-build.js';
import { catalog, ensureBuilt, type Serve, startServe } from './support.js';
import { PATIENCE_MS } from '../support/patience.js';

// Issue 37 item 2: workbooks written by the programs people use, made at test time from the
// machine's packages (.ci/run installs them: libreoffice-calc-nogui, gnumeric, python3-openpyxl),
// and by an Open XML SDK-style writer (every element prefixed `x:`, written here). Each is
// imported with bin/catalog and compared cell by cell with what was written. A missing program
// skips its case, saying so.

const dir = tempDir('xlsx-writers-');
let serve: Serve;

const COLUMNS = ['release_title', 'catalog_number', 'upc_code', 'release_date', 'is_compilation', 'description'];

/** What every writer is given and what the catalog must then hold, cell by cell. */
const WRITTEN = [
  { release_title: 'Ünïcode & <x> “quoted”', catalog_number: 'CAT-001', upc_code: '123456789012', release_date: '2024-04-03', is_compilation: true, description: 'line one\nline two' },
  { release_title: '🚀 Launch 東京', catalog_number: 'CAT-002', upc_code: '987654321098', release_date: '1999-12-31', is_compilation: false, description: '' },
  // its date is written as a date-time at midnight: the date it is
  { release_title: `Apostrophe's "quote"`, catalog_number: 'CAT-003', upc_code: '111111111116', release_date: '2024-05-01', is_compilation: false, description: 'tail  with  spaces' },
];
/** Row 5: a date-time at 10:30 in the date column, rejected naming the cell and the time. */
const TIMED = { release_title: 'Half past ten', catalog_number: 'CAT-004', upc_code: '222222222222', release_date: '2024-04-03 10:30', is_compilation: false, description: 'x' };
const TIMED_MESSAGE = 'column "release_date": cell D5 holds 2024-04-03 10:30:00, a date with the time of day 10:30:00';

/** The CSV LibreOffice and gnumeric convert (the date-time rows as `YYYY-MM-DD HH:MM`). */
function csvText(): string {
  const q = (v: unknown) => (typeof v === 'boolean' ? (v ? 'TRUE' : 'FALSE') : /[",\n]/.test(String(v)) ? `"${String(v).replace(/"/g, '""')}"` : String(v));
  const rows = [...WRITTEN.map((r, i) => (i === 2 ? { ...r, release_date: '2024-05-01 00:00' } : r)), TIMED];
  return `${COLUMNS.join(',')}\n${rows.map((r) => COLUMNS.map((c) => q(r[c as keyof typeof r])).join(',')).join('\n')}\n`;
}

/** A program on PATH (or at one of `paths`), else null. */
function program(names: string[]): string | null {
  for (const n of names) {
    if (n.startsWith('/') ? existsSync(n) : spawnSync('sh', ['-c', `command -v ${n}`]).status === 0) return n;
  }
  return null;
}

/** A Python 3 that imports openpyxl (Debian's python3-openpyxl is for /usr/bin/python3). */
function openpyxlPython(): string | null {
  for (const py of ['/usr/bin/python3', 'python3']) {
    if (spawnSync(py, ['-c', 'import openpyxl'], { stdio: 'ignore' }).status === 0) return py;
  }
  return null;
}

const OPENPYXL_SCRIPT = `
import datetime, sys, openpyxl
wb = openpyxl.Workbook()
ws = wb.active
ws.title = 'Releases'
ws.append(${JSON.stringify(COLUMNS)})
ws.append(['Ünïcode & <x> “quoted”', 'CAT-001', 123456789012, datetime.date(2024, 4, 3), True, 'line one\\nline two'])
ws.append(['🚀 Launch 東京', 'CAT-002', 987654321098, datetime.date(1999, 12, 31), False, None])
ws.append(["Apostrophe's \\"quote\\"", 'CAT-003', 111111111116, datetime.datetime(2024, 5, 1, 0, 0), False, 'tail  with  spaces'])
ws.append(['Half past ten', 'CAT-004', 222222222222, datetime.datetime(2024, 4, 3, 10, 30), False, 'x'])
ws.append(['Formula', 'CAT-005', '=111111111116+1', datetime.date(2024, 1, 1), False, 'f'])
wb.save(sys.argv[1])
`;

/** Each writer: how it makes `out` (null: the program is missing, with why), and whether it wrote openpyxl's unsaved formula (row 6). */
const WRITERS: Array<{ name: string; make: (out: string) => string | null; formula: boolean }> = [
  {
    name: 'LibreOffice Calc (soffice --convert-to xlsx, from CSV)',
    formula: false,
    make(out) {
      const soffice = program(['soffice', 'libreoffice']);
      if (!soffice) return 'soffice is not installed (Debian: libreoffice-calc-nogui)';
      const csv = join(dir, 'lo.csv');
      writeFileSync(csv, csvText());
      // UTF-8 (76), first line 1, English (1033), "detect special numbers" (date-times) on; a private profile
      const r = spawnSync(soffice, [`-env:UserInstallation=file://${join(dir, 'lo-profile')}`, '--headless', '--infilter=CSV:44,34,76,1,,1033,false,true', '--convert-to', 'xlsx', '--outdir', dir, csv], { encoding: 'utf8', timeout: PATIENCE_MS });
      if (r.status !== 0) throw new Error(`soffice failed: ${r.stderr}`);
      spawnSync('mv', [join(dir, 'lo.xlsx'), out]);
      return null;
    },
  },
  {
    name: 'gnumeric (ssconvert, from CSV)',
    formula: false,
    make(out) {
      const ssconvert = program(['ssconvert']);
      if (!ssconvert) return 'ssconvert is not installed (Debian: gnumeric)';
      const csv = join(dir, 'gn.csv');
      writeFileSync(csv, csvText());
      const r = spawnSync(ssconvert, [csv, out], { encoding: 'utf8', timeout: PATIENCE_MS });
      if (r.status !== 0) throw new Error(`ssconvert failed: ${r.stderr}`);
      return null;
    },
  },
  {
    name: 'openpyxl (Python)',
    formula: true,
    make(out) {
      const py = openpyxlPython();
      if (!py) return 'Python 3 with openpyxl is not installed (Debian: python3-openpyxl)';
      const r = spawnSync(py, ['-c', OPENPYXL_SCRIPT, out], { encoding: 'utf8', timeout: PATIENCE_MS });
      if (r.status !== 0) throw new Error(`openpyxl failed: ${r.stderr}`);
      return null;
    },
  },
  {
    name: 'an Open XML SDK-style writer (prefixed x: markup, written here)',
    formula: true,
    make(out) {
      prefixedBook(out, [
        {
          name: 'Releases',
          rows: [
            COLUMNS,
            [{ rich: ['Ünïcode & ', '<x> “quoted”'] }, 'CAT-001', 123456789012, new Date(Date.UTC(2024, 3, 3)), true, { inline: 'line one\nline two' }],
            ['🚀 Launch 東京', 'CAT-002', 987654321098, new Date(Date.UTC(1999, 11, 31)), false, null],
            [`Apostrophe's "quote"`, 'CAT-003', 111111111116, new Date(Date.UTC(2024, 4, 1)), false, 'tail  with  spaces'],
            ['Half past ten', 'CAT-004', 222222222222, new Date(Date.UTC(2024, 3, 3, 10, 30)), false, 'x'],
            ['Formula', 'CAT-005', { formula: '111111111116+1' }, new Date(Date.UTC(2024, 0, 1)), false, 'f'],
          ],
        },
      ]);
      return null;
    },
  },
];

const made = new Map<string, string | null>();

beforeAll(async () => {
  ensureBuilt();
  serve = await startServe(['--data', join(tempDir('xlsx-writers-data-'), 'data')]);
  WRITERS.forEach((w, i) => {
    const out = join(dir, `writer-${i}.xlsx`);
    const missing = w.make(out);
    if (missing) console.warn(`[xlsx-writers] SKIPPED "${w.name}": ${missing}; .ci/run installs it with apt-get`);
    made.set(w.name, missing ? null : out);
  });
});
afterAll(async () => {
  await serve?.stop();
});

describe('workbooks written by real programs import cell by cell (bin/catalog, catalog serve over PGlite)', () => {
  for (const w of WRITERS) {
    it(w.name, async (ctx) => {
      const file = made.get(w.name);
      if (!file) return ctx.skip(); // the program is missing: said in beforeAll
      const run = (argv: string[]) => catalog(['--url', serve.url, ...argv]);
      expect((await run(['releases', 'remove', '--all-rows', '--yes'])).code).toBe(0);
      const r = await run(['releases', 'import', file]);
      // the date-time row (and openpyxl's unsaved formula) are rejected, the rest imported
      expect(r.code, r.stderr).toBe(3);
      const listed = await run(['releases', 'list', '--select', COLUMNS.join(','), '--order', 'catalog_number', '-o', 'json']);
      const rows = JSON.parse(listed.stdout) as Array<Record<string, unknown>>;
      expect(rows.map((row) => ({ ...row, description: row.description ?? '' }))).toEqual(WRITTEN);
      const rejects = parse(readFileSync(`${file}.rejects.csv`), { columns: true }) as Array<Record<string, string>>;
      expect(rejects.map((x) => [x._line, x.catalog_number])).toEqual([['5', 'CAT-004'], ...(w.formula ? [['6', 'CAT-005']] : [])]);
      expect(rejects[0]._message).toMatch(TIMED_MESSAGE);
      if (w.formula) expect(rejects[1]._message).toMatch(/^cell C6 holds a formula \(=111111111116\+1\) with no saved result/);
    });
  }
});
