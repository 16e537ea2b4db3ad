import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempPathFor, writeFileAtomic, writeFileAtomicSync } from '../../src/shared/atomic-write.js';

const root = mkdtempSync(join(tmpdir(), 'catalog-atomic-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const freshDir = () => {
  const dir = join(root, String(n++));
  mkdirSync(dir);
  return dir;
};
const modeOf = (path: string) => statSync(path).mode & 0o777;

describe('src/shared/atomic-write.ts: a file replaced whole or not at all', () => {
  it('names its temporary file beside the target, unique per call, in a form *.<hex>.tmp patterns know', () => {
    const a = tempPathFor('/d/x.checkpoint.json');
    const b = tempPathFor('/d/x.checkpoint.json');
    expect(a).not.toBe(b);
    expect(a).toMatch(/^\/d\/x\.checkpoint\.json\.[0-9a-f]+\.tmp$/);
    expect(a.startsWith(`/d/x.checkpoint.json.${process.pid.toString(16).padStart(8, '0')}`)).toBe(true);
    expect(tempPathFor('/d/out.csv', 'partial')).toMatch(/^\/d\/out\.csv\.[0-9a-f]+\.partial$/);
  });

  for (const [form, write] of [
    ['sync', async (path: string, content: Parameters<typeof writeFileAtomicSync>[1], opts?: { mode?: number }) => writeFileAtomicSync(path, content, opts)],
    ['async', writeFileAtomic],
  ] as const) {
    describe(`the ${form} form`, () => {
      it('writes a new file, and replaces an old one whole (a longer old content leaves nothing behind)', async () => {
        const dir = freshDir();
        const file = join(dir, 'f.json');
        await write(file, 'a much longer first content\n');
        expect(readFileSync(file, 'utf8')).toBe('a much longer first content\n');
        await write(file, '{}');
        expect(readFileSync(file, 'utf8')).toBe('{}');
        expect(readdirSync(dir)).toEqual(['f.json']);
      });

      it('writes bytes, and pieces of bytes in order', async () => {
        const dir = freshDir();
        const file = join(dir, 'f.bin');
        await write(file, Uint8Array.of(1, 2, 3));
        expect([...readFileSync(file)]).toEqual([1, 2, 3]);
        await write(file, [Buffer.from('ab'), new Uint8Array(0), Buffer.from('cd').subarray(1)]);
        expect(readFileSync(file, 'utf8')).toBe('abd');
      });

      it('sets the mode asked for exactly (the umask does not narrow it)', async () => {
        const dir = freshDir();
        const file = join(dir, 'lock.json');
        await write(file, 'x', { mode: 0o600 });
        expect(modeOf(file)).toBe(0o600);
        await write(file, 'y', { mode: 0o666 });
        expect(modeOf(file)).toBe(0o666);
      });

      it("keeps the replaced file's mode when none is asked for", async () => {
        const dir = freshDir();
        const file = join(dir, 'f');
        writeFileSync(file, 'old');
        chmodSync(file, 0o640);
        await write(file, 'new');
        expect(modeOf(file)).toBe(0o640);
        expect(readFileSync(file, 'utf8')).toBe('new');
      });

      it('leaves the old file and no temporary file when the write fails', async () => {
        const dir = freshDir();
        const file = join(dir, 'f');
        writeFileSync(file, 'old');
        await expect(write(file, [Buffer.from('half'), { length: 3 } as never])).rejects.toThrow();
        expect(readFileSync(file, 'utf8')).toBe('old');
        expect(readdirSync(dir)).toEqual(['f']);
      });

      it('leaves no temporary file when the rename fails (the target is a directory)', async () => {
        const dir = freshDir();
        const target = join(dir, 'sub');
        mkdirSync(target);
        writeFileSync(join(target, 'inside'), '');
        await expect(write(target, 'x')).rejects.toThrow();
        expect(readdirSync(dir)).toEqual(['sub']);
      });

      it('fails without leaving anything when the directory does not exist', async () => {
        const dir = freshDir();
        await expect(write(join(dir, 'no', 'f'), 'x')).rejects.toThrow(/ENOENT/);
        expect(readdirSync(dir)).toEqual([]);
      });
    });
  }

  it('takes the place of a leftover temporary file of a dead process with this pid, never writing through it', () => {
    const dir = freshDir();
    const file = join(dir, 'f');
    const elsewhere = join(dir, 'elsewhere');
    writeFileSync(elsewhere, 'untouched');
    // the name the next call will take: this pid, the counter's next value
    const hex = /\.([0-9a-f]+)\.tmp$/.exec(tempPathFor(file))![1];
    symlinkSync(elsewhere, `${file}.${hex.slice(0, 8)}${(parseInt(hex.slice(8), 16) + 1).toString(16)}.tmp`);
    writeFileAtomicSync(file, 'new');
    expect(readFileSync(file, 'utf8')).toBe('new');
    expect(readFileSync(elsewhere, 'utf8')).toBe('untouched');
    expect(readdirSync(dir).sort()).toEqual(['elsewhere', 'f']);
  });
});
