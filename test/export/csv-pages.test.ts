import { describe, expect, it } from 'vitest';
import { csvPageFormat, csvPassThrough } from '../../src/export/csv-pages.js';
import { parseQuery } from '../../src/grammar/parse.js';
import { tableByName } from '../../src/schema/catalog.js';

const labels = tableByName('labels')!;
const artists = tableByName('artists')!;
const text = (b: Uint8Array) => Buffer.from(b).toString('utf8');

describe('CSV pages written through from the service', () => {
  it('drops the header, un-doubles backslashes, keeps the quoting the CSV dialect needs (drops the rest), and finds the last key', () => {
    const f = csvPageFormat(labels, ['id', 'name'], undefined);
    const body = 'id,name\na1,"back\\\\slash"\na2,"say ""hi"", then\nmore"\na3,plain';
    const r = f.parse(body, 'id', null);
    expect(r.count).toBe(3);
    expect(r.lastKey).toBe('a3');
    expect(text(r.page.bytes)).toBe('a1,back\\slash\na2,"say ""hi"", then\nmore"\na3,plain\n');
  });

  it('writes a null as the null token where an empty cell would read back as a column default, and as empty elsewhere', () => {
    // artists: stage_name has default '' (a null must be written \N); birthdate has none (empty reads back as null)
    const cols = ['id', 'stage_name', 'birthdate', 'is_signed'];
    const f = csvPageFormat(artists, cols, undefined);
    const r = f.parse('id,stage_name,birthdate,is_signed\nx1,,,t\nx2,"",1990-01-02,\n', 'id', null);
    expect(text(r.page.bytes)).toBe('x1,\\N,,t\nx2,"",1990-01-02,\\N\n');
    expect(r.count).toBe(2);
    expect(r.lastKey).toBe('x2');
  });

  it('with --null every null becomes the token (quoted when it needs quotes)', () => {
    const f = csvPageFormat(artists, ['id', 'stage_name', 'birthdate'], 'NA, none');
    expect(text(f.parse('id,stage_name,birthdate\nx1,,\n', null, null).page.bytes)).toBe('x1,"NA, none","NA, none"\n');
  });

  it('an empty page (header only) has no rows', () => {
    const f = csvPageFormat(labels, ['id', 'name'], undefined);
    expect(f.parse('id,name', 'id', null)).toEqual({ page: { bytes: new Uint8Array(0), count: 0 }, count: 0, lastKey: null });
  });

  it('a quoted key is unquoted for the next page', () => {
    const f = csvPageFormat(labels, ['name', 'id'], undefined);
    expect(f.parse('name,id\nx,"a ""b"""\n', 'id', null).lastKey).toBe('a "b"');
  });

  it('rejects text after a closing quote', () => {
    const f = csvPageFormat(labels, ['id', 'name'], undefined);
    expect(() => f.parse('id,name\na1,"x"y\n', 'id', null)).toThrow(/malformed/);
  });

  it('is used only for plain columns with the key among them', () => {
    expect(csvPassThrough(labels, parseQuery(''))).toBe(true);
    expect(csvPassThrough(labels, parseQuery('select=id,name'))).toBe(true);
    expect(csvPassThrough(labels, parseQuery('select=name'))).toBe(false); // keyset would add the key
    expect(csvPassThrough(labels, parseQuery('select=name&order=name'))).toBe(true); // offset paging needs no key
    expect(csvPassThrough(labels, parseQuery('select=id,name:label'))).toBe(false);
    expect(csvPassThrough(labels, parseQuery('select=*,releases(*)'))).toBe(false);
  });
});
