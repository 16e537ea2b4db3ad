import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Transport } from '../../src/client/transport.js';
import { importFile } from '../../src/import/engine.js';
import type { Store } from '../../src/store/store.js';
import { makePGliteStore } from '../support/stores.js';
import { countOf, file, serverFor, table, tmp } from './support.js';
import { TABLES } from '../../src/schema/catalog.js';

/** Issue 35: a sync cut off while removing says exactly what it applied, and its re-run finishes it. */

describe('a sync stopped part way through its removals', () => {
  let store: Store;
  beforeAll(async () => {
    store = await makePGliteStore();
  });
  afterAll(async () => store.close());

  it('(a connection lost on the third DELETE, a stand-in transport: the fault cannot be made on cue otherwise) names how many were removed; the same command again removes the rest', async () => {
    const dir = tmp();
    const all = file(dir, 'all.csv', `name\n${Array.from({ length: 600 }, (_, i) => `Stop ${String(i).padStart(3, '0')}`).join('\n')}\n`);
    await importFile({ table: table('countries'), input: all }, serverFor(store));
    const kept = file(dir, 'kept.csv', 'name\nStop 000\n');
    const real = serverFor(store);
    let deletes = 0;
    const flaky: Transport = {
      ...real,
      send: async (req) => {
        if (req.method === 'DELETE' && ++deletes === 3) throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
        return real.send(req);
      },
    };
    const sync = { scope: 'all' as const, scopeText: 'all', cascade: false, tables: TABLES };
    const err = await importFile({ table: table('countries'), input: kept, sync }, flaky).catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    const removed = 600 - (await countOf(store, 'countries'));
    expect(removed).toBeGreaterThan(0);
    expect(removed).toBeLessThan(599);
    expect((err as Error).message).toBe(`sync stopped (socket hang up) after removing ${removed} of 599 countries; the input's rows are imported. Run the same command again to finish: it removes the rest`);
    const again = await importFile({ table: table('countries'), input: kept, sync }, real);
    expect(again.sync?.deletes).toBe(599 - removed);
    expect(await countOf(store, 'countries')).toBe(1);
  });
});
