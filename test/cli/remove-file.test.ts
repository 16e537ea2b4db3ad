import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../support/stores.js';
import { runCli, type TestContextOptions, useTestService } from './support.js';

/** Issue 26: `remove --file`, and `remove --where` with a list too long for one URL. */

const service = useTestService();
const cli = (args: string[], o: TestContextOptions = {}) => runCli(['--url', service.url, ...args], o);
const count = async (where: string) => Number((await service.store.query<{ n: number }>(`select count(*)::int as n from tracks where ${where}`)).rows[0].n);

describe('bulk remove and long id lists', () => {
  it('update and remove --where with 600 ids (a URL the service would refuse with 414) go in parts', async () => {
    const dir = tempDir('remove-');
    const rows = Array.from({ length: 700 }, (_, i) => `USRM12${String(i).padStart(6, '0')},Long ${i}`);
    writeFileSync(join(dir, 't.csv'), `isrc_code,track_title\n${rows.join('\n')}\n`);
    expect((await cli(['tracks', 'import', join(dir, 't.csv')])).code).toBe(0);
    const ids = (await service.store.query<{ id: string }>(`select id from tracks where track_title like 'Long %' order by id limit 600`)).rows.map((r) => r.id);
    // read back in parts too, in key order whatever order the list was given in
    const listed = await cli(['tracks', 'list', '--where', `id=in.(${[...ids].reverse().join(',')})`, '--select', 'id', '-o', 'json']);
    expect(listed.code, listed.err).toBe(0);
    expect((JSON.parse(listed.out) as Array<{ id: string }>).map((t) => t.id)).toEqual(ids);
    for (const file of ['ids.csv', 'ids.ndjson']) {
      const exported = await cli(['tracks', 'export', join(dir, file), '--where', `id=in.(${[...ids].reverse().join(',')})`, '--select', 'id', '--limit', '550']);
      expect(exported.code, exported.err).toBe(0);
      const lines = readFileSync(join(dir, file), 'utf8').trim().split('\n');
      expect(lines.filter((l) => l !== 'id').map((l) => (l.startsWith('{') ? (JSON.parse(l) as { id: string }).id : l))).toEqual(ids.slice(0, 550));
    }
    // count splits the same list (it answered 431 before), a repeated id counted once
    const counted = await cli(['tracks', 'count', '--where', `id=in.(${[...ids, ...ids.slice(0, 50)].join(',')})`]);
    expect(counted.code, counted.err).toBe(0);
    expect(counted.out.trim()).toBe('600');
    const u = await cli(['tracks', 'update', '--where', `id=in.(${ids.join(',')})`, 'mix_version=Long', '--yes', '-o', 'json']);
    expect(u.code, u.err).toBe(0);
    expect(JSON.parse(u.out)).toHaveLength(600);
    expect(await count(`mix_version = 'Long'`)).toBe(600);
    const r = await cli(['tracks', 'remove', '--where', `id=in.(${ids.join(',')})`, '--yes']);
    expect(r.err).toMatch(/Removed 600 tracks \(in \d+ requests, each under the URL limit\)/);
    expect(r.code).toBe(0);
    expect(await count(`track_title like 'Long %'`)).toBe(100);
  });

  it('remove --file takes a column of ids, or of keys under a header naming the field; an unknown key removes nothing', async () => {
    const dir = tempDir('remove-file-');
    writeFileSync(join(dir, 't.csv'), 'isrc_code,track_title\nUSRF12000001,File 1\nUSRF12000002,File 2\nUSRF12000003,File 3\n');
    expect((await cli(['tracks', 'import', join(dir, 't.csv')])).code).toBe(0);
    writeFileSync(join(dir, 'bad.csv'), 'isrc_code\nus-rf1-20-00001\nUSRF19999999\n');
    const bad = await cli(['tracks', 'remove', '--file', join(dir, 'bad.csv'), '--yes']);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/1 isrc_code value matches no tracks: line 3 “USRF19999999”; nothing removed/);
    expect(await count(`track_title like 'File %'`)).toBe(3);
    writeFileSync(join(dir, 'keys.csv'), 'isrc_code\nus-rf1-20-00001\n');
    expect((await cli(['tracks', 'remove', '--file', join(dir, 'keys.csv'), '--yes'])).err).toMatch(/Removed 1 track\b/);
    const [{ id }] = (await service.store.query<{ id: string }>(`select id from tracks where track_title = 'File 2'`)).rows;
    writeFileSync(join(dir, 'ids.csv'), `${id}\n`);
    expect((await cli(['tracks', 'remove', '--file', join(dir, 'ids.csv'), '--yes'])).err).toMatch(/Removed 1 track\b/);
    expect(await count(`track_title like 'File %'`)).toBe(1);
    // an id no record has is refused as an unknown key is: nothing removed, the line named
    const [{ id: kept }] = (await service.store.query<{ id: string }>(`select id from tracks where track_title = 'File 3'`)).rows;
    writeFileSync(join(dir, 'stale.csv'), `id\n${kept}\n00000000-0000-4000-8000-00000000dead\n`);
    const stale = await cli(['tracks', 'remove', '--file', join(dir, 'stale.csv'), '--yes']);
    expect(stale.code).toBe(2);
    expect(stale.err).toMatch(/1 id value matches no tracks: line 3 “00000000-0000-4000-8000-00000000dead”; nothing removed/);
    expect(await count(`track_title like 'File %'`)).toBe(1);
    writeFileSync(join(dir, 'junk.csv'), 'id\nnot-an-id\n');
    const junk = await cli(['tracks', 'remove', '--file', join(dir, 'junk.csv'), '--yes']);
    expect(junk.code).toBe(2);
    expect(junk.err).toMatch(/junk\.csv line 2: "not-an-id" is not an id/);
  });
});
