import { spawnSync } from 'node:child_process';
import { parse as parseCsv } from 'csv-parse/sync';
import { beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/stores.js';
import { catalog, catalogInTerminal, ensureBuilt } from './support.js';

// Issue 17 item 10: embeds as columns, and ids a table may abbreviate because `get` takes a prefix.

const env = { CATALOG_DATA: '' };
const ANSI = /\x1b\[[0-9;]*m/g;
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;
const hasScript = spawnSync('script', ['--version']).status === 0;

beforeAll(async () => {
  ensureBuilt();
  env.CATALOG_DATA = tempDir('table-columns-');
  const seeded = await catalog(['seed'], { env });
  expect(seeded.code, seeded.stderr).toBe(0);
});

describe('a to-one embed shows as embed.field columns', () => {
  it('in CSV: a labels.name header and plain names, not JSON', async () => {
    const r = await catalog(['releases', 'list', '--select', 'release_title,labels(name)', '--where', 'label_id=not.is.null', '--limit', '5', '-o', 'csv'], { env });
    expect(r.code, r.stderr).toBe(0);
    const rows = parseCsv(r.stdout) as string[][];
    expect(rows[0]).toEqual(['release_title', 'labels.name']);
    expect(rows).toHaveLength(6);
    for (const row of rows.slice(1)) {
      expect(row).toHaveLength(2);
      expect(row[1]).not.toMatch(/[{}"]/);
      expect(row[1]).not.toBe('');
    }
  });

  it('with --all page by page: a null embed first still gets its columns, the header never changes', async () => {
    const args = ['releases', 'list', '--all', '--page-size', '3', '--select', 'release_title,labels(name,id)', '--order', 'label_id.nullsfirst,release_title', '-o', 'csv'];
    const r = await catalog(args, { env });
    expect(r.code, r.stderr).toBe(0);
    const rows = parseCsv(r.stdout) as string[][];
    expect(rows[0]).toEqual(['release_title', 'labels.name', 'labels.id']);
    expect(rows.filter((row) => row[0] === 'release_title')).toHaveLength(1);
    expect(rows[1].slice(1)).toEqual(['', '']);
    expect(rows[rows.length - 1][2]).toMatch(UUID);
    for (const row of rows) expect(row).toHaveLength(3);
  });

  it('json keeps the PostgREST shape exactly', async () => {
    const r = await catalog(['releases', 'list', '--select', 'release_title,labels(name)', '--where', 'label_id=not.is.null', '--limit', '1', '-o', 'json'], { env });
    const [row] = JSON.parse(r.stdout) as Array<Record<string, unknown>>;
    expect(Object.keys(row)).toEqual(['release_title', 'labels']);
    expect(row.labels).toEqual({ name: expect.any(String) });
  });

  it.skipIf(!hasScript)('in a table on a terminal: a labels.name column', async () => {
    const r = await catalogInTerminal(['releases', 'list', '--select', 'release_title,labels(name)', '--where', 'label_id=not.is.null', '--limit', '3'], { env, cols: 100 });
    expect(r.code).toBe(0);
    const lines = r.stdout.replace(ANSI, '').split('\n').filter(Boolean);
    expect(lines[0]).toMatch(/^release_title\s+labels\.name$/);
    expect(r.stdout).not.toContain('{"name"');
  });
});

describe('get takes a unique id prefix', () => {
  it('finds a record by its first 8 hex digits', async () => {
    const added = await catalog(['labels', 'add', 'name=Prefix Test Records', '-o', 'json'], { env });
    const id = JSON.parse(added.stdout).id as string;
    const r = await catalog(['labels', 'get', id.slice(0, 8), '-o', 'json'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ id, name: 'Prefix Test Records' });
    // Upper case and the dashes of a longer prefix are fine too.
    const longer = await catalog(['labels', 'get', id.slice(0, 13).toUpperCase(), '-o', 'json'], { env });
    expect(JSON.parse(longer.stdout).id).toBe(id);
  });

  it('update and remove take the same prefixes, a trailing … too (issue 27)', async () => {
    const added = await catalog(['labels', 'add', 'name=Short Id Records', '-o', 'json'], { env });
    const id = JSON.parse(added.stdout).id as string;
    const up = await catalog(['labels', 'update', `${id.slice(0, 13)}…`, 'name=Short Id Renamed', '-o', 'json'], { env });
    expect(up.code, up.stderr).toBe(0);
    expect(JSON.parse(up.stdout)).toMatchObject({ id, name: 'Short Id Renamed' });
    const ambiguous = await catalog(['labels', 'remove', '1ab00001', '--yes'], { env });
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stderr).toMatch(/ambiguous id prefix 1ab00001/);
    const rm = await catalog(['labels', 'remove', id.slice(0, 8), '--yes'], { env });
    expect([rm.code, rm.stderr.trim()]).toEqual([0, 'Removed 1 label']);
    expect((await catalog(['labels', 'get', id], { env })).code).toBe(1);
  });

  it('exits 2 naming two matches when the prefix is ambiguous, 1 when nothing matches', async () => {
    const r = await catalog(['labels', 'get', '1ab00001'], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/ambiguous id prefix 1ab00001, matches 1ab00001-[0-9a-f-]{27} and 1ab00001-[0-9a-f-]{27}/);
    expect(r.stdout).toBe('');
    const none = await catalog(['labels', 'get', '00000000'], { env });
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/no label in labels has an id starting 00000000/);
  });

  it('refuses fewer than 8 hex digits, saying a prefix would do', async () => {
    const r = await catalog(['labels', 'get', '1ab0000'], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/unique prefix of at least 8 hex digits/);
  });

  it('says so in --help', async () => {
    const r = await catalog(['labels', 'get', '--help']);
    expect(r.stdout).toMatch(/prefix/);
  });
});

describe.skipIf(!hasScript)('a terminal too narrow for whole ids', () => {
  it('abbreviates ids to a prefix that get accepts', async () => {
    const r = await catalogInTerminal(['releases', 'list', '--select', 'id,release_title,labels(name)', '--order', 'id', '--limit', '4'], { env, cols: 60 });
    expect(r.code).toBe(0);
    const text = r.stdout.replace(ANSI, '');
    expect(text).not.toMatch(UUID);
    const short = [...text.matchAll(/^([0-9a-f]{8}[0-9a-f-]*)…/gm)].map((m) => m[1]);
    expect(short).toHaveLength(4);
    for (const line of text.split('\n')) expect(line.length).toBeLessThanOrEqual(60);
    const got = await catalog(['releases', 'get', short[0], '-o', 'json'], { env });
    expect(got.code, got.stderr).toBe(0);
    expect(JSON.parse(got.stdout).id.startsWith(short[0])).toBe(true);
  });

  it('keeps whole ids when they fit, when piped, and in every other format', async () => {
    const wide = await catalogInTerminal(['releases', 'list', '--select', 'id,release_title', '--limit', '2'], { env, cols: 160 });
    expect(wide.stdout).toMatch(UUID);
    const piped = await catalog(['releases', 'list', '--select', 'id,release_title', '--limit', '2', '-o', 'table'], { env });
    expect(piped.stdout.split('\n')[1]).toMatch(new RegExp(`^${UUID.source}`));
    const csv = await catalogInTerminal(['releases', 'list', '--select', 'id,release_title', '--limit', '2', '-o', 'csv'], { env, cols: 30 });
    expect(csv.stdout).toMatch(UUID);
  });
});
