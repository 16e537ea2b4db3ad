import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseCsv } from 'csv-parse/sync';
import { beforeAll, describe, expect, it } from 'vitest';
import { TABLES } from '../../src/schema/catalog.js';
import { runCli, type TestContextOptions, useTestService } from '../cli/support.js';
import { countOf, file, rowsOf, tmp } from './support.js';

const SEED = join(import.meta.dirname, '..', '..', 'fixtures', 'seed');
const id = (n: number) => `1ab00000-0000-4000-8000-${String(n).padStart(12, '0')}`;

describe('seed into an empty catalog', () => {
  // a service of its own: the seed must find the catalog empty, and the tests below write to theirs
  const server = useTestService();
  const cli = (args: string[], o: TestContextOptions = {}) => runCli(['--url', server.url, ...args], o);

  it('seed loads the bundled catalog in foreign-key order, and a second seed changes nothing', async () => {
    const first = await cli(['seed']);
    expect(first.err).toMatch(/countries\s+26 rows: 26 inserted/);
    expect(first.code).toBe(0);
    for (const t of TABLES) {
      const rows = parseCsv(readFileSync(join(SEED, `${t.name}.csv`)), { columns: true }) as unknown[];
      expect(await countOf(server.store, t.name)).toBe(rows.length);
    }
    const before = await rowsOf(server.store, 'tracks');
    const again = await cli(['seed', SEED]);
    expect(again.code).toBe(0);
    expect(again.err).toMatch(/tracks\s+200 rows: 0 inserted, 0 updated, 200 unchanged/);
    expect(await rowsOf(server.store, 'tracks')).toEqual(before);
  });
});

describe('import, export and seed commands against a real service', () => {
  // the sample catalog (the export test reads it; the others add rows of their own to it)
  const server = useTestService();
  const cli = (args: string[], o: TestContextOptions = {}) => runCli(['--url', server.url, ...args], o);
  beforeAll(async () => {
    const seeded = await cli(['seed']);
    expect(seeded.code, seeded.err).toBe(0);
  });

  it('import prints a summary, writes --summary JSON, and exits 3 naming rejected lines', async () => {
    const dir = tmp();
    const input = file(dir, 'labels.csv', `id,name\n${id(1)},Good One\n${id(2)}x,Bad Id\n${id(3)},"Good, Two"\n`);
    const r = await cli(['labels', 'import', input, '--summary', join(dir, 'summary.json')]);
    expect(r.code).toBe(3);
    expect(r.err).toMatch(/labels\.csv → labels: 2 inserted, 0 updated, 0 unchanged, 1 rejected, 0 deduped/);
    expect(r.err).toMatch(/line 3: 22P02 column id: invalid input syntax for type uuid/);
    expect(r.err).toMatch(/1 row was rejected; they are in .*labels\.csv\.rejects\.csv/);
    const summary = JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8'));
    expect(summary).toMatchObject({ table: 'labels', inserted: 2, rejected: 1, rejectedRows: [{ line: 3, code: '22P02' }] });
    expect(existsSync(`${input}.rejects.csv`)).toBe(true);
  });

  it('rows the service refuses (foreign key) come back through the HTTP client as rejects, the rest land', async () => {
    const input = file(tmp(), 'releases.ndjson', [
      JSON.stringify({ id: 'e0000000-0000-4000-8000-00000000aa01', release_title: 'Fine' }),
      JSON.stringify({ id: 'e0000000-0000-4000-8000-00000000aa02', release_title: 'Orphan', label_id: '1ab00000-0000-4000-8000-0000000fffff' }),
      JSON.stringify({ id: 'e0000000-0000-4000-8000-00000000aa03', release_title: 'Also fine', is_compilation: true }),
    ].join('\n'));
    const r = await cli(['releases', 'import', input, '--batch-size', '10']);
    expect(r.code).toBe(3);
    expect(r.err).toMatch(/2 inserted, 0 updated, 0 unchanged, 1 rejected/);
    expect(r.err).toMatch(/line 2: 23503 .*foreign key/);
    const rejects = readFileSync(`${input}.rejects.ndjson`, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(rejects).toEqual([expect.objectContaining({ _line: 2, _code: '23503', release_title: 'Orphan' })]);
    const rows = await rowsOf(server.store, 'releases', 'id,release_title,is_compilation,description');
    expect(rows.filter((x) => (x.id as string).startsWith('e0000000-0000-4000-8000-00000000aa'))).toEqual([
      { id: 'e0000000-0000-4000-8000-00000000aa01', release_title: 'Fine', is_compilation: false, description: '' },
      { id: 'e0000000-0000-4000-8000-00000000aa03', release_title: 'Also fine', is_compilation: true, description: '' },
    ]);
  });

  it('an unknown header is a usage error that lists the valid fields', async () => {
    const input = file(tmp(), 'labels.csv', `id,name,colour\n${id(9)},X,red\n`);
    const r = await cli(['labels', 'import', input]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/unknown field "colour" for labels\. Valid fields: id, name, created, updated/);
    const ok = await cli(['labels', 'import', input, '--ignore-unknown', '-q']);
    expect(ok.code).toBe(0);
    expect(ok.err).toBe('');
  });

  it('--dry-run (global or after the file) reports without writing', async () => {
    // one label of the file is there already, as written (a row of its own, not another test's)
    await server.store.query('insert into labels (id, name) values ($1, $2)', [id(21), 'Already There']);
    const input = file(tmp(), 'labels.csv', `id,name\n${id(20)},New\n${id(21)},Already There\n`);
    const before = await countOf(server.store, 'labels');
    for (const args of [['--dry-run', 'labels', 'import', input], ['labels', 'import', input, '--dry-run']]) {
      const r = await cli(args);
      expect(r.err).toMatch(/dry run, nothing written\): would insert 1, update 0; 1 unchanged/);
      expect(r.code).toBe(0);
    }
    expect(await countOf(server.store, 'labels')).toBe(before);
  });

  it('imports from stdin with --format', async () => {
    const r = await cli(['labels', 'import', '-', '--format', 'ndjson'], { stdin: `{"id":"${id(30)}","name":"From stdin"}\n` });
    expect(r.code).toBe(0);
    expect((await rowsOf(server.store, 'labels', 'id,name')).find((x) => x.id === id(30))?.name).toBe('From stdin');
  });

  it('export writes the filtered rows to a file that imports back identically', async () => {
    const dir = tmp();
    const out = join(dir, 'releases.csv');
    const r = await cli(['releases', 'export', out, '--where', 'release_date>=2010-01-01', '--page-size', '7']);
    expect(r.code).toBe(0);
    expect(r.err).toMatch(/exported \d+ releases to .*releases\.csv as csv/);
    const exported = parseCsv(readFileSync(out), { columns: true }) as Array<Record<string, string>>;
    const expected = (await rowsOf(server.store, 'releases')).filter((x) => x.release_date !== null && (x.release_date as string) >= '2010-01-01');
    expect(exported.map((x) => x.id).sort()).toEqual(expected.map((x) => x.id).sort());

    const nd = await cli(['releases', 'export', '--format', 'ndjson', '--select', 'id,release_title,upc_code', '--order', 'release_title', '--limit', '5']);
    const lines = nd.out.trim().split('\n').map((l) => JSON.parse(l));
    expect(lines).toHaveLength(5);
    expect(Object.keys(lines[0])).toEqual(['id', 'release_title', 'upc_code']);
    const titles = lines.map((l) => l.release_title as string);
    expect([...titles].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))).toEqual(titles);
  });
});
