import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/stores.js';
import { catalog, catalogInTerminal, ensureBuilt, type Serve, startServe } from './support.js';

let serve: Serve;

beforeAll(async () => {
  ensureBuilt();
  serve = await startServe(['--data', tempDir('tty-')]);
  const rows = Array.from({ length: 5 }, (_, i) => ({ stage_name: `Artist ${i} ${'with a very long biography '.repeat(i)}`, biography: 'x'.repeat(300), city: '東京' }));
  const r = await catalog(['--url', serve.url, 'artists', 'add', '--json', JSON.stringify(rows)]);
  expect(r.code).toBe(0);
  // 45 labels, a page and a half: the first-page and the pager tests both list them
  const labels = Array.from({ length: 45 }, (_, i) => ({ name: `Page label ${String(i).padStart(2, '0')}` }));
  expect((await catalog(['--url', serve.url, 'labels', 'add', '--json', JSON.stringify(labels)])).code).toBe(0);
});

afterAll(async () => {
  await serve.stop();
});

const ANSI = /\x1b\[[0-9;]*m/g;

// util-linux `script` gives the command a pseudo-terminal; without it these tests skip, visibly.
const hasScript = spawnSync('script', ['--version']).status === 0;

describe.skipIf(!hasScript)('on a terminal (script)', () => {
  it('lists as an aligned table that fits the width, with "N of M" and a hidden-fields note', async () => {
    const r = await catalogInTerminal(['--url', serve.url, 'artists', 'list', '--order', 'stage_name', '--limit', '3', '--count'], { cols: 80 });
    expect(r.code).toBe(0);
    const lines = r.stdout.replace(ANSI, '').split('\n').filter(Boolean);
    // Rows start with their id, whole or (the table does not fit 80 columns) abbreviated to `3f2a9c1e…`.
    const table = lines.filter((l) => /^(id|[0-9a-f]{8}[-…])/.test(l));
    expect(table[0]).toMatch(/^id\s+stage_name\s+/);
    expect(table).toHaveLength(4);
    for (const l of table) expect(l.length).toBeLessThanOrEqual(80);
    expect(r.stdout).toContain('…');
    expect(r.stdout).toMatch(/3 of 5 artists/);
    expect(r.stdout).toMatch(/more fields not shown/);
  });

  it('shows timestamps as relative times and uses colour unless NO_COLOR', async () => {
    const r = await catalogInTerminal(['--url', serve.url, 'artists', 'list', '--select', 'stage_name,created', '--limit', '1']);
    expect(r.stdout).toMatch(/just now|minutes? ago/);
    expect(r.stdout).toContain('\x1b[1m');
    const plain = await catalogInTerminal(['--url', serve.url, 'artists', 'list', '--select', 'stage_name', '--limit', '1'], { env: { NO_COLOR: '1' } });
    expect(plain.stdout).not.toMatch(ANSI);
  });

  it('prints JSON, not a table, when stdout is piped', async () => {
    const r = await catalog(['--url', serve.url, 'artists', 'list', '--limit', '2']);
    expect(JSON.parse(r.stdout)).toHaveLength(2);
  });

  it('without --limit shows a first page at once, with a planned count and how to see more (issue 27)', async () => {
    const r = await catalogInTerminal(['--url', serve.url, 'labels', 'list', '--select', 'name', '--order', 'name'], { env: { NO_COLOR: '1' } });
    expect(r.code).toBe(0);
    const rows = r.stdout.split('\n').filter((l) => l.startsWith('Page label'));
    expect(rows).toHaveLength(30);
    expect(r.stdout).toMatch(/30 of about [\d,]+ labels — more with --limit N, or --all/);
    // a short terminal gets what fits
    const short = await catalogInTerminal(['--url', serve.url, 'labels', 'list', '--select', 'name'], { env: { NO_COLOR: '1', LINES: '12' }, rows: 12 });
    expect(short.stdout.split('\n').filter((l) => l.startsWith('Page label'))).toHaveLength(8);
  });

  it('list --all on a terminal goes through $PAGER, drawn for the terminal (issue 27)', async () => {
    const file = join(tempDir('pager-'), 'paged.txt');
    const r = await catalogInTerminal(['--url', serve.url, 'labels', 'list', '--all', '--select', 'name', '--order', 'name'], { env: { PAGER: `cat > '${file}'`, NO_COLOR: '1' } });
    expect(r.code).toBe(0);
    const paged = readFileSync(file, 'utf8').split('\n');
    expect(paged[0]).toBe('name');
    expect(paged.filter((l) => l.startsWith('Page label'))).toHaveLength(45);
    expect(r.stdout).not.toContain('Page label');
  });

  it('asks before removing and removes on yes', async () => {
    const added = await catalog(['--url', serve.url, 'labels', 'add', 'name=Doomed']);
    const id = JSON.parse(added.stdout).id as string;
    const r = await catalogInTerminal(['--url', serve.url, 'labels', 'remove', id], { input: 'y\r', inputAfter: /Remove 1 label/ });
    expect(r.stdout).toMatch(/Remove 1 label/);
    expect(r.stdout).toMatch(/Removed 1 label/);
    expect(r.code).toBe(0);
    expect((await catalog(['--url', serve.url, 'labels', 'get', id])).code).toBe(1);
  });
});
