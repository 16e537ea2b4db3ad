import { MIGRATIONS, type Migration } from '../schema/migrations.js';
import type { Queryable } from './store.js';

export interface MigrateResult {
  applied: number[];
  version: number;
}

type Migratable = Queryable & { transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> };

/**
 * Brings a database up to the newest schema version. Idempotent: versions already recorded in
 * `catalog_migrations` are skipped, so an existing data directory upgrades in place. Each step
 * runs in a transaction holding an advisory lock, so two servers starting together over one
 * PostgreSQL do not race.
 */
export async function migrate(db: Migratable, migrations: readonly Migration[] = MIGRATIONS): Promise<MigrateResult> {
  const applied: number[] = [];
  let version = 0;
  for (const m of migrations) {
    const done = await db.transaction(async (tx) => {
      // a migration (or the wait for another server's) may take longer than requests may
      await tx.query(`select set_config('statement_timeout', '0', true)`);
      await tx.query(`select pg_advisory_xact_lock(hashtext(current_schema() || '.catalog_migrations'))`);
      await tx.query(`create table if not exists catalog_migrations (
        version integer primary key,
        name text not null,
        applied_at timestamptz not null default now()
      )`);
      const has = await tx.query('select 1 from catalog_migrations where version = $1', [m.version]);
      if (has.rows.length > 0) return true;
      for (const stmt of splitStatements(m.sql)) await tx.query(stmt);
      await tx.query('insert into catalog_migrations (version, name) values ($1, $2)', [m.version, m.name]);
      return false;
    });
    if (!done) applied.push(m.version);
    version = m.version;
  }
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
