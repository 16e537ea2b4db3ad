import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { PG_URL } from '../support/stores.js';

const BIN = new URL('../../bin/catalog.js', import.meta.url).pathname;

describe.skipIf(!PG_URL)(`catalog serve --workers${PG_URL ? '' : ' (SKIPPED: set CATALOG_TEST_DATABASE_URL)'}`, () => {
  it('serves one PostgreSQL from two worker processes and stops all of them on SIGTERM with exit 0', async () => {
    const schemaUrl = PG_URL!;
    const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--workers', '2', '--database-url', schemaUrl], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setInterval(() => {
        const m = /Serving the catalog at (\S+) with 2 workers/.exec(stderr);
        if (m) {
          clearInterval(timer);
          resolve(m[1]);
        }
      }, 50);
      child.once('exit', (code) => {
        clearInterval(timer);
        reject(new Error(`serve exited ${code}: ${stderr}`));
      });
    });
    const statuses = await Promise.all(Array.from({ length: 8 }, () => fetch(`${url}/labels?limit=1`).then((r) => r.status)));
    expect(statuses).toEqual(Array(8).fill(200));
    child.kill('SIGTERM');
    const [code] = await once(child, 'exit');
    expect(code).toBe(0);
  });

  it('refuses --workers without --database-url (exit 2)', async () => {
    const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--workers', '2'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const [code] = await once(child, 'exit');
    expect(code).toBe(2);
    expect(stderr).toContain('--workers needs --database-url');
  });
});
