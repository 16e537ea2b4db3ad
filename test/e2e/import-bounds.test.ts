import { linkSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH } from '../../src/schema/json-depth.js';
import { tempDir } from '../support/stores.js';
import { hugeCellXlsx } from '../support/xlsx-bomb.js';
import { ROOT, catalog, ensureBuilt, serveBackends, startServe, type Serve } from './support.js';

/**
 * Bad input to `catalog … import` and to --url, with the real binary against `catalog serve` on
 * each store: a jsonb cell nested past MAX_JSON_DEPTH is one rejected row (it was a stack overflow
 * that aborted the import, good rows included); an xlsx cell or row over the record limit is
 * refused before exceljs buffers it (a 410 KB file took the CLI to 3 GB); an output file that is
 * the input is refused before anything is touched (--rejects x.csv deleted x.csv); a malformed
 * CSV, a record over the limit and a --url that is not an http(s) URL exit 2, naming what is wrong.
 */

const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
/** Inputs both backends' describes read, made by the first to ask: a 65 MiB cell or record takes a while to make, and the refusals are about the file. */
const SHARED = tempDir('import-bounds-shared-');
const made = new Map<string, Promise<string>>();
function sharedInput(name: string, make: (path: string) => Promise<void> | void): Promise<string> {
  const path = join(SHARED, name);
  if (!made.has(name)) made.set(name, Promise.resolve(make(path)).then(() => path));
  return made.get(name)!;
}

const TOO_DEEP = `54001,column metadata: JSON nested too deeply: a value may nest at most ${MAX_JSON_DEPTH} levels of arrays and objects`;

