import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importFile } from '../../src/import/engine.js';
import { disposeStore, makePGliteStore } from '../support/stores.js';
import type { Store } from '../../src/store/store.js';
import { countOf, file, rowsOf, serverFor, table, tmp } from './helpers.js';

describe('smoke', () => {
  let store: Store;
  beforeAll(async () => {
    store = await makePGliteStore();
  });
  afterAll(async () => disposeStore(store));

  it('imports the seed labels', async () => {
    const dir = tmp();
    const p = file(dir, 'labels.csv', 'id,name\n00000000-0000-4000-8000-000000000001,"Smith, Jones"\n00000000-0000-4000-8000-000000000002,\n');
    const server = serverFor(store);
    const s = await importFile({ table: table('labels'), input: p }, server);
    console.log(s, server.log.map((l) => [l.req.method, l.req.query, l.res.status, l.res.body.slice(0, 300)]));
    expect(await countOf(store, 'labels')).toBe(2);
    console.log(await rowsOf(store, 'labels', 'id,name'));
  });
});
