import { createApp, type App } from '../../src/server/app.js';
import type { Store } from '../../src/store/store.js';

/** Fixed ids of the §13 fixture. */
export const L = ['10000000-0000-4000-8000-000000000001', '10000000-0000-4000-8000-000000000002', '10000000-0000-4000-8000-000000000003'];
export const G = ['30000000-0000-4000-8000-000000000001', '30000000-0000-4000-8000-000000000002'];
export const S = ['40000000-0000-4000-8000-000000000001'];
export const R = Array.from({ length: 15 }, (_, i) => `20000000-0000-4000-8000-0000000000${String(i + 1).padStart(2, '0')}`);
export const LABEL_NAMES = ['Blue Note', 'Verve', 'Impulse, Records'];
/** An id that exists nowhere. */
export const U = '99999999-0000-4000-8000-000000000000';

const TITLES = [
  'Kind of Blue', 'Blue Train', "Moanin'", "Somethin' Else", 'Vol. 2: Live (Remastered)', 'Maiden Voyage', 'Speak No Evil', 'Song for My Father',
  'Getz/Gilberto', 'Ella and Louis', 'Night Train', 'Jazz Samba', 'Verve Live, Vol. 1', 'Wave', 'Unlabelled Demo',
];

/**
 * The reference §13 fixture: 3 labels (the third without releases), 15 releases (R15 without a
 * label), 2 genres and a subgenre. Release i (1-based) is dated 1955+i (R15 undated), carries
 * `contracts = {"format": vinyl|cd, "year": 1955+i, "tags": [...]}` and `catalog_number = CAT-<i>`.
 */
export async function seedFixture(store: Store): Promise<void> {
  await store.transaction(async (tx) => {
    for (const t of ['tracks', 'releases', 'artists', 'labels', 'subgenres', 'genres', 'countries', 'languages']) await tx.query(`delete from ${t}`);
    for (let i = 0; i < 3; i++) await tx.query('insert into labels (id, name) values ($1, $2)', [L[i], LABEL_NAMES[i]]);
    await tx.query('insert into genres (id, name) values ($1, $2), ($3, $4)', [G[0], 'Jazz', G[1], 'Bossa Nova']);
    await tx.query('insert into subgenres (id, name, genre) values ($1, $2, $3)', [S[0], 'Hard Bop', 'Jazz']);
    for (let i = 0; i < 15; i++) {
      const n = i + 1;
      const label = n <= 8 ? L[0] : n <= 14 ? L[1] : null;
      const genre = n % 3 === 0 ? null : n % 2 === 0 ? G[1] : G[0];
      const meta = { format: n % 2 === 0 ? 'cd' : 'vinyl', year: 1955 + n, tags: n % 4 === 0 ? ['jazz', 'live'] : ['jazz'] };
      await tx.query(
        `insert into releases (id, release_title, release_date, label_id, genre_id, subgenre_id, catalog_number, contracts, is_compilation)
         values ($1, $2, $3, $4, $5, $6, $7, $8::text::jsonb, $9)`,
        [R[i], TITLES[i], n === 15 ? null : `${1955 + n}-0${(n % 9) + 1}-15`, label, genre, n <= 2 ? S[0] : null, `CAT-${n}`, JSON.stringify(meta), n % 5 === 0],
      );
    }
  });
}

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  /** Parsed JSON body, or undefined when the body is not JSON. */
  json: any;
}

/** Sends one request to the app (no sockets) and reads the answer. */
export async function send(app: App, method: string, path: string, opts: { headers?: Record<string, string>; body?: unknown } = {}): Promise<Reply> {
  const body = opts.body === undefined ? undefined : typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
  const headers = new Headers(opts.headers);
  if (body !== undefined && !headers.has('content-type')) headers.set('Content-Type', 'application/json');
  const res = await app.handle(new Request(`http://localhost${path}`, { method, headers, body }));
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

/** An app over a store, with unexpected errors collected instead of printed. */
export function appFor(store: Store, extra: { maxBodyBytes?: number; maxRows?: number; aggregates?: boolean } = {}): App & { logged: string[] } {
  const logged: string[] = [];
  const app = createApp({ store, log: (l) => logged.push(l), ...extra });
  return Object.assign(app, { logged });
}
