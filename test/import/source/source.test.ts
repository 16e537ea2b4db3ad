import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { openSource, sourceRecords } from '../../../src/import/source/source.js';
import { ImportError } from '../../../src/import/types.js';
import { file, tmp } from '../support-files.js';

async function failure(p: Promise<unknown>): Promise<ImportError> {
  const err = await p.then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(ImportError);
  return err as ImportError;
}

const asRoot = process.getuid?.() === 0;
if (asRoot) console.warn('[catalog] running as root: the test of an input this user may not read is SKIPPED (root reads every file)');

describe('source stage', () => {
  it.skipIf(asRoot)('an input this user may not read is a usage error that says so, before anything is read', async () => {
    const path = file(tmp(), 'secret.csv', 'name\nx\n');
    chmodSync(path, 0o000);
    const err = await failure(openSource({ input: path }));
    expect(err.kind).toBe('usage');
    expect(err.message).toBe(`cannot read ${path}: permission denied (it is not readable by this user)`);
  });

  it('reads a regular file where it is, with its format and size', async () => {
    const path = file(tmp(), 'a.csv', 'name\nx\n');
    const s = await openSource({ input: path });
    expect(s).toMatchObject({ path, format: 'csv', streamed: false, totalBytes: 7, interrupted: false });
    const names: unknown[] = [];
    for await (const r of sourceRecords(s).records()) names.push(r.values.name);
    expect(names).toEqual(['x']);
  });

  it('spools stdin to a temporary file it removes on cleanup', async () => {
    const s = await openSource({ input: '-', format: 'ndjson', stdin: Readable.from(['{"name":"a"}\n', '{"name":"b"}\n']) });
    expect(s).toMatchObject({ format: 'ndjson', streamed: true, totalBytes: 26 });
    expect(readFileSync(s.path, 'utf8')).toBe('{"name":"a"}\n{"name":"b"}\n');
    await s.cleanup();
    expect(() => readFileSync(s.path)).toThrow();
  });

  it('says a missing file, a directory and stdin without --format are the usage’s fault', async () => {
    const dir = tmp();
    expect(await failure(openSource({ input: join(dir, 'none.csv') }))).toMatchObject({ kind: 'usage', message: expect.stringMatching(/no such file/) });
    mkdirSync(join(dir, 'd.csv'));
    expect(await failure(openSource({ input: join(dir, 'd.csv') }))).toMatchObject({ kind: 'usage', message: expect.stringMatching(/d\.csv is a directory/) });
    expect(await failure(openSource({ input: '-' }))).toMatchObject({ kind: 'usage', message: expect.stringMatching(/--format/) });
  });

  it('spools a FIFO (read once) and stops waiting for a writer when asked to', async () => {
    const dir = tmp();
    const fifo = join(dir, 'in.ndjson');
    execFileSync('mkfifo', [fifo]);
    const writer = spawn('sh', ['-c', `printf '{"name":"a"}\\n' > ${fifo}`]);
    const exited = new Promise((r) => writer.on('exit', r));
    const s = await openSource({ input: fifo });
    expect(s).toMatchObject({ streamed: true, interrupted: false, totalBytes: 13 });
    await exited;
    await s.cleanup();
    // nobody ever writes: a stop request ends the wait with an interrupted (empty) source
    const abort = new AbortController();
    const opened = openSource({ input: fifo, signal: abort.signal });
    setTimeout(() => abort.abort(), 100);
    expect(await opened).toMatchObject({ streamed: true, interrupted: true, totalBytes: 0 });
  });
});
