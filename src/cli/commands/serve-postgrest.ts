import { didYouMean } from '../../format/suggest.js';
import { UsageError } from '../errors.js';
import type { ServeSettings } from './serve-settings.js';

/**
 * PostgREST's names for `catalog serve`'s settings (issue 38 item 3): its config file's keys, and
 * the same keys as `PGRST_*` environment variables (`db-uri` → `PGRST_DB_URI`). A key that means
 * what one of ours means is taken as that setting; one that does not is refused by name, saying
 * why; none is ignored. A key catalog cannot follow is still accepted at the value that describes
 * what catalog does anyway (`db-tx-end = "commit"`), so a config written out in full keeps working.
 */
type PostgrestKey =
  | { ours: keyof ServeSettings; value?: (v: string, where: string) => string }
  /** No counterpart: accepted only at these values (what catalog does), else refused with `why`. */
  | { only: string[]; why: string };

/** PostgREST 12.2's `server-host` special addresses: any IPv4 (`*4`, `!4`, `*`) or IPv6 (`*6`, `!6`) address. */
function serverHost(v: string): string {
  if (v === '*' || v === '*4' || v === '!4') return '0.0.0.0';
  if (v === '*6' || v === '!6') return '::';
  return v;
}

/** `db-schemas`: catalog serves one schema; a list of several is refused. */
function oneSchema(v: string, where: string): string {
  const list = v.split(',').map((s) => s.trim()).filter(Boolean);
  if (list.length !== 1) throw new UsageError(`${where}: db-schemas = "${v}" is not supported: catalog serves one schema (its eight tables); name one, as --db-schema does`);
  return list[0];
}

const FUNCTIONS = 'catalog calls no functions of yours: its requests are the eight tables';

export const POSTGREST_KEYS: Readonly<Record<string, PostgrestKey>> = {
  'db-uri': { ours: 'databaseUrl' },
  'db-schemas': { ours: 'dbSchema', value: oneSchema },
  'db-schema': { ours: 'dbSchema', value: oneSchema },
  'db-anon-role': { ours: 'dbAnonRole' },
  'db-pool': { ours: 'dbPool' },
  'db-pool-acquisition-timeout': { ours: 'dbPoolAcquisitionTimeout' },
  'db-max-rows': { ours: 'maxRows' },
  'db-aggregates-enabled': { ours: 'aggregates' },
  'jwt-secret': { ours: 'jwtSecret' },
  'jwt-aud': { ours: 'jwtAud' },
  'jwt-role-claim-key': { ours: 'jwtRoleClaimKey' },
  'server-host': { ours: 'host', value: serverHost },
  'server-port': { ours: 'port' },
  'admin-server-port': { ours: 'adminPort' },
  'server-cors-allowed-origins': { ours: 'corsOrigins' },
  'log-level': { ours: 'logLevel' },
  'jwt-secret-is-base64': { only: ['false'], why: 'give the secret as text (or a JWK: {"kty":"oct","k":"<base64url>"})' },
  'jwt-cache-max-lifetime': { only: ['0'], why: 'catalog verifies every token, it keeps no cache of them' },
  'db-tx-end': { only: ['commit'], why: 'catalog commits every request (rollback modes are for testing PostgREST)' },
  'db-extra-search-path': { only: ['public', ''], why: 'catalog sets search_path to its one schema' },
  'db-prepared-statements': { only: ['true', 'false'], why: '' },
  'db-channel-enabled': { only: ['false'], why: 'catalog listens on no channel: send it SIGUSR1 to reload the schema description' },
  'db-channel': { only: ['pgrst'], why: 'catalog listens on no channel: send it SIGUSR1 to reload the schema description' },
  'db-config': { only: ['false'], why: 'catalog reads no settings from the database: send it SIGUSR2 to reload the configuration' },
  'db-plan-enabled': { only: ['false'], why: 'catalog does not answer Accept: application/vnd.pgrst.plan' },
  'db-pre-request': { only: [''], why: FUNCTIONS },
  'db-pre-config': { only: [''], why: FUNCTIONS },
  'db-root-spec': { only: [''], why: 'the root answers catalog\'s own OpenAPI description' },
  'db-use-legacy-gucs': { only: ['true'], why: 'catalog sets request.jwt.claims as one JSON setting, which is what PostgREST 12 does' },
  'db-pool-max-lifetime': { only: [], why: 'catalog keeps a pooled connection until it is idle for 10 s' },
  'db-pool-max-idletime': { only: [], why: 'catalog closes a pooled connection idle for 10 s' },
  'db-pool-automatic-recovery': { only: ['true'], why: 'catalog always retries the database' },
  'db-hoisted-tx-settings': { only: [], why: FUNCTIONS },
  'openapi-mode': { only: ['follow-privileges', 'ignore-privileges'], why: 'catalog always answers the root with its OpenAPI description of the eight tables' },
  'openapi-security-active': { only: ['false'], why: 'the OpenAPI description carries no securityDefinitions' },
  'openapi-server-proxy-uri': { only: [''], why: 'the description\'s host is the request\'s Host' },
  'server-unix-socket': { only: [''], why: 'catalog listens on TCP only (--host, --port)' },
  'server-unix-socket-mode': { only: ['660'], why: 'catalog listens on TCP only (--host, --port)' },
  'server-trace-header': { only: [''], why: 'catalog echoes no trace header' },
  'server-timing-enabled': { only: ['false'], why: 'catalog sends no Server-Timing header' },
  'admin-server-host': { only: [], why: 'the admin port listens on --host' },
};

