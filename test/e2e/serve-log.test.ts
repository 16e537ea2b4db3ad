import { describe, expect, it } from 'vitest';
import { tempDir } from '../support/stores.js';
import { catalog, ensureBuilt, startServe } from './support.js';

ensureBuilt();

/** The request log (issue 28 item 3): one line per request at --log-level info, JSON lines with --log-format json. */
describe('catalog serve --log-level / --log-format', () => {
  it('info + json: one JSON line per request with method, path, status, ms and bytes', async () => {
    const serve = await startServe(['--data', tempDir('log-'), '--log-level', 'info', '--log-format', 'json']);
    try {
      expect((await fetch(`${serve.url}/labels?select=name`)).status).toBe(200);
      expect((await fetch(`${serve.url}/nope`)).status).toBe(404);
    } finally {
      await serve.stop();
    }
    const lines = serve.stderr().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => [l.level, l.method, l.path, l.status])).toEqual([
      ['info', 'GET', '/labels', 200],
      ['info', 'GET', '/nope', 404],
    ]);
    for (const l of lines) {
      expect(typeof l.ms).toBe('number');
      expect(l.bytes as number).toBeGreaterThan(0);
      expect(Number.isNaN(Date.parse(l.time as string))).toBe(false);
    }
  }, 60_000);

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
  }, 60_000);
});
