import { readFileSync } from 'node:fs';
import { didYouMean } from '../../format/suggest.js';
import { UsageError } from '../errors.js';

/** `catalog serve`'s settings as strings, the way commander hands flags over. */
export interface ServeSettings {
  port?: string;
  host?: string;
  data?: string;
  databaseUrl?: string;
  jwtSecret?: string;
  maxBody?: string;
  workers?: string;
  dbSchema?: string;
  maxRows?: string;
  statementTimeout?: string;
  aggregates?: string;
  adminPort?: string;
  logLevel?: string;
  logFormat?: string;
  corsOrigins?: string;
}

/**
 * Every setting `catalog serve` takes from a flag, an environment variable or a config file, in
 * that order of precedence, then its default. One table: the flags' help, `--dump-config` and
 * the file's keys all come from it. `secret`: shown redacted by `--dump-config`.
 */
export const SERVE_SETTINGS: ReadonlyArray<{ key: keyof ServeSettings; flag: string; /** '' for none */ env: string; fallback?: string; secret?: boolean }> = [
  { key: 'port', flag: 'port', env: 'CATALOG_PORT', fallback: '3000' },
  { key: 'host', flag: 'host', env: 'CATALOG_HOST', fallback: '127.0.0.1' },
  // CATALOG_DATA already names the embedded catalog for every command (the default of --data)
  { key: 'data', flag: 'data', env: '' },
  { key: 'databaseUrl', flag: 'database-url', env: 'CATALOG_DATABASE_URL', secret: true },
  { key: 'dbSchema', flag: 'db-schema', env: 'CATALOG_DB_SCHEMA' },
  { key: 'jwtSecret', flag: 'jwt-secret', env: 'CATALOG_JWT_SECRET', secret: true },
  { key: 'maxBody', flag: 'max-body', env: 'CATALOG_MAX_BODY' },
  { key: 'maxRows', flag: 'max-rows', env: 'CATALOG_MAX_ROWS' },
  { key: 'statementTimeout', flag: 'statement-timeout', env: 'CATALOG_STATEMENT_TIMEOUT' },
  { key: 'workers', flag: 'workers', env: 'CATALOG_WORKERS', fallback: '1' },
  { key: 'aggregates', flag: 'aggregates', env: 'CATALOG_AGGREGATES', fallback: 'on' },
  { key: 'logLevel', flag: 'log-level', env: 'CATALOG_LOG_LEVEL', fallback: 'error' },
  { key: 'logFormat', flag: 'log-format', env: 'CATALOG_LOG_FORMAT', fallback: 'text' },
  { key: 'adminPort', flag: 'admin-port', env: 'CATALOG_ADMIN_PORT' },
  { key: 'corsOrigins', flag: 'cors-origins', env: 'CATALOG_CORS_ORIGINS' },
];

/** The settings a `--config` file gives: a YAML or JSON mapping of flag names to values. */
async function fromFile(path: string): Promise<ServeSettings> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new UsageError(`--config ${path} cannot be read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  let doc: unknown;
  try {
    doc = (await import('yaml')).parse(text) as unknown;
  } catch (err) {
    throw new UsageError(`--config ${path} is not valid YAML or JSON: ${(err as Error).message}`);
  }
  if (doc === null || doc === undefined) return {};
  if (typeof doc !== 'object' || Array.isArray(doc)) throw new UsageError(`--config ${path} must be a mapping of settings (port: 3000, database-url: …), not ${Array.isArray(doc) ? 'a list' : typeof doc}`);
  const out: ServeSettings = {};
  const names = SERVE_SETTINGS.map((s) => s.flag);
  for (const [name, value] of Object.entries(doc as Record<string, unknown>)) {
    const setting = SERVE_SETTINGS.find((s) => s.flag === name || s.key === name || s.flag === name.replace(/_/g, '-'));
    if (!setting) {
      const near = didYouMean(name, names);
      throw new UsageError(`--config ${path}: unknown setting '${name}'${near ? ` (did you mean '${near}'?)` : ''}`, `settings: ${names.join(', ')}`);
    }
    if (value === null || typeof value === 'object') throw new UsageError(`--config ${path}: '${name}' takes one value (a string or a number), not ${value === null ? 'null' : 'a list or mapping'}`);
    out[setting.key] = String(value);
  }
  return out;
}

/**
 * The settings in force: each from the command line, else its CATALOG_* environment variable,
 * else the `--config` file, else its default.
 * @example await settleServe({ port: '8080' }, { CATALOG_PORT: '9' }) // { port: '8080', host: '127.0.0.1', … }
 */
export async function settleServe(flags: ServeSettings, env: Record<string, string | undefined>, configPath?: string): Promise<ServeSettings> {
  const file = configPath ? await fromFile(configPath) : {};
  const out: ServeSettings = {};
  for (const s of SERVE_SETTINGS) {
    const value = flags[s.key] ?? ((s.env && env[s.env]) || undefined) ?? file[s.key] ?? s.fallback;
    if (value !== undefined) out[s.key] = value;
  }
  // --data on the command line wins over a database URL from the environment or the file
  if (flags.data !== undefined && flags.databaseUrl === undefined) delete out.databaseUrl;
  return out;
}

/** `--dump-config`: the settings in force as a config file would give them, secrets redacted. */
export function dumpServeConfig(settings: ServeSettings): string {
  const lines = SERVE_SETTINGS.filter((s) => settings[s.key] !== undefined).map((s) => {
    const value = settings[s.key] as string;
    const shown = !s.secret ? value : s.key === 'databaseUrl' ? value.replace(/\/\/([^:/@]+):[^@]*@/, '//$1:<redacted>@') : '<redacted>';
    return `${s.flag}: ${JSON.stringify(shown)}`;
  });
  return `${lines.join('\n')}\n`;
}
