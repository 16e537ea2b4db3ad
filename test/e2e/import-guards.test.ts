import { spawn } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/stores.js';
import { BIN, ROOT, catalog, ensureBuilt, hasOpen, startServe, type Serve } from './support.js';
import { PATIENCE_MS } from '../support/patience.js';

/** A plain web server (not the service): answers every request with an HTML page, or never. */
function plainServer(answer: boolean): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((_req, res) => {
    if (!answer) return; // accepts, reads, never answers
    res.writeHead(200, { 'Content-Type': 'text/html' });
    res.end('<html><body><h1>Welcome to nginx!</h1></body></html>');
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      resolve({ url: `http://127.0.0.1:${port}`, close: () => new Promise((r) => (server.closeAllConnections(), server.close(() => r()))) });
    }),
  );
}

/** Spawns bin/catalog; `exited` resolves with the exit code (or the signal that ended it). */
function start(args: string[], env: Record<string, string | undefined> = {}) {
  const proc = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: { ...process.env, CATALOG_URL: undefined, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  proc.stderr.on('data', (c) => (stderr += c));
  const exited = new Promise<number | string>((r) => proc.on('exit', (code, signal) => r(code ?? signal ?? -1)));
  return { proc, exited, stderr: () => stderr };
}

/** Waits until `ready()` holds (polling), for at most `ms`. */
async function until(ready: () => boolean, ms = PATIENCE_MS): Promise<void> {
  const end = Date.now() + ms;
  while (!ready()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('import guards, end to end (bin/catalog)', () => {
  let serve: Serve;
  let dir: string;
  beforeAll(async () => {
    ensureBuilt();
    dir = tempDir('guards-');
    serve = await startServe(['--data', join(dir, 'data')]);
  });
  afterAll(async () => {
    await serve?.stop();
  });
  const run = (args: string[], env?: Record<string, string | undefined>) => catalog(['--url', serve.url, ...args], { env });

  it('importing a directory says so and exits 2', async () => {
    mkdirSync(join(dir, 'labels-dir.csv'));
    const r = await run(['labels', 'import', join(dir, 'labels-dir.csv')]);
    expect(r.stderr).toMatch(/labels-dir\.csv is a directory: name a file to import/);
    expect(r.stderr).not.toMatch(/EISDIR/);
    expect(r.code).toBe(2);
  });

  it('a 20 MB header fails at once, showing only its start', async () => {
    const big = join(dir, 'nul.csv');
    writeFileSync(big, Buffer.alloc(20 * 1024 * 1024));
    const r = await run(['labels', 'import', big]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/the header \(line 1\) is longer than 1 MiB.*it starts "\\u0000\\u0000/);
    expect(r.stderr.length).toBeLessThan(2000);
  });

  it('a line over 64 MiB (/dev/zero as NDJSON) is refused instead of growing memory, as bad input (exit 2)', async () => {
    const r = await run(['tracks', 'import', '/dev/zero', '--format', 'ndjson']);
    expect(r.stderr).toMatch(/\/dev\/zero: the line starting at line 1 is longer than 64 MiB/);
    // issue 24: a record over the limit is bad input, exit 2 (it was 1)
    expect(r.code).toBe(2);
  });

  it('--dry-run reports an --on-conflict key with no unique constraint (42P10) as the real run meets it', async () => {
    const input = join(dir, 'tracks.csv');
    writeFileSync(input, 'isrc_code,track_title\nGBAAA2400001,One\nGBAAA2400002,Two\n');
    const r = await run(['tracks', 'import', input, '--on-conflict', 'isrc_code', '--dry-run']);
    expect(r.stderr).toMatch(/no unique or exclusion constraint matching the ON CONFLICT specification \(42P10/);
    expect(r.code).toBe(1);
    const list = await run(['tracks', 'list', '-o', 'json']);
    expect(JSON.parse(list.stdout)).toEqual([]);
  });

  it('a real CSV import with --on-conflict on a column with no unique key fails with 42P10 (exit 1) and writes nothing, twice', async () => {
    const input = join(dir, 'tracks-upsert.csv');
    writeFileSync(input, 'isrc_code,track_title\nGBAAA2400011,One\nGBAAA2400012,Two\n');
    for (let i = 0; i < 2; i++) {
      const r = await run(['tracks', 'import', input, '--on-conflict', 'isrc_code', '--rejects', join(dir, `rej-${i}.csv`)]);
      expect(r.stderr).toMatch(/42P10/);
      expect(r.stderr).not.toMatch(/inserted/);
      expect(r.code).toBe(1);
    }
    const list = await run(['tracks', 'list', '--where', 'isrc_code~GBAAA24000*', '-o', 'json']);
    expect(JSON.parse(list.stdout)).toEqual([]);
  });

  it('SIGTERM while waiting on a FIFO with no writer stops the import (exit 130)', async () => {
    const fifo = join(dir, 'waiting.csv');
    execFileSync('mkfifo', [fifo]);
    const p = start(['--url', serve.url, 'labels', 'import', fifo, '--on-conflict', 'id']);
    await until(() => hasOpen(p.proc.pid!, fifo));
    p.proc.kill('SIGTERM');
    expect(await p.exited).toBe(130);
    expect(p.stderr()).toMatch(/interrupted before any row was read: nothing was written/);
  });

  it('SIGINT during the load stops at once with a checkpoint that --resume continues from', async () => {
    const input = join(dir, 'many.csv');
    const rows = ['id,name'];
    for (let i = 0; i < 60_000; i++) rows.push(`1ab00000-0000-4000-8000-${String(i).padStart(12, '0')},Label ${i}`);
    writeFileSync(input, `${rows.join('\n')}\n`);
    const checkpoint = `${input}.checkpoint.json`;
    const p = start(['--url', serve.url, 'labels', 'import', input, '--batch-size', '50', '--concurrency', '1']);
    await until(() => existsSync(checkpoint) || p.proc.exitCode !== null);
    p.proc.kill('SIGINT');
    expect(await p.exited).toBe(130);
    const cp = JSON.parse(readFileSync(checkpoint, 'utf8')) as { committed: number };
    expect(cp.committed).toBeGreaterThan(0);
    expect(cp.committed).toBeLessThan(60_000);
    const resumed = await run(['labels', 'import', input, '--resume']);
    expect(resumed.code).toBe(0);
    expect(existsSync(checkpoint)).toBe(false);
  });

  describe('a CATALOG_URL that is not the service', () => {
    it('an HTML page: says the URL did not answer like a PostgREST service, exit 1', async () => {
      const plain = await plainServer(true);
      const labels = join(dir, 'labels.csv');
      writeFileSync(labels, 'name\nWarp\n');
      try {
        for (const args of [['labels', 'list'], ['labels', 'import', labels]]) {
          const r = await catalog(args, { env: { CATALOG_URL: plain.url } });
          expect(r.stderr).toContain(`${plain.url}/`);
          expect(r.stderr).toMatch(/did not answer like a PostgREST service \(HTTP 200, content type text\/html\)/);
          expect(r.stderr).not.toMatch(/Welcome to nginx|Unexpected token/);
          expect(r.code).toBe(1);
        }
      } finally {
        await plain.close();
      }
    });

    it('a server that never answers: the request times out (--timeout, CATALOG_TIMEOUT) with a clear message', async () => {
      const silent = await plainServer(false);
      try {
        const flag = await catalog(['--timeout', '1', 'labels', 'list'], { env: { CATALOG_URL: silent.url } });
        expect(flag.stderr).toContain(`no answer from ${silent.url} within 1 s`);
        expect(flag.stderr).toMatch(/--timeout/);
        expect(flag.code).toBe(1);
        const env = await catalog(['labels', 'list'], { env: { CATALOG_URL: silent.url, CATALOG_TIMEOUT: '0.5' } });
        expect(env.stderr).toContain('within 0.5 s');
        expect(env.code).toBe(1);
        const bad = await catalog(['--timeout', 'soon', 'labels', 'list'], { env: { CATALOG_URL: silent.url } });
        expect(bad.stderr).toMatch(/--timeout needs a number of seconds/);
        expect(bad.code).toBe(2);
      } finally {
        await silent.close();
      }
    });
  });
});
