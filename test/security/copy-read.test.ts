import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/server/app.js';
import { COPY_CSV } from '../../src/grammar/media.js';
import type { Store } from '../../src/store/store.js';
import { disposeStore, STORE_KINDS } from '../support/stores.js';
// @ts-expect-error plain JavaScript module shared with scripts/fuzz.mjs
import { hostileCorpus, injectionPlaces, invariants, seedSmall } from './cases.mjs';

/**
 * The COPY read (our extension) writes every value into its SQL as a literal, where other reads bind
 * parameters: every hostile string in every place a read carries text answers with the status the
 * JSON read gives (never a 5xx), and changes nothing.
 */
for (const kind of STORE_KINDS) {
  describe.skipIf(kind.skip)(`hostile input in COPY reads (${kind.kind}${kind.skip ? ', SKIPPED: set CATALOG_TEST_DATABASE_URL' : ''})`, () => {
    let store: Store & { drop?(): Promise<void> };
    let app: App;
    const logged: string[] = [];
    beforeAll(async () => {
      store = await kind.make();
      await seedSmall(store);
      app = createApp({ store, log: (l) => logged.push(l) });
    });
    afterAll(async () => {
      if (store) await disposeStore(store);
    });

    it('answers as the JSON read does, and leaves the catalog as it was', async () => {
      const before = await invariants(store);
      // a third of the corpus, every kind of string in it (the long run is scripts/fuzz.mjs's business)
      const corpus = hostileCorpus().filter((_: unknown, i: number) => i % 3 === 0);
      const mismatches: string[] = [];
      for (const h of corpus) {
        for (const spec of injectionPlaces(h)) {
          // the places whose text reaches the statement (where COPY has literals, the others parameters)
          if (spec.method !== 'GET' || !/^(filter value|logic tree|json path|embedded filter|select cast|limit|offset|Range)/.test(spec.place)) continue;
          let url: URL;
          try {
            url = new URL(spec.path, 'http://localhost');
          } catch {
            continue;
          }
          const headers = new Headers();
          let bad = false;
          for (const [k, v] of Object.entries(spec.headers ?? {})) {
            try {
              headers.set(k, v as string);
            } catch {
              bad = true;
            }
          }
          if (bad) continue;
          const json = await app.handle(new Request(url, { headers }));
          headers.set('Accept', COPY_CSV);
          const copy = await app.handle(new Request(url, { headers }));
          await json.text();
          await copy.text();
          if (copy.status >= 500 || copy.status !== json.status) mismatches.push(`${spec.place} ${JSON.stringify(h)}: JSON ${json.status}, COPY ${copy.status}`);
        }
      }
      expect(mismatches).toEqual([]);
      expect(logged).toEqual([]);
      expect(await invariants(store)).toBe(before);
    });
  });
}
