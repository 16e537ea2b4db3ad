import { createApp } from '../../src/server/app.js';
import type { Store } from '../../src/store/store.js';
import { COPY_CSV } from '../../src/grammar/media.js';
import { appTransport, type HttpRequest, type HttpResponse, type HttpStream, type Transport } from '../../src/client/transport.js';

export { file, table, tmp } from './support-files.js';

/** The real service, in process, over a store; records every request it answers. */
export function serverFor(
  store: Store,
  opts: { maxBodyBytes?: number; maxRows?: number; plainPostgrest?: boolean; streams?: boolean } = {},
): Transport & { log: Array<{ req: HttpRequest; res: HttpResponse }> } {
  const inner = appTransport(createApp({ store, maxBodyBytes: opts.maxBodyBytes, maxRows: opts.maxRows, log: () => {} }));
  const log: Array<{ req: HttpRequest; res: HttpResponse }> = [];
  return {
    log,
    async send(req) {
      // plainPostgrest: a stand-in for PostgREST 12, which has no COPY bodies and answers them as it
      // answers any Content-Type it does not take (the import must fall back to JSON bodies)
      const mime = req.headers?.['Content-Type'] ?? '';
      const res =
        opts.plainPostgrest && mime === COPY_CSV
          ? {
              status: 400,
              headers: { 'content-type': 'application/json; charset=utf-8' },
              body: JSON.stringify({ code: 'PGRST102', details: null, hint: null, message: `Content-Type not acceptable: ${mime}` }),
            }
          : await inner.send(req);
      log.push({ req, res });
      return res;
    },
    // streams: bodies read as they arrive (export's COPY reads); plainPostgrest answers the COPY
    // media type as PostgREST 12 answers any Accept it does not offer: 406 PGRST107
    ...(opts.streams
      ? {
          async stream(req: HttpRequest): Promise<HttpStream> {
            const accept = req.headers?.Accept ?? '';
            if (opts.plainPostgrest && accept === COPY_CSV) {
              const body = JSON.stringify({ code: 'PGRST107', details: null, hint: null, message: `None of these media types are available: ${accept}` });
              log.push({ req, res: { status: 406, headers: {}, body } });
              return { status: 406, headers: { 'content-type': 'application/json; charset=utf-8' }, body: (async function* () {})(), text: async () => body, cancel() {} };
            }
            const res = await inner.stream!(req);
            log.push({ req, res: { status: res.status, headers: res.headers, body: '(streamed)' } });
            return res;
          },
        }
      : {}),
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

/** Rows a POST body carried: a JSON array's elements, or a COPY body's lines after the header. */
export function bodyRows(req: HttpRequest): number {
  const text = typeof req.body === 'string' ? req.body : Buffer.from(req.body ?? new Uint8Array()).toString('utf8');
  if (req.headers?.['Content-Type'] === COPY_CSV) return text.split('\n').filter((l) => l !== '').length - 1;
  return (JSON.parse(text) as unknown[]).length;
}

/** The service's Catalog-Counts of a response as numbers (missing parts 0). */
export function countsOf(res: HttpResponse): { inserted: number; updated: number; unchanged: number } {
  const out = { inserted: 0, updated: 0, unchanged: 0 };
  for (const part of (res.headers['catalog-counts'] ?? '').split(',')) {
    const [k, v] = part.trim().split('=');
    if (k === 'inserted' || k === 'updated' || k === 'unchanged') out[k] = Number(v);
  }
  return out;
}
