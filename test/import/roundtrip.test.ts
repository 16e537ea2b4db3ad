import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportTable } from '../../src/export/export.js';
import { importFile } from '../../src/import/engine.js';
import type { InputFormat } from '../../src/import/types.js';
import { TABLES } from '../../src/schema/catalog.js';
import { foreignKeyOrder } from '../../src/schema/model.js';
import type { Store } from '../../src/store/store.js';
import { disposeStore, STORE_KINDS } from '../support/stores.js';
import { bodyRows, countOf, countsOf, file, rowsOf, serverFor, table, tmp } from './support.js';

const SEED = join(import.meta.dirname, '..', '..', 'fixtures', 'seed');
// parents first: releases list their tracks, tracks credit artists (as catalog import DIR orders them)
const ORDER = foreignKeyOrder(TABLES).map((t) => t.name);

function memorySink() {
  const parts: string[] = [];
  return { write: async (t: string) => void parts.push(t), text: () => parts.join('') };
}

for (const kind of STORE_KINDS) {
  describe.skipIf(kind.skip)(`import/export round trip (${kind.kind})`, () => {
    let a: Store & { drop?(): Promise<void> };
    beforeAll(async () => {
      a = await kind.make();
      for (const name of ORDER) {
        const s = await importFile({ table: table(name), input: join(SEED, `${name}.csv`) }, serverFor(a));
        expect(s.rejected, `${name}: ${JSON.stringify(s.rejectedRows)}`).toBe(0);
      }
    });
    afterAll(async () => disposeStore(a));

    it('lands every fixture row with text kept exactly', async () => {
      for (const name of ORDER) {
        const records = parse(readFileSync(join(SEED, `${name}.csv`)), { columns: true }) as Record<string, string>[];
        expect(await countOf(a, name)).toBe(records.length);
      }
      const releases = parse(readFileSync(join(SEED, 'releases.csv')), { columns: true }) as Record<string, string>[];
      const stored = new Map((await rowsOf(a, 'releases')).map((r) => [r.id, r]));
      for (const r of releases) {
        const s = stored.get(r.id)!;
        expect(s.upc_code).toBe(r.upc_code); // leading zeros
        expect(s.release_title).toBe(r.release_title); // quotes, commas, newlines, padding
        expect(s.description).toBe(r.description);
        expect(s.release_date).toBe(r.release_date === '' ? null : r.release_date);
        expect(s.label_id).toBe(r.label_id === '' ? null : r.label_id);
        expect(s.is_compilation).toBe(r.is_compilation === 'true');
        expect(s.cover_artwork).toEqual(r.cover_artwork === '' ? null : JSON.parse(r.cover_artwork));
        expect(s.created).toBe(r.created); // fixtures print timestamps as PostgreSQL does
      }
      const titles = (await rowsOf(a, 'labels', 'id,name')).map((r) => r.name);
      expect(titles).toContain('東京レコード');
      expect(titles).toContain('  Spaced Out Records  ');
      expect(titles).toContain('Label\nWith Newline');
    });

    it('a second import of the same files changes nothing', async () => {
      const before = await rowsOf(a, 'artists');
      for (const name of ORDER) {
        const server = serverFor(a);
        const s = await importFile({ table: table(name), input: join(SEED, `${name}.csv`) }, server);
        expect({ inserted: s.inserted, updated: s.updated, rejected: s.rejected }).toEqual({ inserted: 0, updated: 0, rejected: 0 });
        expect(s.unchanged).toBe(await countOf(a, name));
        // the rows go to the service, which compares them itself (unchanged=skip) and writes none
        for (const l of server.log.filter((x) => x.req.method === 'POST')) expect(countsOf(l.res)).toMatchObject({ inserted: 0, updated: 0 });
      }
      expect(await rowsOf(a, 'artists')).toEqual(before); // `updated` untouched too
    });

    for (const format of ['csv', 'json', 'ndjson', 'yaml'] as InputFormat[]) {
      it(`exports as ${format} and imports into an empty catalog identically`, async () => {
        const b = await kind.make();
        try {
          const dir = tmp('rt-');
          for (const name of ORDER) {
            const sink = memorySink();
            const n = await exportTable({ transport: serverFor(a), table: table(name), format, out: sink, pageSize: 37 });
            expect(n).toBe(await countOf(a, name));
            const p = file(dir, `${name}.${format}`, sink.text());
            const s = await importFile({ table: table(name), input: p }, serverFor(b));
            expect(s.rejected, JSON.stringify(s.rejectedRows.slice(0, 3))).toBe(0);
            expect(s.inserted).toBe(n);
          }
          for (const name of ORDER) expect(await rowsOf(b, name), name).toEqual(await rowsOf(a, name));
        } finally {
          await disposeStore(b);
        }
      });
    }
  });
}
