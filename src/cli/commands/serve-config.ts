import { readFileSync, statSync } from 'node:fs';
import { didYouMean } from '../../format/suggest.js';
import { UsageError } from '../errors.js';
import { fromPgrstEnv, fromPostgrest, isPostgrestFormat, parsePostgrestConfig, POSTGREST_KEYS } from './serve-postgrest.js';
import { SERVE_SETTINGS, type ServeSetting, type ServeSettings } from './serve-settings.js';

/** Our setting named by a key of a config file: its flag, its camelCase key, or the flag with `_` for `-`. */
function ourSetting(name: string): ServeSetting | undefined {
  return SERVE_SETTINGS.find((s) => s.flag === name || s.key === name || s.flag === name.replace(/_/g, '-'));
}

/** The YAML or JSON form: a mapping of our settings' names to values; a PostgREST key gets a did-you-mean to ours. */
function fromMapping(doc: unknown, path: string): ServeSettings {
  if (doc === null || doc === undefined) return {};
  if (typeof doc !== 'object' || Array.isArray(doc)) throw new UsageError(`--config ${path} must be a mapping of settings (port: 3000, database-url: …), not ${Array.isArray(doc) ? 'a list' : typeof doc}`);
  const out: ServeSettings = {};
  const names = SERVE_SETTINGS.map((s) => s.flag);
  for (const [name, value] of Object.entries(doc as Record<string, unknown>)) {
    const setting = ourSetting(name);
    if (!setting) {
      const postgrest = POSTGREST_KEYS[name];
      const ours = postgrest && 'ours' in postgrest ? SERVE_SETTINGS.find((s) => s.key === postgrest.ours)?.flag : undefined;
      const near = ours ?? didYouMean(name, names);
      const why = ours ? `, PostgREST's name for it; a PostgREST config file (key = "value") may use PostgREST's names` : '';
      throw new UsageError(`--config ${path}: unknown setting '${name}'${near ? ` (did you mean '${near}'?${why})` : ''}`, `settings: ${names.join(', ')}`);
    }
    if (value === null || typeof value === 'object') throw new UsageError(`--config ${path}: '${name}' takes one value (a string or a number), not ${value === null ? 'null' : 'a list or mapping'}`);
    out[setting.key] = String(value);
  }
  return out;
}

/** PostgREST's form (`key = "value"`): PostgREST's keys (taken or refused by name) and ours. */
function fromPostgrestFile(text: string, env: Record<string, string | undefined>, path: string): ServeSettings {
  const out: ServeSettings = {};
  const known = [...Object.keys(POSTGREST_KEYS), ...SERVE_SETTINGS.map((s) => s.flag)];
  for (const [name, value] of Object.entries(parsePostgrestConfig(text, env, path))) {
    const postgrest = POSTGREST_KEYS[name] !== undefined || name.startsWith('app.settings.');
    const setting = postgrest ? undefined : ourSetting(name);
    if (setting) {
      out[setting.key] = value;
      continue;
    }
    if (!postgrest) {
      const near = didYouMean(name, known);
      throw new UsageError(`--config ${path}: unknown setting '${name}'${near ? ` (did you mean '${near}'?)` : ''}`, 'PostgREST 12.2\'s keys and catalog serve\'s flag names are read: see docs/service.md');
    }
    const taken = fromPostgrest(name, value, `--config ${path}`);
    if (taken) out[taken[0]] = taken[1];
  }
  return out;
}

