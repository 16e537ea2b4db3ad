import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/server/app.js';
import { MAX_NESTING, MAX_SELECT_NESTING } from '../../src/grammar/parse.js';
import type { Store } from '../../src/store/store.js';
import { STORE_KINDS, disposeStore } from '../support/stores.js';
import { appFor, seedFixture, send } from './support.js';

/** `releases(labels(releases(…)))`, `depth` embeds deep. */
function nestedSelect(depth: number): string {
  let s = 'id';
  for (let i = 0; i < depth; i++) s = `id,${(depth - 1 - i) % 2 === 0 ? 'labels' : 'releases'}(${s})`;
  return s;
}

/** `or=(and(or(…(id.eq.…))))`, `depth` levels deep. */
function nestedTree(depth: number): string {
  let s = 'release_title.eq.x';
  for (let i = 1; i < depth; i++) s = `${i % 2 === 0 ? 'or' : 'and'}(${s},release_title.eq.y)`;
  return `(${s})`;
}

/** No 5xx from nesting: deep `select` embeds and deep and/or trees are one clear parse error on both stores. */
for (const { kind, make, skip } of STORE_KINDS) {
  describe.skipIf(skip)(`nesting limits over ${kind}${skip ? ' (SKIPPED: set CATALOG_TEST_DATABASE_URL)' : ''}`, () => {
    let store: Store & { drop?(): Promise<void> };
    let app: App & { logged: string[] };
    beforeAll(async () => {
      store = await make();
      app = appFor(store);
      await seedFixture(store);
    });
    afterAll(async () => {
      expect(app?.logged ?? []).toEqual([]);
      if (store) await disposeStore(store);
    });

    it('a select with embeds nested 900 deep (a 7 KB URL) is 400 PGRST100, not a stack overflow', async () => {
      const r = await send(app, 'GET', `/releases?select=${encodeURIComponent(nestedSelect(900))}`);
      expect(r.status).toBe(400);
      expect(r.json.code).toBe('PGRST100');
      expect(r.json.details).toMatch(new RegExp(`^nested more than ${MAX_SELECT_NESTING} levels deep`));
      expect(r.json.message).toMatch(/^failed to parse select parameter \(id,(labels|releases)\(id/);
      expect(r.json.message.length).toBeLessThan(200);
    });

    it('an or/and tree 280 deep is the same 400 PGRST100 (PGlite answered 26000, PostgreSQL 200)', async () => {
      for (const key of ['or', 'not.and', 'labels.or']) {
        const r = await send(app, 'GET', `/releases?select=id,labels(id)&${key}=${encodeURIComponent(nestedTree(280))}`);
        expect([r.status, r.json.code]).toEqual([400, 'PGRST100']);
        expect(r.json.details).toMatch(/nested more than 64 levels deep/);
      }
    });

    it(`a tree ${MAX_NESTING} deep and a select ${MAX_SELECT_NESTING} deep are answered normally; one more level is the parse error`, async () => {
      const tree = await send(app, 'GET', `/releases?select=id&or=${encodeURIComponent(nestedTree(MAX_NESTING))}`);
      expect(tree.status).toBe(200);
      const deeper = await send(app, 'GET', `/releases?select=id&or=${encodeURIComponent(nestedTree(MAX_NESTING + 1))}`);
      expect([deeper.status, deeper.json.code]).toEqual([400, 'PGRST100']);
      const sel = await send(app, 'GET', `/releases?select=${encodeURIComponent(nestedSelect(MAX_SELECT_NESTING - 1))}&limit=1`);
      expect(sel.status).toBe(200);
      const tooDeep = await send(app, 'GET', `/releases?select=${encodeURIComponent(nestedSelect(MAX_SELECT_NESTING + 1))}&limit=1`);
      expect([tooDeep.status, tooDeep.json.code]).toEqual([400, 'PGRST100']);
    });
  });
}
