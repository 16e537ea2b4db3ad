import type * as Fs from 'node:fs';
import { statSync } from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../../src/store/store.js';
import { importFile } from '../../../src/import/engine.js';
import { disposeStore, STORE_KINDS } from '../../support/stores.js';
import { file, rowsOf, serverFor, table, tmp } from '../support.js';

/** Bytes read from each file, however it was opened (a FileHandle or a read stream). */
const readBytes = new Map<string, number>();
const count = (path: unknown, n: number) => readBytes.set(String(path), (readBytes.get(String(path)) ?? 0) + n);

// Node's own modules, patched for the length of a test: `syncBuiltinESMExports` makes every
// `import { open } from 'node:fs/promises'` see the counting function, whichever module loaded
// first (the unit run shares loaded modules between test files, where a module mock would not reach).
const require = createRequire(import.meta.url);
const fsp = require('node:fs/promises') as typeof import('node:fs/promises');
const fsc = require('node:fs') as typeof Fs;
const real = { open: fsp.open, createReadStream: fsc.createReadStream, readSync: fsc.readSync };
/** The path of each file descriptor a counted FileHandle holds (the scan reads its handle's fd with readSync). */
const pathOfFd = new Map<number, unknown>();

function countReads(): void {
  fsp.open = (async (...args: Parameters<typeof real.open>) => {
    const fh = await real.open(...args);
    pathOfFd.set(fh.fd, args[0]);
    const read = fh.read.bind(fh) as (...a: unknown[]) => Promise<{ bytesRead: number; buffer: Buffer }>;
    (fh as unknown as { read: unknown }).read = async (...a: unknown[]) => {
      const r = await read(...a);
      count(args[0], r.bytesRead);
      return r;
    };
    return fh;
  }) as typeof fsp.open;
  // a stream reads through a counting `fs` of its own (its `open` and `close` are the real ones)
  fsc.createReadStream = ((path: Fs.PathLike, opts?: Parameters<typeof real.createReadStream>[1]) => {
    const o = typeof opts === 'string' ? { encoding: opts } : (opts ?? {});
    const read = (fd: number, buf: Buffer, off: number, len: number, pos: number | null, cb: (e: Error | null, n: number, b: Buffer) => void) =>
      fsc.read(fd, buf, off, len, pos, (e, n, b) => {
        count(path, n);
        cb(e, n, b);
      });
    return real.createReadStream(path, { ...o, fs: { open: fsc.open, close: fsc.close, read } } as Parameters<typeof real.createReadStream>[1]);
  }) as typeof fsc.createReadStream;
  fsc.readSync = ((fd: number, ...rest: unknown[]) => {
    const n = (real.readSync as (...a: unknown[]) => number)(fd, ...rest);
    if (pathOfFd.has(fd)) count(pathOfFd.get(fd), n);
    return n;
  }) as typeof fsc.readSync;
  syncBuiltinESMExports();
}

function realReads(): void {
  fsp.open = real.open;
  fsc.createReadStream = real.createReadStream;
  fsc.readSync = real.readSync;
  syncBuiltinESMExports();
}

const id = (n: number) => `a0000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

describe('pass driver: an import reads its file twice (the scan, the load)', () => {
  let store: Store;
  beforeAll(async () => {
    store = await STORE_KINDS[0].make();
  });
  afterAll(async () => {
    await disposeStore(store);
  });
  afterEach(realReads);

  // 20,000 rows, ~1.4 MB; keys 7 and 11 repeat, one of key 11's rows is invalid
  const rows = Array.from({ length: 20_000 }, (_, i) => ({ id: id(i === 15_000 ? 7 : i === 19_000 || i === 19_001 ? 11 : i), stage_name: `Artist ${i}`, is_signed: i === 19_001 ? 'perhaps' : 'true' }));
  const inputs = {
    csv: `id,stage_name,is_signed\n${rows.map((r) => `${r.id},${r.stage_name},${r.is_signed}`).join('\n')}\n`,
    ndjson: `${rows.map((r) => JSON.stringify({ ...r, is_signed: r.is_signed === 'true' ? true : r.is_signed })).join('\n')}\n`,
  };

  it.each(Object.keys(inputs) as Array<keyof typeof inputs>)('%s with --dedupe error: every byte read twice at most, and every row of a repeated key rejected', async (format) => {
    await store.query('delete from artists');
    const input = file(tmp(), `artists.${format}`, inputs[format]);
    readBytes.clear();
    countReads();
    const s = await importFile({ table: table('artists'), input, dedupe: 'error', checkpointPath: null }, serverFor(store));
    realReads();
    const size = statSync(input).size;
    const read = readBytes.get(input) ?? 0;
    // the scan and the load, plus the heads read for the encoding, the delimiter and the header
    expect(read).toBeGreaterThanOrEqual(2 * size);
    expect(read).toBeLessThanOrEqual(2 * size + 4 * 64 * 1024);
    // key 7 twice (rows 7 and 15000): both rejected; key 11 once valid (row 11) and once valid at
    // 19000 (its row 19001 is invalid on its own): rows 11 and 19000 rejected as repeats
    expect(s.rejected).toBe(5);
    expect(s.inserted).toBe(20_000 - 5);
    const stored = new Set((await rowsOf(store, 'artists', 'id')).map((r) => r.id));
    expect(stored.has(id(7))).toBe(false);
    expect(stored.has(id(11))).toBe(false);
    expect(stored.has(id(12))).toBe(true);
  });
});
