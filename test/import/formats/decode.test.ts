import { createReadStream, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import iconv from 'iconv-lite';
import { EncodingError, Utf8Check, encodeAs, firstBadByte, guessUtf16, parseEncoding, resolveEncoding, sniffBom, toUtf8 } from '../../../src/import/readers/decode.js';

/** A whole file through the scan pass's UTF-8 check, in read-sized chunks. */
async function checkUtf8(path: string): Promise<void> {
  const check = new Utf8Check(path);
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) await check.push(chunk as Buffer);
  await check.end();
}

const dir = mkdtempSync(join(tmpdir(), 'decode-'));
const file = (name: string, bytes: Uint8Array) => {
  const p = join(dir, name);
  writeFileSync(p, bytes);
  return p;
};

async function collect(r: Readable): Promise<string> {
  const parts: Buffer[] = [];
  for await (const c of r) parts.push(c as Buffer);
  return Buffer.concat(parts).toString('utf8');
}

describe('encodings', () => {
  it('names encodings and their aliases, refusing others with the list', () => {
    expect(parseEncoding('CP1252')).toBe('windows-1252');
    expect(parseEncoding('utf8')).toBe('utf-8');
    expect(parseEncoding('ISO-8859-1')).toBe('latin1');
    expect(() => parseEncoding('ebcdic')).toThrow(/unknown encoding "ebcdic": use one of utf-8, windows-1252/);
  });

  it('a BOM decides on its own, UTF-16 included', () => {
    expect(sniffBom(Buffer.from([0xef, 0xbb, 0xbf, 0x61]))).toEqual({ encoding: 'utf-8', length: 3 });
    expect(sniffBom(Buffer.from([0xff, 0xfe, 0x61, 0]))).toEqual({ encoding: 'utf-16le', length: 2 });
    expect(sniffBom(Buffer.from([0xfe, 0xff, 0, 0x61]))).toEqual({ encoding: 'utf-16be', length: 2 });
    expect(sniffBom(Buffer.from('abc'))).toBeNull();
  });

  it('recognises UTF-16 text without a BOM', () => {
    expect(guessUtf16(iconv.encode('name,city\nBjörn,Oslo\n', 'utf-16le'))).toBe('utf-16le');
    expect(guessUtf16(iconv.encode('name,city\nBjörn,Oslo\n', 'utf-16be'))).toBe('utf-16be');
    expect(guessUtf16(Buffer.from('name,city\n'))).toBeNull();
  });

  it('finds the first byte that is not UTF-8', () => {
    expect(firstBadByte(Buffer.from('aé€😀'))).toBe(-1);
    expect(firstBadByte(Buffer.from([0x61, 0x62, 0xe9, 0x63]))).toBe(2);
    expect(firstBadByte(Buffer.from([0xed, 0xa0, 0x80]))).toBe(0); // a surrogate
    expect(firstBadByte(Buffer.from([0x61, 0xc3]))).toBe(1); // cut short at the end
  });

  it('a Windows-1252 file meant as UTF-8 names the first bad line and byte and the flag', async () => {
    const p = file('w.csv', iconv.encode('stage_name,city\nAnna,Oslo\nBjörn,Malmö\n', 'windows-1252'));
    const err = (await checkUtf8(p).catch((e: unknown) => e)) as EncodingError;
    expect(err).toBeInstanceOf(EncodingError);
    expect(err.line).toBe(3);
    expect(err.offset).toBe('stage_name,city\nAnna,Oslo\nBj'.length + 1);
    expect(err.message).toMatch(/not valid UTF-8: line 3, byte 29 \(0xf6\).*--encoding windows-1252/);
    expect(err.kind).toBe('usage');
  });

  it('finds a bad byte far into a file, across read chunks, and passes valid multi-byte text split at chunk ends', async () => {
    const line = 'Zoë,Malmö,€😀\n';
    const good = Buffer.from(line.repeat(200_000));
    await expect(checkUtf8(file('good.csv', good))).resolves.toBeUndefined();
    const bad = Buffer.concat([good, Buffer.from([0x42, 0x6a, 0xf6, 0x0a])]);
    const err = (await checkUtf8(file("bad.csv", bad)).catch((e: unknown) => e)) as EncodingError;
    expect(err.line).toBe(200_001);
    expect(err.offset).toBe(good.length + 3);
  });

  it('resolveEncoding: BOM over flag, flag over default, UTF-16 without a BOM refused with the flag', async () => {
    const bom = file('bom.csv', Buffer.concat([Buffer.from([0xff, 0xfe]), iconv.encode('a\n', 'utf-16le')]));
    expect(await resolveEncoding(bom, 'windows-1252')).toEqual({ encoding: 'utf-16le', bomLength: 2, fromBom: true });
    const w = file('w2.csv', iconv.encode('a\né\n', 'windows-1252'));
    expect(await resolveEncoding(w, 'cp1252')).toEqual({ encoding: 'windows-1252', bomLength: 0, fromBom: false });
    // UTF-8 by default: the scan pass checks the bytes as it reads them (not resolveEncoding)
    expect(await resolveEncoding(w)).toEqual({ encoding: 'utf-8', bomLength: 0, fromBom: false });
    await expect(checkUtf8(w)).rejects.toThrow(/--encoding windows-1252/);
    const u16 = file('u16.csv', iconv.encode('name,city\nAnna,Oslo\n', 'utf-16le'));
    await expect(resolveEncoding(u16)).rejects.toThrow(/UTF-16LE text without a byte-order mark: pass --encoding utf-16le/);
  });

  it('toUtf8 streams any encoding to UTF-8 bytes, characters split across chunks included', async () => {
    const text = 'name\nBjörn — “Zoë” €\n'.repeat(50);
    for (const enc of ['windows-1252', 'latin1', 'utf-16le', 'utf-16be'] as const) {
      const src = enc === 'latin1' ? text.replace(/[—“”€]/g, '-') : text;
      const bytes = iconv.encode(src, enc);
      const chunks = [];
      for (let i = 0; i < bytes.length; i += 7) chunks.push(bytes.subarray(i, i + 7));
      expect(await collect(toUtf8(Readable.from(chunks), { encoding: enc, bomLength: 0, fromBom: false }))).toBe(src);
      expect(encodeAs(src, enc).equals(bytes)).toBe(true);
    }
    const withBom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('a,b\n')]);
    expect(await collect(toUtf8(Readable.from([withBom]), { encoding: 'utf-8', bomLength: 3, fromBom: true }))).toBe('a,b\n');
  });
});
