import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseCsv } from 'csv-parse/sync';
import { beforeAll, describe, expect, it } from 'vitest';
import { xlsxReader } from '../../src/import/readers/xlsx.js';
import { tempDir } from '../support/stores.js';
import { catalog, ensureBuilt } from './support.js';

// Issue 27 item 2: export's shapes match list's — embeds flatten to `labels.name` (or their alias)
// in CSV, TSV and xlsx; `.tsv` means tab out (and import reads it back); an empty result still has
// its header line.

const env = { CATALOG_DATA: '' };
const dir = tempDir('export-shapes-');

beforeAll(async () => {
  ensureBuilt();
  env.CATALOG_DATA = tempDir('export-shapes-data-');
  const seeded = await catalog(['seed'], { env });
  expect(seeded.code, seeded.stderr).toBe(0);
});

async function xlsxRows(file: string): Promise<string[][]> {
  const reader = xlsxReader(file);
  const out: string[][] = [];
  for await (const r of reader.records()) out.push(r.cells!);
  return [reader.headers!, ...out];
}

describe('export', () => {
  it('flattens a to-one embed to labels.name columns in CSV and xlsx, and a renamed one under its alias', async () => {
    const args = ['releases', 'export', '--select', 'release_title,labels(name),imprint:labels(label_name:name)', '--where', 'label_id=not.is.null', '--order', 'release_title', '--limit', '3'];
    const csv = await catalog([...args, '-q'], { env });
    expect(csv.code, csv.stderr).toBe(0);
    const rows = parseCsv(csv.stdout) as string[][];
    expect(rows[0]).toEqual(['release_title', 'labels.name', 'imprint.label_name']);
    expect(rows).toHaveLength(4);
    for (const row of rows.slice(1)) {
      expect(row[1]).not.toMatch(/[{}]/);
      expect(row[2]).toBe(row[1]);
    }
    const file = join(dir, 'embeds.xlsx');
    expect((await catalog([...args.slice(0, 2), file, ...args.slice(2), '-q'], { env })).code).toBe(0);
    expect(await xlsxRows(file)).toEqual(rows);
  });

  it('.tsv writes tabs, and imports back into the same rows', async () => {
    const file = join(dir, 'genres.tsv');
    const r = await catalog(['genres', 'export', file, '--select', 'name', '--order', 'name', '-q'], { env });
    expect(r.code, r.stderr).toBe(0);
    const text = readFileSync(file, 'utf8');
    expect(text.split('\n')[0]).toBe('name');
    const lines = text.trimEnd().split('\n');
    const full = join(dir, 'genres-full.tsv');
    expect((await catalog(['genres', 'export', full, '-q'], { env })).code).toBe(0);
    expect(readFileSync(full, 'utf8').split('\n')[0]).toBe('id\tname\tcreated\tupdated');
    const fresh = { ...env, CATALOG_DATA: tempDir('export-shapes-tsv-') };
    const back = await catalog(['genres', 'import', full], { env: fresh });
    expect(back.code, back.stderr).toBe(0);
    const names = JSON.parse((await catalog(['genres', 'list', '--select', 'name', '--order', 'name'], { env: fresh })).stdout).map((g: { name: string }) => g.name);
    expect(names).toEqual(lines.slice(1).map((l) => l.replace(/^"|"$/g, '')));
  });

  it('an empty result still has its header line: export, list -o csv and -o tsv, with and without --select', async () => {
    const none = ['--where', 'name=no such genre at all'];
    expect((await catalog(['genres', 'export', ...none, '-q'], { env })).stdout).toBe('id,name,created,updated\n');
    expect((await catalog(['genres', 'export', ...none, '--select', 'name', '-q'], { env })).stdout).toBe('name\n');
    expect((await catalog(['genres', 'list', ...none, '--select', 'name,created', '-o', 'csv'], { env })).stdout).toBe('name,created\n');
    expect((await catalog(['genres', 'list', ...none, '--select', 'name,created', '-o', 'tsv'], { env })).stdout).toBe('name\tcreated\n');
    expect((await catalog(['releases', 'list', ...['--where', 'release_title=none'], '--select', 'release_title,labels(name)', '-o', 'csv'], { env })).stdout).toBe('release_title,labels.name\n');
  });

  it('--delimiter must be one character', async () => {
    const r = await catalog(['genres', 'export', '--delimiter', ';;'], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--delimiter takes one character/);
  });
});
