import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/stores.js';
import { catalog, ensureBuilt, startServe, type Serve } from './support.js';

/**
 * `export --bom` / `--safe-formulas` with the real binary against `catalog serve` (PGlite): cells
 * a spreadsheet would run (= + - @, tab, CR first) are made text, the same bytes through each of
 * export's byte paths (one COPY read, COPY pages, JSON rows through the writer); plain CSV stays
 * byte-faithful and imports back to the same rows.
 */

const BOM = '\uFEFF';
const SELECT = 'id,stage_name,city,biography';
const INPUT = [
  'id,stage_name,city,biography',
  '00000000-0000-4000-8000-000000000001,"=HYPERLINK(""http://evil.example"",""click"")",+1 555,-2+3',
  '00000000-0000-4000-8000-000000000002,@SUM(A1:A9),"\tTabbed","\rReturn"',
  '00000000-0000-4000-8000-000000000003,Plain Name,"a, b","=in ""quotes"""',
  '00000000-0000-4000-8000-000000000004,"  Spaced  ",,""',
].join('\n');

describe('export --bom and --safe-formulas (bin/catalog, catalog serve over PGlite)', () => {
  let serve: Serve;
  let capped: Serve;
  let dir: string;
  const exp = (s: Serve, args: string[]) => catalog(['--url', s.url, 'artists', 'export', ...args]);

  beforeAll(async () => {
    ensureBuilt();
    dir = tempDir('export-spreadsheet-');
    const data = join(dir, 'data');
    serve = await startServe(['--data', data]);
    writeFileSync(join(dir, 'in.csv'), `${INPUT}\n`);
    const r = await catalog(['--url', serve.url, 'artists', 'import', join(dir, 'in.csv')]);
    expect(r.code, r.stderr).toBe(0);
  });
  afterAll(async () => {
    await capped?.stop();
    await serve?.stop();
  });

  it('plain CSV keeps formula cells as they are and imports back to the same rows', async () => {
    const plain = await exp(serve, ['--select', SELECT]);
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stdout.startsWith('id,stage_name,city,biography\n')).toBe(true);
    expect(plain.stdout).toContain(',"=HYPERLINK(""http://evil.example"",""click"")",+1 555,-2+3\n');
    expect(plain.stdout).not.toContain("'");
    const file = join(dir, 'plain.csv');
    writeFileSync(file, plain.stdout);
    const again = await startServe(['--data', join(dir, 'again')]);
    try {
      expect((await catalog(['--url', again.url, 'artists', 'import', file])).code).toBe(0);
      expect((await exp(again, ['--select', SELECT])).stdout).toBe(plain.stdout);
    } finally {
      await again.stop();
    }
  });

  it('--bom writes a BOM and makes formula cells text, byte for byte the same through the COPY read, COPY pages and the JSON-row writer', async () => {
    const copyRead = await exp(serve, ['--select', SELECT, '--bom']);
    expect(copyRead.code, copyRead.stderr).toBe(0);
    expect(copyRead.stdout).toBe(
      `${BOM}${[
        'id,stage_name,city,biography',
        `00000000-0000-4000-8000-000000000001,"'=HYPERLINK(""http://evil.example"",""click"")","'+1 555","'-2+3"`,
        `00000000-0000-4000-8000-000000000002,"'@SUM(A1:A9)","'\tTabbed","'\rReturn"`,
        `00000000-0000-4000-8000-000000000003,Plain Name,"a, b","'=in ""quotes"""`,
        // an empty cell imported as the column default, '', which the dialect writes ""
        '00000000-0000-4000-8000-000000000004,"  Spaced  ","",""',
      ].join('\n')}\n`,
    );
    // JSON rows through the writer: a cast keeps the header but is not a plain column
    const writer = await exp(serve, ['--select', `${SELECT}::text`, '--bom', '-v']);
    expect(writer.stderr).toMatch(/GET \S+select=id,stage_name,city,biography::text&order=id&limit=/);
    expect(writer.stdout).toBe(copyRead.stdout);
    // a service that caps COPY reads at 2 rows: COPY pages of one row each
    capped = await startServe(['--data', join(dir, 'data-capped'), '--max-rows', '2']);
    const file = join(dir, 'in.csv');
    expect((await catalog(['--url', capped.url, 'artists', 'import', file])).code).toBe(0);
    const pages = await exp(capped, ['--select', SELECT, '--bom', '-v']);
    expect(pages.stderr).toMatch(/→ 406/);
    expect(pages.stdout).toBe(copyRead.stdout);
    // to a file: the same bytes
    const out = join(dir, 'excel.csv');
    expect((await exp(serve, ['--select', SELECT, '--bom', out])).code).toBe(0);
    expect(readFileSync(out, 'utf8')).toBe(copyRead.stdout);
    // a .tsv file: the same cells, separated by tabs (a tab-first cell quoted and prefixed too)
    const tsv = join(dir, 'excel.tsv');
    expect((await exp(serve, ['--select', SELECT, '--bom', tsv])).code).toBe(0);
    expect(readFileSync(tsv, 'utf8').split('\n')[2]).toBe(`00000000-0000-4000-8000-000000000002\t"'@SUM(A1:A9)"\t"'\tTabbed"\t"'\rReturn"`);
  });

  it('--safe-formulas alone writes no BOM; --bom --no-safe-formulas is the plain bytes after a BOM', async () => {
    const plain = (await exp(serve, ['--select', SELECT])).stdout;
    const safe = (await exp(serve, ['--select', SELECT, '--bom'])).stdout;
    expect((await exp(serve, ['--select', SELECT, '--safe-formulas'])).stdout).toBe(safe.slice(1));
    expect((await exp(serve, ['--select', SELECT, '--bom', '--no-safe-formulas'])).stdout).toBe(`${BOM}${plain}`);
  });

  it('refuses --bom and --safe-formulas for formats other than CSV (exit 2), and export --help says which output is which', async () => {
    const json = await exp(serve, ['--format', 'json', '--bom']);
    expect(json.code).toBe(2);
    expect(json.stderr).toMatch('--bom is for CSV exports, not json');
    const xlsx = await exp(serve, [join(dir, 'x.xlsx'), '--safe-formulas']);
    expect(xlsx.code).toBe(2);
    expect(xlsx.stderr).toMatch('--safe-formulas is for CSV exports, not xlsx');
    const help = await catalog(['artists', 'export', '--help']);
    expect(help.stdout).toMatch(/--bom +CSV for Excel: start with a UTF-8 byte order mark/);
    expect(help.stdout).toMatch(/--safe-formulas +make cells that start with = \+ - @/);
    expect(help.stdout).toMatch(/Plain CSV \(no --bom or --safe-formulas\) is byte-faithful: it imports back to the same rows/);
  });
});
