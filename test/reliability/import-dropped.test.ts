import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, ROOT, ensureBuilt, serveBackends, startServe, type Serve } from '../e2e/support.js';
import { tempDir } from '../support/stores.js';
import { eventually, startProxy, type Proxy } from './support.js';

/**
 * The connection to the service dropped for good in the middle of `catalog tracks import` (a TCP
 * proxy in front of the service resets every connection and refuses new ones: a real fault on the
 * wire, the service untouched). The import gives up with the connection's error and says how to go
 * on: every row before line N is committed, run the same command with --resume, where the
 * checkpoint is. Once the connection is back, that command finishes with exactly the file's rows.
 */

const ROWS = 6_000;
const uuid = (n: number) => `d2090000-0000-4000-8000-${String(n).padStart(12, '0')}`;

for (const backend of serveBackends('dropped')) {
  describe.skipIf(backend.skip)(`an import whose connection drops (${backend.name}${backend.skip ? ', SKIPPED: set CATALOG_TEST_DATABASE_URL' : ''})`, () => {
    let serve: Serve | null = null;
    let proxy: Proxy | null = null;
    afterAll(async () => {
      await proxy?.close();
      await serve?.stop();
      await backend.cleanup();
    });

    it('stops naming --resume and its checkpoint, and --resume finishes the file', async () => {
      ensureBuilt();
      serve = await startServe(backend.args);
      proxy = await startProxy('127.0.0.1', Number(new URL(serve.url).port));
      const url = proxy.via(serve.url).replace(/\/$/, '');
      const input = join(tempDir('dropped-input-'), 'tracks.csv');
      const lines = Array.from({ length: ROWS }, (_, i) => `${uuid(i + 1)},Track ${i + 1}`);
      writeFileSync(input, `id,track_title\n${lines.join('\n')}\n`);
      const checkpoint = `${input}.checkpoint.json`;
      const committed = () => (existsSync(checkpoint) ? (JSON.parse(readFileSync(checkpoint, 'utf8')).committed as number) : 0);

      const run = (extra: string[]) => {
        const child = spawn(process.execPath, [BIN, '--url', url, 'tracks', 'import', input, '--batch-size', '20', '--concurrency', '1', ...extra], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
        let stderr = '';
        child.stderr.on('data', (c) => (stderr += c));
        const exited = new Promise<number>((resolve) => child.on('close', (code) => resolve(code ?? -1)));
        return { exited, stderr: () => stderr };
      };

      const first = run([]);
      let code: number | null = null;
      void first.exited.then((c) => (code = c));
      // cut once some rows are committed, while the import still runs
      expect(await eventually(() => code !== null || committed() >= 1_000, 10)).toBe(true);
      expect(code).toBeNull();
      proxy.cut();
      expect(await first.exited).toBe(1);
      const stderr = first.stderr();
      const m = /hint: every row before line (\d+) is committed; run the same command with --resume to continue \(checkpoint: (.+)\)/.exec(stderr);
      expect(m, stderr).not.toBeNull();
      expect(m![2]).toBe(checkpoint);
      const line = Number(m![1]);
      expect(line).toBe(committed() + 2); // the header is line 1
      expect(line).toBeLessThan(ROWS + 1);

      proxy.restore();
      const again = run(['--resume']);
      expect(await again.exited, again.stderr()).toBe(0);
      expect(again.stderr()).toContain(`resumed at record ${(line - 1).toLocaleString('en-US')}`);
      expect(existsSync(checkpoint)).toBe(false);

      const res = await fetch(`${serve.url}/tracks?select=id,track_title&order=id`, { headers: { Prefer: 'count=exact' } });
      expect(res.headers.get('content-range')).toBe(`0-${ROWS - 1}/${ROWS}`);
      expect(await res.json()).toEqual(lines.map((l) => ({ id: l.slice(0, 36), track_title: l.slice(37) })));
    });
  });
}
