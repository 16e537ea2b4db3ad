import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, ROOT, ensureBuilt } from '../e2e/support.js';
import { PG_URL, tempDir } from '../support/stores.js';
import { freePort } from './support.js';

/**
 * `catalog tracks import` while the server is killed (SIGKILL) and restarted on the same port
 * twice: the client's retries carry the import, and where a run gives up, `--resume` finishes it.
 * The catalog ends with exactly the file's rows: none missing, none doubled, every value as written.
 */

// Large enough that, between two checkpoints (written every 250 ms), the import cannot run from the
// first kill past the second threshold and on to the end, however fast the machine is.
const ROWS = 20_000;
const uuid = (n: number) => `7e570000-0000-4000-8000-${String(n).padStart(12, '0')}`;

interface Track {
  id: string;
  track_title: string;
  isrc_code: string;
  lyrics: string;
}
const track = (n: number): Track => ({ id: uuid(n), track_title: `Track ${n}, "take" ${n % 7}`, isrc_code: `ISRC${String(n).padStart(8, '0')}`, lyrics: `line one\nline ${n}` });
const csvCell = (s: string) => (/[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);

/** A `catalog serve` on a fixed port; resolves once it prints its URL. */
function serve(port: number, args: string[]): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [BIN, 'serve', '--port', String(port), ...args], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    proc.stderr!.on('data', (c) => {
      err += c;
      if (/Serving the catalog at/.test(err)) resolve(proc);
    });
    proc.on('exit', (code) => reject(new Error(`serve exited ${code}: ${err}`)));
  });
}

function kill9(proc: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
    proc.once('exit', () => resolve());
    proc.kill('SIGKILL');
  });
}

const BACKENDS = [
  { name: 'PostgreSQL', skip: !PG_URL, args: () => ['--database-url', PG_URL!, '--db-schema', `catalog_restart_${process.pid}`] },
  { name: 'PGlite data directory', skip: false, args: () => ['--data', join(tempDir('restart-'), 'data')] },
];

for (const backend of BACKENDS) {
  describe.skipIf(backend.skip)(`import through two server kills (${backend.name}${backend.skip ? ', SKIPPED: set CATALOG_TEST_DATABASE_URL' : ''})`, () => {
    let server: ChildProcess | null = null;
    const args = backend.args();
    afterAll(async () => {
      if (server) await kill9(server);
      if (backend.name === 'PostgreSQL') {
        const pg = (await import('pg')).default;
        const c = new pg.Client({ connectionString: PG_URL });
        await c.connect();
        await c.query(`drop schema if exists ${args[3]} cascade`);
        await c.end();
      }
    });

    it(`ends with exactly the file's ${ROWS} rows`, async () => {
      ensureBuilt();
      const dir = tempDir('restart-input-');
      const input = join(dir, 'tracks.csv');
      const rows = Array.from({ length: ROWS }, (_, i) => track(i + 1));
      writeFileSync(input, `id,track_title,isrc_code,lyrics\n${rows.map((r) => [r.id, r.track_title, r.isrc_code, r.lyrics].map(csvCell).join(',')).join('\n')}\n`);
      const checkpoint = `${input}.checkpoint.json`;
      const committed = () => {
        try {
          return existsSync(checkpoint) ? (JSON.parse(readFileSync(checkpoint, 'utf8')).committed as number) : 0;
        } catch {
          return 0; // being replaced at this moment
        }
      };
      const port = await freePort();
      const url = `http://127.0.0.1:${port}`;
      server = await serve(port, args);

      const thresholds = [ROWS * 0.2, ROWS * 0.5];
      const killedAt: number[] = [];
      const exitCodes: number[] = [];
      for (let run = 0; run < 8; run++) {
        const resume = run > 0 && existsSync(checkpoint);
        const importer = spawn(process.execPath, [BIN, '--url', url, 'tracks', 'import', input, '--batch-size', '20', '--concurrency', '2', ...(resume ? ['--resume'] : [])], {
          cwd: ROOT,
          stdio: ['ignore', 'ignore', 'pipe'],
        });
        let stderr = '';
        importer.stderr!.on('data', (c) => (stderr += c));
        const exited = new Promise<number>((resolve) => importer.on('exit', (code) => resolve(code ?? -1)));
        let code: number | null = null;
        void exited.then((c) => (code = c));
        while (code === null) {
          if (killedAt.length < 2 && committed() >= thresholds[killedAt.length]) {
            killedAt.push(committed());
            await kill9(server!);
            server = await serve(port, args); // same port, same data
          }
          await new Promise((r) => setTimeout(r, 25));
        }
        exitCodes.push(code);
        if (code === 0 && killedAt.length === 2) break;
        if (code === 0) throw new Error(`the import finished before the server was killed twice (killed at ${killedAt}); make it longer`);
        expect(stderr).not.toMatch(/rejected/);
        // a run the kill stopped says how to go on, where its checkpoint is
        expect(stderr).toContain(`hint: every row before line `);
        expect(stderr).toContain(`run the same command with --resume to continue (checkpoint: ${checkpoint})`);
      }
      expect(killedAt).toHaveLength(2);
      expect(exitCodes.at(-1)).toBe(0);

      const res = await fetch(`${url}/tracks?select=id,track_title,isrc_code,lyrics&order=id`, { headers: { Prefer: 'count=exact' } });
      expect(res.headers.get('content-range')).toBe(`0-${ROWS - 1}/${ROWS}`);
      expect(await res.json()).toEqual(rows);
      console.info(`[import-restart ${backend.name}] server killed at committed rows ${killedAt.join(' and ')}; import runs exited ${exitCodes.join(', ')}`);
    });
  });
}
