import { quoteIdent } from '../schema/identifiers.js';
import { UUID_RE } from '../schema/in-database.js';
import type { Store } from '../store/store.js';
import { ApiError } from './errors.js';
import { reply, type Reply } from './reply.js';

/**
 * Unchanged re-runs (issue 35, migration 11): an import that left the catalog as its file says is
 * recorded with the catalog's write count, and a later run of the same file and settings that
 * finds the count unchanged has nothing to send. The count (`catalog_writes`) advances at every
 * statement that writes a collection or its source ids, from any writer (a statement trigger,
 * enabled ALWAYS); a writer holds a shared advisory lock until it commits, so "no writer is open"
 * can be asked without waiting. The exact rule, and why it is exact, is docs/service.md's
 * ("Unchanged re-runs"); this module is the service's side: the two functions callable as
 * PostgREST calls functions (`POST /rpc/<name>` with named arguments), and the setting a write
 * with `Prefer: run=<uuid>` makes so the counter knows the run's own statements.
 */

/** What a write with `Prefer: run=` sets in its transaction, to the run's id (read by migration 11's trigger). */
export const RUN_SETTING = 'catalog.run';

/** The functions served at `/rpc/<name>`, each with its named arguments in order. */
const FUNCTIONS = {
  catalog_import_run_check: { args: ['fingerprint'], casts: ['text'] },
  catalog_import_run_record: { args: ['fingerprint', 'run', 'started', 'records'], casts: ['text', 'uuid', 'bigint', 'bigint'] },
} as const;

export type RunFunction = keyof typeof FUNCTIONS;

export interface RunCall {
  kind: 'run';
  name: RunFunction;
  args: unknown[];
}

/** Whether `/rpc/<name>` is one of ours. */
export function isRunFunction(name: string): name is RunFunction {
  return Object.hasOwn(FUNCTIONS, name);
}

/** A run's fingerprint, `<probe>.<hash>` (migration 12); a check may also ask by the probe alone. */
const FINGERPRINT = /^[0-9a-f]{64}\.[0-9a-f]{64}$/;
const PROBE = /^[0-9a-f]{64}$/;
// a run's tag as migration 11's trigger accepts it: the canonical (lower-case) form
const UUID = new RegExp(UUID_RE);

/**
 * A call's JSON body (an object of named arguments) checked and in order. A wrong body is a 400
 * naming the argument, as PostgREST's PGRST102 names a body it cannot read.
 * @example parseRunCall('catalog_import_run_check', '{"fingerprint":"ab…"}')
 */
export function parseRunCall(name: RunFunction, body: string): RunCall {
  let obj: unknown;
  try {
    obj = JSON.parse(body);
  } catch {
    throw new ApiError(400, 'PGRST102', 'Empty or invalid json');
  }
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) throw new ApiError(400, 'PGRST102', `${name} takes an object of named arguments`);
  const given = obj as Record<string, unknown>;
  const def = FUNCTIONS[name];
  const extra = Object.keys(given).filter((k) => !(def.args as readonly string[]).includes(k));
  if (extra.length) throw new ApiError(400, 'PGRST102', `${name} has no argument ${extra.join(', ')} (it takes ${def.args.join(', ')})`);
  const args = def.args.map((a) => {
    const v = given[a];
    const probeToo = name === 'catalog_import_run_check';
    const ok =
      a === 'fingerprint'
        ? typeof v === 'string' && (FINGERPRINT.test(v) || (probeToo && PROBE.test(v)))
        : a === 'run'
          ? typeof v === 'string' && UUID.test(v)
          : a === 'started'
            ? v === null || Number.isSafeInteger(v)
            : Number.isSafeInteger(v) && (v as number) >= 0;
    const fingerprintForm = `two runs of 64 lower-case hex digits joined by a dot${probeToo ? ' (or the first alone)' : ''}`;
    if (!ok) throw new ApiError(400, 'PGRST102', `${name}: argument ${a} is missing or not ${a === 'fingerprint' ? fingerprintForm : a === 'run' ? 'a lower-case uuid' : 'an integer'}`);
    return v;
  });
  return { kind: 'run', name, args };
}

/** Runs a call as the service's own role (the functions are revoked from PUBLIC) and answers its JSON. */
export async function runReply(store: Store, call: RunCall): Promise<Reply> {
  const sql = `SELECT ${quoteIdent(store.schema)}.${call.name}(${FUNCTIONS[call.name].casts.map((c, i) => `$${i + 1}::${c}`).join(', ')}) AS r`;
  const row = (await store.query<{ r: unknown }>(sql, call.args)).rows[0];
  const value = typeof row?.r === 'string' ? row.r : JSON.stringify(row?.r ?? null);
  return reply(200, { 'content-type': 'application/json; charset=utf-8' }, value);
}
