import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createApp } from '../../src/server/app.js';
import type { Store } from '../../src/store/store.js';
import { appTransport, type HttpRequest, type HttpResponse, type Transport } from '../../src/import/transport.js';
import { tableByName, type TableDef } from '../../src/schema/catalog.js';

/** A temp directory under the test root. */
export function tmp(prefix = 'import-'): string {
  return mkdtempSync(join(process.env.CATALOG_TEST_ROOT ?? '/tmp', prefix));
}

/** Writes a file in `dir` and returns its path. */
export function file(dir: string, name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

/** A table by name (throws if absent, so typos fail loudly). */
export function table(name: string): TableDef {
  const t = tableByName(name);
  if (!t) throw new Error(`no table ${name}`);
  return t;
}

/** The real service, in process, over a store; records every request it answers. */
export function serverFor(store: Store, opts: { maxBodyBytes?: number } = {}): Transport & { log: Array<{ req: HttpRequest; res: HttpResponse }> } {
  const inner = appTransport(createApp({ store, maxBodyBytes: opts.maxBodyBytes, log: () => {} }));
  const log: Array<{ req: HttpRequest; res: HttpResponse }> = [];
  return {
    log,
    async send(req) {
      const res = await inner.send(req);
      log.push({ req, res });
      return res;
    },
  };
}

/** Rows of a table as JS objects, ordered by id, optionally only some columns. */
export async function rowsOf(store: Store, name: string, columns = '*'): Promise<Record<string, unknown>[]> {
  const r = await store.query<{ j: Record<string, unknown>[] | null }>(
    `select coalesce(json_agg(t order by t.id), '[]'::json) as j from (select ${columns} from ${store.schema}.${name}) t`,
  );
  const j = r.rows[0].j;
  return typeof j === 'string' ? JSON.parse(j) : (j ?? []);
}

/** Row count of a table. */
export async function countOf(store: Store, name: string): Promise<number> {
  const r = await store.query<{ n: string | number }>(`select count(*) as n from ${store.schema}.${name}`);
  return Number(r.rows[0].n);
}
