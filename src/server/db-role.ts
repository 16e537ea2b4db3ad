import type { Queryable } from '../store/store.js';
import type { Principal } from './auth.js';
import { ApiError } from './errors.js';
import { COPY_CSV } from '../grammar/media.js';

/**
 * `--db-roles` (issue 38 item 4): each request's transaction runs as the PostgreSQL role its JWT
 * names (or `db-anon-role`), as PostgREST runs it, so the database's grants and row-level security
 * policies decide what it may read and write. The role and the claims are set for the transaction
 * only (`set_config(…, true)`, what `SET LOCAL` does): the pooled session is itself again after
 * the commit or rollback, and behind PgBouncer in transaction mode nothing leaks to another client.
 */

/** Whether the request must run in a transaction of its own to take its role (a plain read otherwise runs without one). */
export function runsAsRole(principal: Principal | undefined): boolean {
  return principal?.dbRole !== undefined;
}

/**
 * The request's first statement in its transaction: its role, and its claims as
 * `request.jwt.claims` (the role included), which policies read as PostgREST's do:
 * `current_setting('request.jwt.claims', true)::json->>'sub'`.
 */
export async function actAs(tx: Queryable, principal: Principal | undefined): Promise<void> {
  if (principal?.dbRole === undefined) return;
  const claims = JSON.stringify({ ...(principal.claims ?? {}), role: principal.dbRole });
  await tx.query(`select set_config('role', $1, true), set_config('request.jwt.claims', $2, true)`, [principal.dbRole, claims]);
}

/**
 * A COPY read runs outside a request transaction (it streams from a connection of its own), so it
 * cannot take a role: under `--db-roles` it is refused as a media type not offered (406), and
 * `catalog export` falls back to JSON pages, which run as the role.
 */
export function refuseCopyAsRole(principal: Principal | undefined): void {
  if (!runsAsRole(principal)) return;
  throw new ApiError(406, 'PGRST107', `None of these media types are available: ${COPY_CSV}`, {
    details: 'COPY reads are not offered when requests run as database roles (--db-roles)',
  });
}
