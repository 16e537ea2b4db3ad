import { MIGRATIONS, type Migration } from '../schema/migrations.js';
import type { Queryable } from './store.js';

export interface MigrateResult {
  applied: number[];
  version: number;
}

/**
 * Brings a database up to the newest schema version. Idempotent: versions already recorded in
 * `catalog_migrations` are skipped, so an existing data directory upgrades in place.
 */
export async function migrate(
  db: Queryable & { transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> },
  migrations: readonly Migration[] = MIGRATIONS,
): Promise<MigrateResult> {
  await db.query(`create table if not exists catalog_migrations (
    version integer primary key,
    name text not null,
    applied_at timestamptz not null default now()
  )`);
  const done = new Set(
    (await db.query<{ version: number }>('select version from catalog_migrations')).rows.map((r) => Number(r.version)),
  );
  const applied: number[] = [];
  for (const m of migrations) {
    if (done.has(m.version)) continue;
    await db.transaction(async (tx) => {
      for (const stmt of splitStatements(m.sql)) await tx.query(stmt);
      await tx.query('insert into catalog_migrations (version, name) values ($1, $2) on conflict do nothing', [m.version, m.name]);
    });
    applied.push(m.version);
  }
  const version = Math.max(0, ...done, ...applied);
  return { applied, version };
}

/** Splits a migration into statements, keeping `$$ ... $$` bodies whole. */
export function splitStatements(sql: string): string[] {
  const out: string[] = [];
  let cur = '';
  let inDollar = false;
  for (let i = 0; i < sql.length; i++) {
    if (sql.startsWith('$$', i)) {
      inDollar = !inDollar;
      cur += '$$';
      i++;
      continue;
    }
    const ch = sql[i];
    if (ch === ';' && !inDollar) {
      if (cur.trim()) out.push(cur.trim());
      cur = '';
    } else cur += ch;
  }
  if (cur.trim()) out.push(cur.trim());
  return out;
}
