import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportTable, selectedColumns } from '../../src/export/export.js';
import { exportWriterOptions } from '../../src/export/writers.js';
import { createWriter } from '../../src/format/index.js';
import { parseQuery } from '../../src/grammar/parse.js';
import { importFile } from '../../src/import/engine.js';
import type { Store } from '../../src/store/store.js';
import { disposeStore, makePGliteStore } from '../support/stores.js';
import { countOf, file, rowsOf, serverFor, table, tmp } from '../import/support.js';

function sink() {
  const parts: string[] = [];
  return { write: async (t: string | Uint8Array) => void parts.push(typeof t === 'string' ? t : Buffer.from(t).toString('utf8')), text: () => parts.join('') };
}

describe('export', () => {
  let store: Store;
  beforeAll(async () => {
    store = await makePGliteStore();
    const lines = ['id,stage_name,city,is_signed,birthdate'];
    for (let i = 1; i <= 250; i++) lines.push(`a0000000-0000-4000-8000-${String(i).padStart(12, '0')},Artist ${i},${i % 2 ? 'Berlin' : 'Αθήνα'},${i % 3 === 0},`);
    await importFile({ table: table('artists'), input: file(tmp(), 'a.csv', lines.join('\n')) }, serverFor(store));
  });
  afterAll(async () => disposeStore(store));

  it('reads every row even when the server caps rows per response (db-max-rows)', async () => {
    const out = sink();
    const server = serverFor(store, { maxRows: 40 });
    const n = await exportTable({ transport: server, table: table('artists'), format: 'ndjson', out, pageSize: 100 });
    expect(n).toBe(250);
    const ids = out.text().trim().split('\n').map((l) => JSON.parse(l).id);
    expect(new Set(ids).size).toBe(250);
    // the first page came back short (40 of 100): the page asked for ahead by offset is dropped, and
    // paging goes on by keyset, one page at a time, after the last id seen
    const after = server.log.findIndex((l) => /id=gt\.a0000000-0000-4000-8000-000000000040&order=id&limit=100$/.test(l.req.query ?? ''));
    expect(after).toBeGreaterThan(0);
    expect(server.log.slice(after).length).toBeGreaterThan(0);
    expect(server.log.slice(after).every((l) => !/offset=/.test(l.req.query ?? ''))).toBe(true);
  });

  it('a sink that fails mid-way stops the export with its error; the failing page fetched ahead (reset simulated) is dropped quietly', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown) => void unhandled.push(e);
    process.on('unhandledRejection', onUnhandled);
    try {
      let writes = 0;
      const failing = {
        write: async () => {
          if (++writes === 2) throw new Error('disk full');
        },
      };
      const server = serverFor(store);
      let sent = 0;
      // the page fetched ahead fails too (a connection reset, simulated): nobody awaits it any more
      let reset: Promise<never> | undefined;
      const transport = {
        send: (req: Parameters<typeof server.send>[0]) =>
          ++sent === 2 ? (reset = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('connection reset')), 20))) : server.send(req),
      };
      await expect(exportTable({ transport, table: table('artists'), format: 'csv', out: failing, pageSize: 50 })).rejects.toThrow('disk full');
      // once the reset has happened and node has had a turn to report it if nobody handled it
      expect(reset).toBeDefined();
      await reset?.catch(() => {});
      await new Promise((r) => setImmediate(r));
      // the header, then the first page fails: the two pages ahead were already requested, no more
      expect(sent).toBe(3);
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('applies filters, a select without the key, an order (offset paging) and a limit', async () => {
    const out = sink();
    const q = parseQuery('select=stage_name,city&city=eq.Berlin&order=stage_name.desc&limit=30');
    const server = serverFor(store);
    const n = await exportTable({ transport: server, table: table('artists'), format: 'csv', out, query: q, pageSize: 8 });
    expect(n).toBe(30);
    const rows = parse(out.text(), { columns: true }) as Array<Record<string, string>>;
    expect(Object.keys(rows[0])).toEqual(['stage_name', 'city']);
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((r) => r.city === 'Berlin')).toBe(true);
    const expected = (await rowsOf(store, 'artists', 'stage_name,city,id'))
      .filter((r) => r.city === 'Berlin')
      .map((r) => r.stage_name as string)
      .sort()
      .reverse()
      .slice(0, 30);
    expect(rows.map((r) => r.stage_name)).toEqual(expected);
    expect(server.log.some((l) => /offset=8/.test(l.req.query ?? ''))).toBe(true);
  });

  it('CSV: jsonb as PostgreSQL prints it, booleans t/f, "" for an empty string (as COPY writes them), nulls readable back exactly', async () => {
    const out = sink();
    const w = createWriter('csv', exportWriterOptions(out, table('artists'), { columns: ['stage_name', 'is_signed', 'birthdate', 'metadata'] }));
    await w.write([
      { stage_name: null, is_signed: null, birthdate: null, metadata: 'text' },
      { stage_name: '', is_signed: true, birthdate: '2024-01-31', metadata: { a: [1] } },
    ]);
    await w.end();
    expect(out.text()).toBe('stage_name,is_signed,birthdate,metadata\n\\N,\\N,,"""text"""\n"",t,2024-01-31,"{""a"": [1]}"\n');
    const withToken = sink();
    const w2 = createWriter('csv', exportWriterOptions(withToken, table('artists'), { columns: ['stage_name', 'birthdate'], nullToken: 'NULL' }));
    await w2.write([{ stage_name: null, birthdate: null }]);
    await w2.end();
    expect(withToken.text()).toBe('stage_name,birthdate\nNULL,NULL\n');
  });

  it('an empty result is still a valid document in every format', async () => {
    for (const [format, expected] of [['csv', 'id,name\n'], ['json', '[]\n'], ['ndjson', ''], ['yaml', '[]\n']] as const) {
      const out = sink();
      const n = await exportTable({ transport: serverFor(store), table: table('labels'), format, out, query: parseQuery('select=id,name') });
      expect(n).toBe(0);
      expect(out.text()).toBe(expected);
    }
    expect(selectedColumns(parseQuery('select=*,labels(name)').select, table('releases'))).toContain('labels');
    expect(await countOf(store, 'labels')).toBe(0);
  });

  it('a page asked for ahead whose first row is not the last row written (rows removed meanwhile) is asked for again by keyset', async () => {
    const own = await makePGliteStore();
    try {
      const ids = Array.from({ length: 150 }, (_, i) => `a0000000-0000-4000-8000-${String(i + 1).padStart(12, '0')}`);
      await importFile({ table: table('artists'), input: file(tmp(), 'a.csv', ['id,stage_name', ...ids.map((id, i) => `${id},A${i}`)].join('\n')) }, serverFor(own));
      const server = serverFor(own);
      let sent = 0;
      const transport = {
        async send(req: Parameters<typeof server.send>[0]) {
          // the third request (rows 100-149, asked for by offset after row 50) is sent after row 60 went away:
          // its rows start one further on, and its first row is no longer row 100
          if (++sent === 3) await own.query(`delete from ${own.schema}.artists where id = '${ids[59]}'`);
          return server.send(req);
        },
      };
      const out = sink();
      const n = await exportTable({ transport, table: table('artists'), format: 'csv', out, pageSize: 50 });
      const written = (parse(out.text(), { columns: true }) as Array<Record<string, string>>).map((r) => r.id);
      expect(new Set(written).size).toBe(written.length);
      expect(n).toBe(written.length);
      // row 60 was read before it went away (or not at all); every other row is there exactly once
      expect(written.filter((id) => id !== ids[59])).toEqual(ids.filter((id) => id !== ids[59]));
      expect(server.log.some((l) => new RegExp(`id=gt\\.${ids[99]}&order=id&limit=50$`).test(l.req.query ?? ''))).toBe(true);
    } finally {
      await disposeStore(own);
    }
  });

  it('keeps two pages on their way by keyset and offset from the last key, and reads every row once', async () => {
    const server = serverFor(store);
    const out = sink();
    const n = await exportTable({ transport: server, table: table('artists'), format: 'ndjson', out, pageSize: 30 });
    expect(n).toBe(250);
    const ids = out.text().trim().split('\n').map((l) => JSON.parse(l).id as string);
    expect(ids).toEqual([...ids].sort());
    expect(new Set(ids).size).toBe(250);
    const queries = server.log.map((l) => l.req.query ?? '');
    expect(queries[0]).toBe('order=id&limit=30');
    expect(queries[1]).toBe('order=id&limit=31&offset=29');
    expect(queries[2]).toMatch(/^id=gt\.a0000000-0000-4000-8000-000000000030&order=id&limit=31&offset=29$/);
  });
});