for (const backend of serveBackends('import-bounds')) {
  describe.skipIf(backend.skip)(`import and --url bounds (bin/catalog, catalog serve over ${backend.name}${backend.skip ? ', SKIPPED: set CATALOG_TEST_DATABASE_URL' : ''})`, () => {
    const args = backend.args;
    let serve: Serve;
    let dir: string;
    const run = (argv: string[]) => catalog(['--url', serve.url, ...argv]);
    /** The stage names in the catalog, sorted. */
    const names = async () => {
      const r = await run(['artists', 'list', '--all', '--select', 'stage_name', '-o', 'json']);
      expect(r.code).toBe(0);
      return (JSON.parse(r.stdout) as Array<{ stage_name: string }>).map((x) => x.stage_name).sort();
    };
    const clear = async () => {
      const r = await run(['artists', 'remove', '--all-rows', '--yes']);
      expect(r.code, r.stderr).toBe(0);
    };

    beforeAll(async () => {
      ensureBuilt();
      dir = tempDir('import-bounds-files-');
      serve = await startServe(args);
    });
    afterAll(async () => {
      await serve?.stop();
      await backend.cleanup();
    });

    it('rejects one row whose jsonb cell is nested 3,500 or 100,000 deep (CSV, NDJSON, JSON), keeps the others, and writes the rejects file', async () => {
      const cases: Array<[string, string, number[]]> = [
        ['deep.csv', `stage_name,metadata\nok one,"{""a"":1}"\ndeep a,"${nested(3_500)}"\nat limit,"${nested(MAX_JSON_DEPTH)}"\ndeep b,"${nested(100_000)}"\nok two,[1]\n`, [3, 5]],
        ['deep.ndjson', `{"stage_name":"ok one"}\n{"stage_name":"deep a","metadata":${nested(100_000)}}\n{"stage_name":"at limit","metadata":${nested(MAX_JSON_DEPTH)}}\n{"stage_name":"ok two"}\n`, [2]],
        ['deep.json', `[{"stage_name":"ok one"},\n{"stage_name":"deep a","metadata":${nested(3_500)}},\n{"stage_name":"at limit"},\n{"stage_name":"ok two"}]\n`, [2]],
      ];
      for (const [file, text, lines] of cases) {
        await clear();
        const input = join(dir, file);
        writeFileSync(input, text);
        const rejects = join(dir, `${file}.rejects`);
        const r = await run(['artists', 'import', input, '--rejects', rejects]);
        expect(r.stderr, file).not.toMatch(/call stack/);
        expect(r.code, `${file}: ${r.stderr}`).toBe(3);
        expect(r.stderr).toMatch(`${lines.length} rejected`);
        for (const line of lines) expect(r.stderr).toMatch(`line ${line}: ${TOO_DEEP.replace(',', ' ')}`);
        expect(await names(), file).toEqual(['at limit', 'ok one', 'ok two']);
        const written = readFileSync(rejects, 'utf8');
        if (file.endsWith('.csv')) {
          const rows = written.trimEnd().split('\n');
          expect(rows[0]).toBe('_line,_code,_message,stage_name,metadata');
          expect(rows).toHaveLength(lines.length + 1);
          lines.forEach((l, i) => expect(rows[i + 1].startsWith(`${l},${TOO_DEEP},deep ${'ab'[i]},[[[`)).toBe(true));
          // the cell is kept whole, to fix and import again
          expect(rows[2].endsWith(`,${nested(100_000)}`)).toBe(true);
        } else {
          const row = JSON.parse(written.split('\n')[0]) as Record<string, unknown>;
          expect(row).toMatchObject({ _line: lines[0], _code: '54001', stage_name: 'deep a' });
        }
      }
    });

    it('refuses an xlsx whose one cell (inline or shared string) inflates past 64 MiB, before reading it, exit 2', async () => {
      await clear();
      for (const where of ['inline', 'shared'] as const) {
        const input = await sharedInput(`huge-${where}.xlsx`, (path) => hugeCellXlsx(path, 65 * 1024 * 1024, where));
        expect(readFileSync(input).length).toBeLessThan(1024 * 1024);
        // a small heap: reading the cell into memory (several copies of 65 MiB) would not fit
        const r = await catalog(['--url', serve.url, 'artists', 'import', input], { nodeArgs: ['--max-old-space-size=96'] });
        expect(r.code, r.stderr).toBe(2);
        expect(r.stderr).toMatch(
          where === 'inline'
            ? /huge-inline\.xlsx: row 3 of worksheets\/sheet1\.xml is longer than 64 MiB, the largest record an import takes .*refused before being read into memory/
            : /huge-shared\.xlsx: the text of shared string 1 \(a cell's text\) is longer than 64 MiB/,
        );
      }
      expect(await names()).toEqual([]);
      // the same workbook with a small cell imports: the check does not refuse ordinary files
      const small = join(dir, 'small.xlsx');
      await hugeCellXlsx(small, 1000, 'shared');
      const r = await run(['artists', 'import', small]);
      expect(r.code, r.stderr).toBe(0);
      expect(await names()).toHaveLength(3);
    });

    it('refuses --rejects, --checkpoint or --summary that is the input (same path, symlink, hard link, relative path) before touching anything, exit 2', async () => {
      await clear();
      const input = join(dir, 'keep.csv');
      const text = 'stage_name\nkept\n"bad ""quote"" row\n';
      writeFileSync(input, text);
      symlinkSync(input, join(dir, 'keep-link.csv'));
      linkSync(input, join(dir, 'keep-hard.csv'));
      const spellings = [input, join(dir, 'keep-link.csv'), join(dir, 'keep-hard.csv'), relative(ROOT, input)];
      for (const flag of ['--rejects', '--checkpoint', '--summary']) {
        for (const output of spellings) {
          const r = await run(['artists', 'import', input, flag, output]);
          expect(r.code, `${flag} ${output}: ${r.stderr}`).toBe(2);
          expect(r.stderr).toMatch(`${flag} ${output} is the input file ${input}: writing it would destroy the input`);
          expect(readFileSync(input, 'utf8')).toBe(text);
        }
      }
      const twice = await run(['artists', 'import', input, '--rejects', join(dir, 'out.csv'), '--summary', join(dir, 'out.csv')]);
      expect(twice.code).toBe(2);
      expect(twice.stderr).toMatch('is the same file as --rejects');
      expect(await names()).toEqual([]);
    });

    it('exits 2 on a malformed CSV and on a record over 64 MiB, naming the line, with nothing written', async () => {
      await clear();
      const unclosed = join(dir, 'unclosed.csv');
      writeFileSync(unclosed, 'stage_name,city\nfine,x\n"unclosed,y\nz,w\n');
      const r1 = await run(['artists', 'import', unclosed]);
      expect(r1.code, r1.stderr).toBe(2);
      expect(r1.stderr).toMatch(/unclosed\.csv: CSV is malformed near line 3: a quoted field is not closed/);
      const stray = join(dir, 'stray.csv');
      writeFileSync(stray, 'stage_name,city\nfine,x\na "b" c,y\n');
      const r2 = await run(['artists', 'import', stray]);
      expect(r2.code, r2.stderr).toBe(2);
      expect(r2.stderr).toMatch(/stray\.csv: CSV is malformed near line 3: a quote inside unquoted field 1/);
      const long = await sharedInput('long.csv', (path) => writeFileSync(path, `stage_name,city\nfine,x\n"${'x'.repeat(65 * 1024 * 1024)}",y\n`));
      const r3 = await run(['artists', 'import', long]);
      expect(r3.code, r3.stderr).toBe(2);
      expect(r3.stderr).toMatch(/long\.csv: a record starting at line 3 is longer than 64 MiB/);
      expect(await names()).toEqual([]);
      // (reading 65 MiB to the limit is slow on a loaded machine: a generous bound, not a timing)
    });

    it("exits 2 on --url 'not a url', an ftp:// URL, and https:// to the service's plain-HTTP port, saying so in words", async () => {
      const bad = await catalog(['--url', 'not a url', 'artists', 'list']);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch("--url 'not a url' is not a URL");
      const ftp = await catalog(['artists', 'list'], { env: { CATALOG_URL: 'ftp://127.0.0.1/x' } });
      expect(ftp.code).toBe(2);
      expect(ftp.stderr).toMatch("CATALOG_URL 'ftp://127.0.0.1/x' uses ftp://, which the catalog service does not speak");
      const tls = serve.url.replace('http:', 'https:');
      const https = await catalog(['--url', tls, 'artists', 'list']);
      expect(https.code).toBe(2);
      expect(https.stderr).toMatch(`the server at ${new URL(serve.url).host} answered in plain HTTP, not HTTPS: use ${serve.url}`);
    });
  });
}
