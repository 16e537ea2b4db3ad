import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../support/stores.js';
import { BIN, catalog, ensureBuilt, startServe } from './support.js';
import { eventually } from '../support/patience.js';

ensureBuilt();

/** The request log (issue 28 item 3): one line per request at --log-level info, JSON lines with --log-format json. */
describe('catalog serve --log-level / --log-format', () => {
  it('info + json: every stderr line one JSON object; a request line has method, path with its query, status, ms, bytes and role', async () => {
    const serve = await startServe(['--data', tempDir('log-'), '--log-level', 'info', '--log-format', 'json']);
    try {
      expect((await fetch(`${serve.url}/labels?select=name`)).status).toBe(200);
      expect((await fetch(`${serve.url}/nope`)).status).toBe(404);
    } finally {
      await serve.stop();
    }
    // issue 38 item 5: "Serving …" and "SIGTERM: stopping" too, not only the request lines
    const lines = serve.stderr().trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines[0]).toMatchObject({ level: 'info', message: expect.stringMatching(/^Serving the catalog at http:/), url: serve.url });
    expect(lines.at(-1)).toMatchObject({ level: 'info', message: 'SIGTERM: stopping' });
    const requests = lines.filter((l) => l.message === 'request');
    expect(requests.map((l) => [l.level, l.method, l.path, l.status, l.role])).toEqual([
      ['info', 'GET', '/labels?select=name', 200, 'admin'],
      ['info', 'GET', '/nope', 404, 'admin'],
    ]);
    for (const l of lines) expect(Number.isNaN(Date.parse(l.time as string))).toBe(false);
    for (const l of requests) {
      expect(typeof l.ms).toBe('number');
      expect(l.bytes as number).toBeGreaterThan(0);
    }
  });

  it('json: the lines of a start that waits for the database (its retries) and is stopped are JSON too', async () => {
    const proc = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--log-format', 'json', '--database-url', 'postgres://nobody@127.0.0.1:1/none'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    proc.stderr.on('data', (c) => (err += c));
    const exited = new Promise<number | null>((r) => proc.on('exit', (code) => r(code)));
    await eventually(() => /trying again in 1 s/.test(err));
    proc.kill('SIGTERM');
    expect(await exited).toBe(0);
    const lines = err.trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.slice(0, 2)).toEqual([
      expect.objectContaining({ level: 'info', message: expect.stringMatching(/^the database cannot be reached .*: trying again in 0.5 s$/), retryInSeconds: 0.5 }),
      expect.objectContaining({ level: 'info', message: expect.stringMatching(/trying again in 1 s$/), retryInSeconds: 1 }),
    ]);
    expect(lines.at(-1)).toMatchObject({ message: 'SIGTERM: stopping' });
  });

  it('the default level writes no request lines; a level or format it does not know is exit 2', async () => {
    const serve = await startServe(['--data', tempDir('log-')]);
    try {
      expect((await fetch(`${serve.url}/labels`)).status).toBe(200);
    } finally {
      await serve.stop();
    }
    expect(serve.stderr()).not.toMatch(/GET \/labels/);
    const bad = await catalog(['serve', '--log-level', 'debug', '--data', tempDir('log-')]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--log-level must be one of crit, error, warn, info');
    const badFormat = await catalog(['serve', '--log-format', 'xml', '--data', tempDir('log-')]);
    expect(badFormat.code).toBe(2);
  });
});
