import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import pg from 'pg';
import { PG_URL } from '../support/stores.js';
import { eventually } from '../support/patience.js';

const BIN = new URL('../../bin/catalog.js', import.meta.url).pathname;

describe.skipIf(!PG_URL)(`catalog serve --workers${PG_URL ? '' : ' (SKIPPED: set CATALOG_TEST_DATABASE_URL)'}`, () => {
  it('serves one PostgreSQL from two worker processes and stops all of them on SIGTERM with exit 0', async () => {
    const schema = `catalog_cluster_${process.pid}`;
    const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--workers', '2', '--database-url', PG_URL!, '--db-schema', schema], {
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
    try {
      const created = await fetch(`${url}/labels`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"name":"Cluster"}' });
      expect(created.status).toBe(201);
      const bodies = await Promise.all(Array.from({ length: 8 }, () => fetch(`${url}/labels?select=name`).then((r) => r.json())));
      expect(bodies).toEqual(Array(8).fill([{ name: 'Cluster' }]));
    } finally {
      child.kill('SIGTERM');
      const [code] = await once(child, 'exit');
      expect(code).toBe(0);
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      await client.query(`drop schema if exists ${schema} cascade`);
      await client.end();
    }
  });

  it('a worker killed with SIGKILL is replaced and the replacement logged; the service keeps answering', async () => {
    const schema = `catalog_cluster_respawn_${process.pid}`;
    const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--workers', '2', '--database-url', PG_URL!, '--db-schema', schema], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const until = async (check: () => boolean) => eventually(check);
    /** The primary's worker processes. */
    const workers = () => {
      try {
        return execFileSync('pgrep', ['-P', String(child.pid)], { encoding: 'utf8' }).trim().split('\n').filter(Boolean).map(Number);
      } catch {
        return [];
      }
    };
    try {
      expect(await until(() => /Serving the catalog at (\S+) with 2 workers/.test(stderr))).toBe(true);
      const url = /Serving the catalog at (\S+) with 2 workers/.exec(stderr)![1];
      const before = workers();
      expect(before).toHaveLength(2);
      process.kill(before[0], 'SIGKILL');
      expect(await until(() => /worker \d+ serving in its place/.test(stderr)), stderr).toBe(true);
      expect(stderr).toContain(`worker ${before[0]} stopped (signal SIGKILL); starting another`);
      const after = workers();
      expect(after).toHaveLength(2);
      expect(after).not.toContain(before[0]);
      expect(after).toContain(before[1]);
      const answers = await Promise.all(Array.from({ length: 8 }, () => fetch(`${url}/labels?select=name`).then((r) => r.status)));
      expect(answers).toEqual(Array(8).fill(200));
    } finally {
      child.kill('SIGTERM');
      const [code] = await once(child, 'exit');
      expect(code).toBe(0);
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      await client.query(`drop schema if exists ${schema} cascade`);
      await client.end();
    }
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
