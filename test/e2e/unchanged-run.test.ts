import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/stores.js';
import { catalog, type Serve, serveBackends, startServe } from './support.js';

/**
 * Issue 35 (bench: an unchanged keyed re-run at least as fast as a DBA's staging + MERGE): a run
 * that left the catalog as its file says is recorded with the catalog's write count; the same
 * file with the same settings, when nothing has written the catalog since, sends no row. Every
 * other case is a full run: another writer (the service's API, or SQL outside the service), a
 * changed byte, other settings, `--recheck`, a writer still open when the run started.
 */

const PG_URL = process.env.CATALOG_TEST_DATABASE_URL;

interface Summary {
  inserted: number;
  updated: number;
  unchanged: number;
  records: number;
  requests: number;
  unchangedSince?: string;
  recorded?: boolean;
}

function tracksFile(prefix: string, n: number): string {
  const path = join(tempDir('unchanged-run-'), 'tracks.csv');
  writeFileSync(path, `isrc_code,track_title,recording_year\n${Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(5, '0')},Unchanged ${i},${1990 + (i % 30)}`).join('\n')}\n`);
  return path;
}

for (const backend of serveBackends('unchanged-run')) {
  describe.skipIf(backend.skip)(`an unchanged re-run sends nothing (catalog serve, ${backend.name})`, () => {
    let serve: Serve;
    beforeAll(async () => {
      serve = await startServe(backend.args);
    });
    afterAll(async () => {
      await serve?.stop();
      await backend.cleanup();
    });

    const run = async (input: string, ...extra: string[]): Promise<{ summary: Summary; stderr: string }> => {
      const summaryPath = `${input}.summary.json`;
      const r = await catalog(['--url', serve.url, 'tracks', 'import', input, '--summary', summaryPath, ...extra]);
      expect(r.code, r.stderr).toBe(0);
      return { summary: JSON.parse(readFileSync(summaryPath, 'utf8')) as Summary, stderr: r.stderr };
    };
    const title = async (isrc: string) => {
      const res = await fetch(`${serve.url}/tracks?isrc_code=eq.${isrc}&select=track_title`);
      return ((await res.json()) as Array<{ track_title: string }>)[0]?.track_title;
    };

    it('records a clean run; the same file again sends no row and says why; --recheck compares every row', async () => {
      const input = tracksFile('QZUNA26', 1200);
      const first = await run(input);
      expect(first.summary.inserted).toBe(1200);
      expect(first.summary.recorded).toBe(true);

      const again = await run(input);
      expect(again.summary).toMatchObject({ inserted: 0, updated: 0, unchanged: 1200, records: 1200 });
      expect('recorded' in again.summary).toBe(false);
      expect(again.summary.unchangedSince).toMatch(/^\d{4}-\d\d-\d\d/);
      // the question and nothing else: no key index read, no batch sent
      expect(again.summary.requests).toBe(1);
      expect(again.stderr).toMatch(/nothing changed: nothing has written the catalog since this file was imported with these settings \(\d{4}-\d\d-\d\d \d\d:\d\d UTC\), so nothing was sent \(--recheck compares every row\)/);

      const rechecked = await run(input, '--recheck');
      expect(rechecked.summary).toMatchObject({ inserted: 0, updated: 0, unchanged: 1200 });
      expect(rechecked.summary.unchangedSince).toBeUndefined();
      expect(rechecked.summary.requests).toBeGreaterThan(1);
      expect(rechecked.stderr).toMatch(/nothing changed: the catalog already matches the input/);
    });

    it('another writer in between (the API) makes the next run compare, and it restores the file', async () => {
      const input = tracksFile('QZUNB26', 300);
      expect((await run(input)).summary.recorded).toBe(true);
      const patched = await fetch(`${serve.url}/tracks?isrc_code=eq.QZUNB2600007`, { method: 'PATCH', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ track_title: 'Edited elsewhere' }) });
      expect(patched.status).toBe(204);
      const next = await run(input);
      expect(next.summary).toMatchObject({ inserted: 0, updated: 1, unchanged: 299, recorded: true });
      expect(next.summary.unchangedSince).toBeUndefined();
      expect(await title('QZUNB2600007')).toBe('Unchanged 7');
      expect((await run(input)).summary.unchangedSince).toBeDefined();
    });

    it('a writer to another collection counts too: a name reference could resolve otherwise', async () => {
      const input = tracksFile('QZUNC26', 50);
      expect((await run(input)).summary.recorded).toBe(true);
      const posted = await fetch(`${serve.url}/genres`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ name: `Unchanged Genre ${Date.now()}` }) });
      expect(posted.status).toBe(201);
      const next = await run(input);
      expect(next.summary.unchangedSince).toBeUndefined();
      expect(next.summary).toMatchObject({ unchanged: 50, recorded: true });
    });

    it('one changed byte, or other settings, is another run', async () => {
      const input = tracksFile('QZUND26', 40);
      expect((await run(input)).summary.recorded).toBe(true);
      writeFileSync(input, readFileSync(input, 'utf8').replace('Unchanged 3,', 'Unchanged 3!,'));
      const edited = await run(input);
      expect(edited.summary).toMatchObject({ updated: 1, unchanged: 39, recorded: true });
      expect(edited.summary.unchangedSince).toBeUndefined();
      const keyed = await run(input, '--key', 'isrc_code');
      expect(keyed.summary.unchangedSince).toBeUndefined();
      expect(keyed.summary).toMatchObject({ unchanged: 40, recorded: true });
      expect((await run(input, '--key', 'isrc_code')).summary.unchangedSince).toBeDefined();
    });

    it('a byte changed in the middle of a large file, its size and both ends the same, is another run (the probe matches, the hash does not)', async () => {
      const input = tracksFile('QZUNF26', 6000); // ~240 KB: more than the probe's two 64 KiB ends
      expect((await run(input)).summary.recorded).toBe(true);
      const text = readFileSync(input, 'utf8');
      const edited = text.replace('Unchanged 3000,', 'Unchangex 3000,');
      expect([edited.length, edited === text]).toEqual([text.length, false]);
      writeFileSync(input, edited);
      const next = await run(input);
      expect(next.summary.unchangedSince).toBeUndefined();
      expect(next.summary).toMatchObject({ updated: 1, unchanged: 5999, recorded: true });
      expect(await title('QZUNF2603000')).toBe('Unchangex 3000');
      expect((await run(input)).summary.unchangedSince).toBeDefined();
    });

    it('a sync in the same state has nothing to plan or ask: it goes through without --yes', async () => {
      const input = tracksFile('QZUNH26', 30);
      const scope = ['--sync', '--scope', 'isrc_code=like.QZUNH26*'];
      expect((await run(input, ...scope, '--yes')).summary).toMatchObject({ inserted: 30, recorded: true });
      const again = await run(input, ...scope);
      expect(again.summary.unchangedSince).toBeDefined();
      expect(again.summary.requests).toBe(1);
      // after a change a sync asks again (no terminal here: it insists on --yes)
      await fetch(`${serve.url}/tracks?isrc_code=eq.QZUNH2600001`, { method: 'PATCH', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ track_title: 'Edited' }) });
      const asked = await catalog(['--url', serve.url, 'tracks', 'import', input, ...scope]);
      expect(asked.code).not.toBe(0);
      expect(asked.stderr).toMatch(/--yes/);
    });

    it('a dry run neither asks nor records', async () => {
      const input = tracksFile('QZUNE26', 20);
      const dry = await run(input, '--dry-run');
      expect(dry.summary.recorded).toBeUndefined();
      expect(dry.summary.unchangedSince).toBeUndefined();
      expect((await run(input)).summary).toMatchObject({ inserted: 20, recorded: true });
      const dryAgain = await run(input, '--dry-run');
      expect(dryAgain.summary.unchangedSince).toBeUndefined();
      expect(dryAgain.summary.unchanged).toBe(20);
    });
  });
}

describe.skipIf(!PG_URL)('writers outside the service (PostgreSQL)', () => {
  const backend = serveBackends('unchanged-sql').find((b) => b.name === 'PostgreSQL')!;
  const schema = backend.args[backend.args.indexOf('--db-schema') + 1];
  let serve: Serve;
  let pg: import('pg').Client;
  beforeAll(async () => {
    serve = await startServe(backend.args);
    const { default: Pg } = await import('pg');
    pg = new Pg.Client({ connectionString: PG_URL });
    await pg.connect();
  });
  afterAll(async () => {
    await pg?.end();
    await serve?.stop();
    await backend.cleanup();
  });

  const run = async (input: string) => {
    const summaryPath = `${input}.summary.json`;
    const r = await catalog(['--url', serve.url, 'tracks', 'import', input, '--summary', summaryPath]);
    expect(r.code, r.stderr).toBe(0);
    return JSON.parse(readFileSync(summaryPath, 'utf8')) as Summary;
  };

  it('an UPDATE by SQL is seen, and so is a write with the triggers switched off for replication', async () => {
    const input = tracksFile('QZUNF26', 100);
    expect((await run(input)).recorded).toBe(true);
    await pg.query(`UPDATE ${schema}.tracks SET track_title = 'by psql' WHERE isrc_code = 'QZUNF2600001'`);
    expect(await run(input)).toMatchObject({ updated: 1, unchanged: 99, recorded: true });
    await pg.query('BEGIN');
    await pg.query(`SET LOCAL session_replication_role = replica`);
    await pg.query(`UPDATE ${schema}.tracks SET track_title = 'as a replica' WHERE isrc_code = 'QZUNF2600002'`);
    await pg.query('COMMIT');
    const after = await run(input);
    expect(after.unchangedSince).toBeUndefined();
    expect(after).toMatchObject({ updated: 1, unchanged: 99 });
  });

  it('a writer still open when the run starts: the run is not recorded (its write may land after)', async () => {
    const input = tracksFile('QZUNG26', 60);
    await pg.query('BEGIN');
    await pg.query(`INSERT INTO ${schema}.genres (name) VALUES ('Open Writer Genre')`);
    try {
      const first = await run(input);
      expect(first).toMatchObject({ inserted: 60, recorded: false });
    } finally {
      await pg.query('COMMIT');
    }
    const second = await run(input);
    expect(second.unchangedSince).toBeUndefined();
    expect(second).toMatchObject({ unchanged: 60, recorded: true });
    expect((await run(input)).unchangedSince).toBeDefined();
  });
});
