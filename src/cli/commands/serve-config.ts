import { readFileSync } from 'node:fs';
import { didYouMean } from '../../format/suggest.js';
import { UsageError } from '../errors.js';
import { SERVE_SETTINGS, type ServeSettings } from './serve-settings.js';

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
