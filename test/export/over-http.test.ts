import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CatalogClient } from '../../src/client/client.js';
import { exportTable } from '../../src/export/export.js';
import { fileSink } from '../../src/export/sink.js';
import { importFile } from '../../src/import/engine.js';
import type { Transport } from '../../src/client/transport.js';
import { type RunningServer, startServer } from '../../src/server/listen.js';
import type { Store } from '../../src/store/store.js';
import { disposeStore, STORE_KINDS, tempDir } from '../support/stores.js';
import { file, rowsOf, serverFor, table, tmp } from '../import/support.js';

/** Rows whose CSV pages need every rewrite: multi-byte text, backslashes, quotes, line ends, nulls, empty strings. */
function artistsCsv(n: number): string {
  const lines = ['id,stage_name,city,is_signed,birthdate,metadata'];
  for (let i = 1; i <= n; i++) {
    const name = i % 5 === 0 ? '"Ψ \\\\ back""slash, ""quoted""\nline"' : i % 5 === 1 ? '\\N' : i % 5 === 2 ? '""' : `Künstler ${i} 東京`;
    const meta = i % 3 === 0 ? '"{""k"": ""v\\\\w""}"' : '';
    lines.push(`a0000000-0000-4000-8000-${String(i).padStart(12, '0')},${name},${i % 2 ? 'Berlin' : 'Αθήνα'},${i % 4 === 0},,${meta}`);
  }
  return lines.join('\n');
}

for (const kind of STORE_KINDS) {
  describe.skipIf(kind.skip)(`export over HTTP (${kind.kind})`, () => {
    let store: Store;
    let server: RunningServer;
    let client: CatalogClient;
    beforeAll(async () => {
      store = await kind.make();
      await importFile({ table: table('artists'), input: file(tmp(), 'a.csv', artistsCsv(130)) }, serverFor(store));
      server = await startServer({ store, port: 0, host: '127.0.0.1' });
      client = new CatalogClient({ baseUrl: server.url });
    });
    afterAll(async () => {
      await client?.close();
      await server?.close();
      await disposeStore(store);
    });

    async function exportTo(transport: Transport, name: string): Promise<{ n: number; text: string }> {
      const path = join(tempDir('export-'), name);
      const sink = fileSink(path);
      const n = await exportTable({ transport, table: table('artists'), format: 'csv', out: sink, pageSize: 17 });
      await sink.commit();
      return { n, text: readFileSync(path, 'utf8') };
    }

    it('writes the received bytes of CSV pages as the text path writes their text, and imports back to the same rows', async () => {
      let sawBytes = 0;
      const viaHttp: Transport = client; // the CLI's client is the Transport
      const counting: Transport = {
        async send(req) {
          const res = await viaHttp.send(req);
          if ((res as { bytes?: Uint8Array }).bytes) sawBytes++;
          return res;
        },
      };
      const bytes = await exportTo(counting, 'bytes.csv');
      const text = await exportTo(serverFor(store), 'text.csv');
      expect(sawBytes).toBeGreaterThan(7);
      expect(bytes.n).toBe(130);
      expect(bytes.text).toBe(text.text);
      expect(bytes.text).toContain('\\N');
      expect(bytes.text).toContain('東京');

      const copy = await kind.make();
      try {
        await importFile({ table: table('artists'), input: file(tmp(), 'back.csv', bytes.text) }, serverFor(copy));
        expect(await rowsOf(copy, 'artists')).toEqual(await rowsOf(store, 'artists'));
      } finally {
        await disposeStore(copy);
      }
    });
  });
}
