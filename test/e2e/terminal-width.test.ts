import { spawnSync } from 'node:child_process';
import stringWidth from 'string-width';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/stores.js';
import { WIDTH_CASES } from '../support/width-cases.js';
import { catalog, catalogInTerminal, ensureBuilt, type Serve, startServe } from './support.js';

// Issue 37 item 3: a table of emoji, ZWJ sequences, skin tones, CJK and Indic text lines up in a
// real terminal: `catalog artists list` against `catalog serve`, in a pseudo-terminal 80 and 120 wide.

const hasScript = spawnSync('script', ['--version']).status === 0;
if (!hasScript) console.warn('util-linux `script` is missing: the terminal-width tests are SKIPPED (they need a pseudo-terminal)');

let serve: Serve;
const CITIES = ['東京', 'नई दिल्ली', '서울', 'Zürich', 'मुंबई', 'กรุงเทพ'];

beforeAll(async () => {
  ensureBuilt();
  serve = await startServe(['--data', tempDir('term-width-')]);
  const artists = WIDTH_CASES.map((s, i) => ({ stage_name: `${s} ${'Band '.repeat(i % 10)}${s}`, city: CITIES[i % CITIES.length] }));
  const r = await catalog(['--url', serve.url, 'artists', 'add', '--json', JSON.stringify(artists)]);
  expect(r.code, r.stderr).toBe(0);
});

afterAll(async () => {
  await serve?.stop();
});

describe.skipIf(!hasScript)('a table on a terminal', () => {
  it.each([80, 120])('lines up every column of every line at %i columns', async (cols) => {
    const r = await catalogInTerminal(['--url', serve.url, 'artists', 'list', '--select', 'stage_name,city,id', '--order', 'stage_name', '--limit', '50'], { cols, env: { NO_COLOR: '1' } });
    expect(r.code, r.stdout).toBe(0);
    // the table: the header and one line per artist, each ending in its id (whole, or a prefix and …)
    const lines = r.stdout.split('\n').filter((l) => /(^stage_name\s)|\s[0-9a-f]{8}[0-9a-f-]*…?$/.test(l));
    expect(lines).toHaveLength(WIDTH_CASES.length + 1);
    // Every line has one width up to its last column (the last is not padded), and none is wider than the terminal.
    const beforeId = lines.map((l) => stringWidth(l.replace(/(id|[0-9a-f]{8}[0-9a-f-]*…?)$/, '')));
    expect(new Set(beforeId).size, lines.join('\n')).toBe(1);
    for (const l of lines) expect(stringWidth(l)).toBeLessThanOrEqual(cols);
    // the city column starts at one cell on every line
    const cityAt = lines.slice(1).map((l) => stringWidth(l.slice(0, Math.max(...CITIES.map((c) => l.lastIndexOf(c))))));
    expect(new Set(cityAt).size, lines.join('\n')).toBe(1);
    expect(stringWidth(lines[0].slice(0, lines[0].indexOf('city')))).toBe(cityAt[0]);
    if (cols === 80) expect(r.stdout).toContain('…');
  });
});
