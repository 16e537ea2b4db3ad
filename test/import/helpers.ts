import { createApp } from '../../src/server/app.js';
import type { Store } from '../../src/store/store.js';
import { appTransport, type HttpRequest, type HttpResponse, type Transport } from '../../src/import/transport.js';

export { file, table, tmp } from './files.js';

/** The real service, in process, over a store; records every request it answers. */
export function serverFor(
  store: Store,
  opts: { maxBodyBytes?: number; maxRows?: number } = {},
): Transport & { log: Array<{ req: HttpRequest; res: HttpResponse }> } {
  const inner = appTransport(createApp({ store, maxBodyBytes: opts.maxBodyBytes, maxRows: opts.maxRows, log: () => {} }));
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
