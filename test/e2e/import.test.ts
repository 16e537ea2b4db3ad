import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseCsv } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/stores.js';
import { BIN, ROOT, catalog, ensureBuilt, startServe, type Serve } from './support.js';
import { PATIENCE_MS } from '../support/patience.js';

const uuid = (prefix: string, n: number) => `${prefix}-0000-4000-8000-${String(n).padStart(12, '0')}`;

/** Text that breaks naive CSV handling, one value per row. */
const EDGE = [
  'Smith, Jones & Co.',
  'The "Quiet" Room',
  '"fully quoted"',
  'two\nlines',
  'crlf\r\ninside',
  '  leading and trailing  ',
  '0042',
  '東京レコード',
  'Ελληνικά',
  'العربية',
  'NULL',
  'emoji 🎵 and tab\there',
  ',',
  '""',
  'back\\slash',
];

/** --where flags selecting the uuids made by uuid(prefix, n). */
const between = (prefix: string) => ['--where', `id>=${prefix}-0000-0000-0000-000000000000`, '--where', `id<=${prefix}-ffff-ffff-ffff-ffffffffffff`];

function csvCell(s: string): string {
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

describe('import/export end to end (bin/catalog against catalog serve)', () => {
  let serve: Serve;
  let dir: string;
  const run = (args: string[], input?: string) => catalog(['--url', serve.url, ...args], { input });

  beforeAll(async () => {
    ensureBuilt();
    dir = tempDir('e2e-import-');
    serve = await startServe(['--data', join(dir, 'data')]);
  });
  afterAll(async () => {
    await serve?.stop();
  });

  it('a CSV with quoting edge cases round-trips exactly through import and export', async () => {
    const input = join(dir, 'labels.csv');
    const rows = EDGE.map((name, i) => [uuid('1ab0e2e0', i + 1), name]);
    writeFileSync(input, `id,name\r\n${rows.map((r) => r.map(csvCell).join(',')).join('\r\n')}\r\n`);
    const imp = await run(['labels', 'import', input]);
    expect(imp.stderr).toMatch(/15 inserted/);
    expect(imp.code).toBe(0);

    const out = join(dir, 'labels-out.csv');
    // only this test's labels: other tests (seed) add labels to the same catalog
    const exp = await run(['labels', 'export', out, '--select', 'id,name', ...between('1ab0e2e0')]);
    expect(exp.code).toBe(0);
    const back = parseCsv(readFileSync(out), { columns: true }) as Array<{ id: string; name: string }>;
    expect(back.map((r) => [r.id, r.name])).toEqual(rows);

    const again = await run(['labels', 'import', input]);
    expect(again.stderr).toMatch(/0 inserted, 0 updated, 15 unchanged/);
  });

  it('seed is idempotent', async () => {
    const first = await run(['seed']);
    expect(first.code).toBe(0);
    const second = await run(['seed']);
    expect(second.code).toBe(0);
    expect(second.stderr).not.toMatch(/[1-9]\d* (inserted|updated)/);
  });

  it('an import killed mid-way (SIGKILL) and resumed ends with exactly the file’s rows', async () => {
    const n = 20_000;
    const input = join(dir, 'artists.csv');
    const lines = ['id,stage_name,biography'];
    for (let i = 1; i <= n; i++) lines.push(`${uuid('a0e2e000', i)},"Artist ${i}, the ""one""",${'bio '.repeat(10)}`);
    writeFileSync(input, `${lines.join('\n')}\n`);
    const checkpoint = `${input}.checkpoint.json`;

    const child = spawn(process.execPath, [BIN, '--url', serve.url, 'artists', 'import', input, '--batch-size', '200', '--concurrency', '1'], {
      cwd: ROOT,
      stdio: 'ignore',
    });
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    // wait until some batches are committed, then kill without warning
    const deadline = Date.now() + PATIENCE_MS;
    while (!existsSync(checkpoint) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(existsSync(checkpoint)).toBe(true);
    child.kill('SIGKILL');
    await exited;
    const committed = JSON.parse(readFileSync(checkpoint, 'utf8')).committed as number;
    expect(committed).toBeGreaterThan(0);
    expect(committed).toBeLessThan(n);

    const resumed = await run(['artists', 'import', input, '--resume', '--summary', join(dir, 's.json')]);
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).toMatch(/resuming/);
    const summary = JSON.parse(readFileSync(join(dir, 's.json'), 'utf8'));
    expect(summary.resumedFrom).toBe(committed);
    expect(existsSync(checkpoint)).toBe(false);
    const count = await run(['artists', 'list', ...between('a0e2e000'), '--count', '--limit', '0']);
    expect(count.stderr).toMatch(new RegExp(`0 of ${n} artists`));
  });

  it('Ctrl-C writes the checkpoint and says how to resume', async () => {
    const input = join(dir, 'tracks.csv');
    const lines = ['id,track_title'];
    for (let i = 1; i <= 20_000; i++) lines.push(`${uuid('70e2e000', i)},Track ${i}`);
    writeFileSync(input, `${lines.join('\n')}\n`);
    const checkpoint = `${input}.checkpoint.json`;
    const child = spawn(process.execPath, [BIN, '--url', serve.url, 'tracks', 'import', input, '--batch-size', '100', '--concurrency', '1'], { cwd: ROOT });
    let stderr = '';
    child.stderr.on('data', (c) => (stderr += c));
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    const deadline = Date.now() + PATIENCE_MS;
    while (!existsSync(checkpoint) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    child.kill('SIGINT');
    const code = await exited;
    expect(code).toBe(130);
    expect(stderr).toMatch(/interrupted: every row before line \d+ is committed; run the same command with --resume/);
    // issue 27: the summary counts the rows this run got through, not the whole input
    const done = /([\d,]+) of 20,000 rows in/.exec(stderr);
    expect(done, stderr).not.toBeNull();
    expect(Number(done![1].replace(/,/g, ''))).toBeLessThan(20_000);
    expect(existsSync(checkpoint)).toBe(true);
    const resumed = await run(['tracks', 'import', input, '--resume']);
    expect(resumed.code).toBe(0);
    const count = await run(['tracks', 'list', ...between('70e2e000'), '--count', '--limit', '0']);
    expect(count.stderr).toMatch(/0 of 20000 tracks/);
  });
});

describe('a server with a small body limit (catalog serve --max-body)', () => {
  it('shrinks the batches and the import still completes', async () => {
    ensureBuilt();
    const dir = tempDir('e2e-413-');
    const serve = await startServe(['--data', join(dir, 'data'), '--max-body', '20000']);
    try {
      const input = join(dir, 'artists.csv');
      const lines = ['id,stage_name,biography'];
      for (let i = 1; i <= 500; i++) lines.push(`${uuid('a0e2e413', i)},A${i},${'x'.repeat(300)}`);
      writeFileSync(input, lines.join('\n'));
      const r = await catalog(['--url', serve.url, 'artists', 'import', input, '--summary', join(dir, 's.json')]);
      expect(r.code).toBe(0);
      expect(r.stderr).toMatch(/batches shrink/);
      const s = JSON.parse(readFileSync(join(dir, 's.json'), 'utf8'));
      expect(s).toMatchObject({ inserted: 500, rejected: 0 });
      expect(s.batchBytes).toBeLessThanOrEqual(20000);
    } finally {
      await serve.stop();
    }
  });
});