/**
 * The setting a PostgREST key (from a config file or a PGRST_* variable) gives, or null when the
 * key is one catalog describes itself with at that value (`db-tx-end = "commit"`).
 * @example fromPostgrest('db-uri', 'postgres://db/x', 'PGRST_DB_URI') // ['databaseUrl', 'postgres://db/x']
 */
export function fromPostgrest(key: string, value: string, where: string): [keyof ServeSettings, string] | null {
  if (key.startsWith('app.settings.')) throw new UsageError(`${where}: ${key} is not supported: ${FUNCTIONS}, so no app.settings.* are read`);
  const known = POSTGREST_KEYS[key];
  if (!known) return null;
  if ('ours' in known) return [known.ours, known.value ? known.value(value, where) : value];
  if (known.only.includes(value)) return null;
  throw new UsageError(`${where}: ${key} = "${value}" is not supported: ${known.why}`, known.only.length ? `accepted: ${known.only.map((v) => JSON.stringify(v)).join(', ')}` : undefined);
}

/** A PostgREST key's PGRST_* variable: `db-uri` → `PGRST_DB_URI`, `app.settings.x` → `PGRST_APP_SETTINGS_X`. */
export function pgrstVariable(key: string): string {
  return `PGRST_${key.toUpperCase().replace(/[-.]/g, '_')}`;
}

/**
 * The settings the environment's PGRST_* variables give, as PostgREST reads them. A variable that
 * names no PostgREST setting is refused (with a did-you-mean), never ignored.
 * @example fromPgrstEnv({ PGRST_DB_URI: 'postgres://db/x', PGRST_SERVER_PORT: '3001' }) // { databaseUrl: 'postgres://db/x', port: '3001' }
 */
export function fromPgrstEnv(env: Record<string, string | undefined>): ServeSettings {
  const byVariable = new Map(Object.keys(POSTGREST_KEYS).map((k) => [pgrstVariable(k), k]));
  const out: ServeSettings = {};
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith('PGRST_') || value === undefined) continue;
    if (name.startsWith('PGRST_APP_SETTINGS_')) fromPostgrest(`app.settings.${name.slice(19).toLowerCase()}`, value, name);
    const key = byVariable.get(name);
    if (!key) {
      const near = didYouMean(name, [...byVariable.keys()]);
      throw new UsageError(`${name} is set, but it names no PostgREST setting catalog knows${near ? ` (did you mean ${near}?)` : ''}`, 'unset it, or see docs/service.md for the PGRST_* names catalog reads');
    }
    const taken = fromPostgrest(key, value, name);
    if (taken) out[taken[0]] = taken[1];
  }
  return out;
}

/** True when a config file is written in PostgREST's `key = value` form rather than YAML or JSON. */
export function isPostgrestFormat(text: string): boolean {
  const first = text.split('\n').find((l) => l.trim() && !l.trim().startsWith('#'));
  return first !== undefined && /^\s*[A-Za-z][\w.-]*\s*=/.test(first);
}

/** One `"…"` string of PostgREST's config format, its escapes read and `$(VAR)` taken from the environment. */
function quoted(text: string, env: Record<string, string | undefined>, at: string): { value: string; rest: string } {
  let value = '';
  for (let i = 1; i < text.length; i++) {
    const c = text[i];
    if (c === '"') return { value: interpolate(value, env, at), rest: text.slice(i + 1) };
    if (c === '\\' && i + 1 < text.length) {
      const n = text[++i];
      value += n === 'n' ? '\n' : n === 't' ? '\t' : n;
    } else value += c;
  }
  throw new UsageError(`${at}: the string has no closing "`);
}

/** `$(NAME)` in a value: the variable NAME, as PostgREST's config reads it; a variable that is not set is an error. */
function interpolate(value: string, env: Record<string, string | undefined>, at: string): string {
  return value.replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (_, name: string) => {
    const v = env[name];
    if (v === undefined) throw new UsageError(`${at}: $(${name}) names an environment variable that is not set`);
    return v;
  });
}

/**
 * PostgREST's config file (`key = value` lines, `#` comments; a value is a `"string"` with
 * `$(VAR)` taken from the environment, a number, `true`/`false`, or a bare word) as key → text.
 * Its format is flat: a TOML or INI library would accept tables and arrays PostgREST refuses, and
 * knows nothing of `$(VAR)`.
 * @example parsePostgrestConfig('db-uri = "postgres://db/x"\ndb-pool = 10 # per host\n', {}, 'f') // { 'db-uri': 'postgres://db/x', 'db-pool': '10' }
 */
export function parsePostgrestConfig(text: string, env: Record<string, string | undefined>, path: string): Record<string, string> {
  const out: Record<string, string> = {};
  text.split(/\r?\n/).forEach((line, i) => {
    const at = `${path} line ${i + 1}`;
    const m = /^\s*([A-Za-z][\w.-]*)\s*=\s*(.*)$/.exec(line);
    if (!m) {
      if (line.trim() && !line.trim().startsWith('#')) throw new UsageError(`${at}: expected key = value, as PostgREST's config file has it, not ${JSON.stringify(line.trim())}`);
      return;
    }
    const [, key, raw] = m;
    let value: string;
    let rest: string;
    if (raw.startsWith('"')) ({ value, rest } = quoted(raw, env, at));
    else {
      const word = /^[^\s#]+/.exec(raw);
      if (!word) throw new UsageError(`${at}: ${key} has no value`);
      [value, rest] = [word[0], raw.slice(word[0].length)];
    }
    if (rest.trim() && !rest.trim().startsWith('#')) throw new UsageError(`${at}: unexpected ${JSON.stringify(rest.trim())} after the value of ${key}`);
    if (key in out) throw new UsageError(`${at}: ${key} is given twice`);
    out[key] = value;
  });
  return out;
}