/** The settings a `--config` file gives: a YAML or JSON mapping of flag names to values, or PostgREST's `key = "value"` file. */
async function fromFile(path: string, env: Record<string, string | undefined>): Promise<ServeSettings> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new UsageError(`--config ${path} cannot be read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  if (isPostgrestFormat(text)) return fromPostgrestFile(text, env, path);
  let doc: unknown;
  try {
    doc = (await import('yaml')).parse(text) as unknown;
  } catch (err) {
    throw new UsageError(`--config ${path} is not valid YAML or JSON: ${(err as Error).message}`);
  }
  return fromMapping(doc, path);
}

/**
 * The settings in force: each from the command line, else its CATALOG_* environment variable,
 * else PostgREST's PGRST_* variable for it, else the `--config` file, else its default.
 * @example await settleServe({ port: '8080' }, { CATALOG_PORT: '9' }) // { port: '8080', host: '127.0.0.1', … }
 */
export async function settleServe(flags: ServeSettings, env: Record<string, string | undefined>, configPath?: string): Promise<ServeSettings> {
  const file = configPath ? await fromFile(configPath, env) : {};
  const pgrst = fromPgrstEnv(env);
  const out: ServeSettings = {};
  for (const s of SERVE_SETTINGS) {
    const value = flags[s.key] ?? ((s.env && env[s.env]) || undefined) ?? pgrst[s.key] ?? file[s.key] ?? s.fallback;
    if (value !== undefined) out[s.key] = value;
  }
  // --data on the command line wins over a database URL from the environment or the file
  if (flags.data !== undefined && flags.databaseUrl === undefined) delete out.databaseUrl;
  return out;
}

/**
 * A database URL as it may be shown: the password of its user part, and `password=` /
 * `sslpassword=` in its query string, replaced with `<redacted>`.
 * @example redactDatabaseUrl('postgres://ana:pw@db/x?sslpassword=k') // 'postgres://ana:<redacted>@db/x?sslpassword=<redacted>'
 */
export function redactDatabaseUrl(url: string): string {
  return url.replace(/\/\/([^:/@]+):[^@]*@/, '//$1:<redacted>@').replace(/([?&](?:ssl)?password=)[^&#]*/gi, '$1<redacted>');
}

/** `--dump-config`: the settings in force as a config file would give them, secrets redacted. */
export function dumpServeConfig(settings: ServeSettings): string {
  const lines = SERVE_SETTINGS.filter((s) => settings[s.key] !== undefined).map((s) => {
    const value = settings[s.key] as string;
    const shown = !s.secret ? value : s.key === 'databaseUrl' ? redactDatabaseUrl(value) : '<redacted>';
    return `${s.flag}: ${JSON.stringify(shown)}`;
  });
  return `${lines.join('\n')}\n`;
}

/** Whether group or others may read a file (false when it cannot be looked at). */
function readableByOthers(path: string): boolean {
  try {
    return (statSync(path).mode & 0o077) !== 0;
  } catch {
    return false;
  }
}

/** The password of a database URL, or null. */
function urlPassword(url: string | undefined): string | null {
  if (url === undefined || !URL.canParse(url)) return null;
  const u = new URL(url);
  return decodeURIComponent(u.password) || u.searchParams.get('password') || u.searchParams.get('sslpassword') || null;
}

/**
 * Why the secrets in force may be read by other local users, or null: a JWT secret or a
 * database password given as a flag (any user can read /proc/PID/cmdline), or written in a
 * `--config` file that group or others may read.
 */
export function secretExposure(flags: ServeSettings, configPath: string | undefined, settled: ServeSettings): string | null {
  const onCommandLine = [flags.jwtSecret !== undefined && !flags.jwtSecret.startsWith('@') && '--jwt-secret', urlPassword(flags.databaseUrl) && 'the --database-url password'].filter(Boolean);
  if (onCommandLine.length) {
    return `${onCommandLine.join(' and ')} on the command line can be read by any local user (ps, /proc/PID/cmdline): give ${onCommandLine.length > 1 ? 'them' : 'it'} by CATALOG_JWT_SECRET / CATALOG_DATABASE_URL, or in a --config file only you may read (chmod 600)`;
  }
  const keyFile = settled.jwtSecret?.startsWith('@') ? settled.jwtSecret.slice(1) : null;
  if (keyFile && readableByOthers(keyFile)) return `the JWT secret file ${keyFile} may be read by other users: chmod 600 ${keyFile}`;
  if (!configPath) return null;
  let text: string;
  let mode: number;
  try {
    [text, mode] = [readFileSync(configPath, 'utf8'), statSync(configPath).mode];
  } catch {
    return null;
  }
  const secrets = [settled.jwtSecret?.startsWith('@') ? null : settled.jwtSecret, urlPassword(settled.databaseUrl)].filter((x): x is string => Boolean(x));
  if (!(mode & 0o077) || !secrets.some((x) => text.includes(x))) return null;
  return `--config ${configPath} holds a secret and other users may read it (mode ${(mode & 0o777).toString(8)}): chmod 600 ${configPath}`;
}
