import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import iconv from 'iconv-lite';
import { describe, expect, it } from 'vitest';
import { CopyTranscoder, fieldPlans, OK, REFUSED } from '../../../src/import/pass/copy-transcode.js';
import { FieldResolver } from '../../../src/import/shape/mapping.js';
import { scanInput } from '../../../src/import/dedupe/dedupe.js';
import { RowShaper } from '../../../src/import/shape/shape.js';
import { openSource, sourceRecords } from '../../../src/import/source/source.js';
import { file, tmp } from '../support-files.js';
import { table } from '../support.js';

const ID = 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11';

describe('source stage: decoding and delimiters', () => {
  it('plain UTF-8 is read where it is; a Windows-1252 file is transcoded to a UTF-8 copy, removed on cleanup', async () => {
    const dir = tmp();
    const plain = file(dir, 'a.csv', 'name;city\nAnna;Oslo\n');
    const s = await openSource({ input: plain });
    expect(s).toMatchObject({ path: plain, rawPath: plain, delimiter: ';', encoding: { encoding: 'utf-8', bomLength: 0 } });

    const w = file(dir, 'w.csv', '');
    const bytes = iconv.encode('name,city\nBjörn,Malmö\n', 'windows-1252');
    writeFileSync(w, bytes);
    const t = await openSource({ input: w, encoding: 'cp1252' });
    expect(t.path).not.toBe(w);
    expect(t.rawPath).toBe(w);
    expect(readFileSync(t.path, 'utf8')).toBe('name,city\nBjörn,Malmö\n');
    expect(t.totalBytes).toBe(Buffer.byteLength('name,city\nBjörn,Malmö\n'));
    const rows: unknown[] = [];
    for await (const r of sourceRecords(t).records()) rows.push(r.values);
    expect(rows).toEqual([{ name: 'Björn', city: 'Malmö' }]);
    await t.cleanup();
    expect(existsSync(t.path)).toBe(false);
  });

  it('a UTF-8 BOM beats --encoding; the file is read where it is and the BOM is not part of the header', async () => {
    const dir = tmp();
    const p = file(dir, 'bom.csv', '');
    writeFileSync(p, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('name\tcity\nZoë\tLyon\n')]));
    const s = await openSource({ input: p, encoding: 'latin1' });
    expect(s.encoding).toEqual({ encoding: 'utf-8', bomLength: 3, fromBom: true });
    expect(s.delimiter).toBe('\t');
    expect(s.path).toBe(p);
    const rows: unknown[] = [];
    for await (const r of sourceRecords(s).records()) rows.push(r.values);
    expect(rows).toEqual([{ name: 'Zoë', city: 'Lyon' }]);
  });

  it('a UTF-8 BOM does not excuse bytes that are not UTF-8', async () => {
    const p = file(tmp(), 'bom-bad.csv', '');
    writeFileSync(p, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('name\nBj'), Buffer.from([0xf6]), Buffer.from('rn\n')]));
    // the source reads it as UTF-8 where it is; the scan pass checks its bytes, before anything is sent
    const source = await openSource({ input: p });
    expect(source.unchecked).toBe(true);
    const shaper = new RowShaper(new FieldResolver(table('artists'), { ignoreUnknown: true }), true, '\\N', []);
    const scan = scanInput({ source, shaper, keyColumns: ['id'], progress: () => {}, stopping: () => false });
    await expect(scan).rejects.toThrow(/not valid UTF-8: line 2, byte 11 \(0xf6\)/);
  });

  it('flags a format cannot use are usage errors', async () => {
    const p = file(tmp(), 'a.json', '[]');
    await expect(openSource({ input: p, delimiter: ';' })).rejects.toMatchObject({ kind: 'usage', message: '--delimiter is for CSV input, not json' });
    await expect(openSource({ input: file(tmp(), 'a.xlsx', ''), encoding: 'latin1' })).rejects.toThrow(/--encoding is for text input/);
  });
});

describe('COPY transcoder with another delimiter', () => {
  it('reads ; tab | fields and writes comma COPY lines, quoting a bare field that holds a comma', () => {
    const resolver = new FieldResolver(table('artists'));
    for (const d of [';', '\t', '|']) {
      const tc = new CopyTranscoder(fieldPlans(['id', 'stage_name', 'city', 'is_signed'].map((h) => resolver.resolve(h)), ['id']), '\\N', 1, false, d);
      const buf = Buffer.from(`${ID}${d}"Smith${d} ""DJ"""${d}Paris, TX${d}yes\n`);
      const out = Buffer.alloc(4096);
      expect(tc.record(buf, 0, buf.length, true, out, 0)).toBe(OK);
      expect(out.toString('utf8', 0, tc.outEnd)).toBe(`${ID},"Smith${d} ""DJ""","Paris, TX",t\n`);
      expect(tc.key).toBe(ID);
    }
  });

  it('a NUL byte in a field (quoted or not) sends the record the record way, where it is rejected as PostgreSQL would', () => {
    const resolver = new FieldResolver(table('artists'));
    const tc = new CopyTranscoder(fieldPlans(['id', 'stage_name'].map((h) => resolver.resolve(h)), ['id']), '\\N', 1);
    const out = Buffer.alloc(4096);
    for (const cell of ['a\u0000b', '"a\u0000b"']) {
      const buf = Buffer.from(`${ID},${cell}\n`);
      expect(tc.record(buf, 0, buf.length, true, out, 0)).toBe(REFUSED);
    }
  });
});
