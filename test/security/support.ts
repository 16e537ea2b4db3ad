import { existsSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { TABLES } from '../../src/schema/catalog.js';
import type { Store } from '../../src/store/store.js';

/** Every catalog table plus the canary and the migrations ledger: what an injection would touch. */
export const WATCHED = [...TABLES.map((t) => t.name), 'canary', 'catalog_migrations'];

/** A file an injected `COPY ... TO PROGRAM` would create. */
export const PWNED_FILE = `/tmp/catalog-pwned-${process.pid}`;

/** Creates the canary: a table no request may ever reach, holding one known row. */
export async function plantCanary(store: Store): Promise<void> {
  await store.query('create table if not exists canary (id int primary key, note text not null)');
  await store.query(`insert into canary values (1, 'intact') on conflict (id) do update set note = 'intact'`);
}

export interface Snapshot {
  /** Tables in the store's schema, sorted. */
  tables: string[];
  /** Row count per watched table. */
  counts: Record<string, number>;
  canary: Array<{ id: number; note: string }>;
  pwnedFile: boolean;
}

/** What the database looks like now, for before/after comparisons. */
export async function snapshot(store: Store): Promise<Snapshot> {
  const tables = (await store.query<{ t: string }>('select tablename as t from pg_tables where schemaname = $1 order by 1', [store.schema])).rows.map((r) => r.t);
  const counts: Record<string, number> = {};
  for (const t of WATCHED) {
    if (!tables.includes(t)) continue;
    counts[t] = Number((await store.query<{ n: unknown }>(`select count(*) as n from "${t}"`)).rows[0].n);
  }
  const canary = tables.includes('canary') ? (await store.query<{ id: number; note: string }>('select id, note from canary order by id')).rows : [];
  return { tables, counts, canary, pwnedFile: existsSync(PWNED_FILE) };
}

export interface RawReply {
  status: number;
  head: string;
  body: string;
}

/** Writes raw bytes to the server (anything node's HTTP client would refuse to send) and reads the whole answer. */
export function rawExchange(url: string, bytes: Buffer | string): Promise<RawReply> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [head, ...rest] = text.split('\r\n\r\n');
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), head, body: rest.join('\r\n\r\n') });
    });
    socket.end(bytes);
  });
}

/** One request over a real socket with node:http (no fetch rules about header values). */
export function httpExchange(
  url: string,
  opts: { method?: string; path: string; headers?: Record<string, string>; body?: string | Buffer },
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  const base = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: base.hostname, port: base.port, method: opts.method ?? 'GET', path: opts.path, headers: opts.headers, agent: false },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}
