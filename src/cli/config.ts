import { existsSync, readFileSync } from 'node:fs';
import { isFormat, type FormatName } from '../format/types.js';
import { UsageError } from './errors.js';

/** Where a setting came from, in precedence order. */
export type Source = 'flag' | 'env' | 'profile' | 'default';

export interface Sourced<T> {
  value: T;
  source: Source;
}

/** One profile in config.yaml. */
export interface Profile {
  url?: string;
  token?: string;
  headers?: Record<string, string>;
  output?: string;
}

/** The parsed config.yaml. */
export interface ConfigFile {
  default_profile?: string;
  profiles?: Record<string, Profile>;
}

/** The settings a command runs with, each with its source (what `catalog config` shows). */
export interface EffectiveConfig {
  /** null = the embedded catalog. */
  url: Sourced<string> | null;
  token: Sourced<string> | null;
  headers: Array<{ name: string; value: string; source: Source }>;
  output: Sourced<FormatName> | null;
  profile: Sourced<string> | null;
  configFile: string;
}

export interface ConfigInputs {
  flags: { url?: string; token?: string; header?: string[]; profile?: string; output?: string };
  env: Record<string, string | undefined>;
  file: ConfigFile | null;
  configFile: string;
}

/**
 * Parses a `--header` value.
 * @example parseHeader('apikey: abc') // ['apikey', 'abc']
 */
export function parseHeader(text: string): [string, string] {
  const i = text.indexOf(':');
  const name = i > 0 ? text.slice(0, i).trim() : '';
  if (!/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(name)) {
    throw new UsageError(`bad --header '${text}': expected NAME:VALUE`, "for example --header 'apikey: eyJhbGciOi...'");
  }
  return [name, text.slice(i + 1).trim()];
}

/**
 * The service URL as given: an http:// or https:// URL, else a usage error (exit 2) naming the
 * value and where it came from (it failed later as "Invalid URL", exit 1).
 * @example serviceUrl({ value: 'ftp://x', source: 'flag' }) // throws: --url 'ftp://x' uses ftp://, …
 */
export function serviceUrl(url: Sourced<string> | null, profile?: string): Sourced<string> | null {
  if (!url) return null;
  const from = url.source === 'flag' ? '--url' : url.source === 'env' ? 'CATALOG_URL' : `the url of profile '${profile ?? 'default'}'`;
  let parsed: URL;
  try {
    parsed = new URL(url.value);
  } catch {
    throw new UsageError(`${from} '${url.value}' is not a URL`, "give the service's base URL, e.g. --url http://127.0.0.1:3000");
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new UsageError(`${from} '${url.value}' uses ${parsed.protocol}//, which the catalog service does not speak`, 'use an http:// or https:// URL');
  }
  return url;
}

/** Reads config.yaml (yaml is loaded only when the file exists). */
export async function readConfigFile(path: string): Promise<ConfigFile | null> {
  if (!existsSync(path)) return null;
  const { parse } = await import('yaml');
  let doc: unknown;
  try {
    doc = parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new UsageError(`cannot read ${path}: ${(err as Error).message}`);
  }
  if (doc === null || doc === undefined) return {};
  if (typeof doc !== 'object' || Array.isArray(doc)) throw new UsageError(`${path}: expected a mapping with 'profiles'`);
  return doc as ConfigFile;
}

const pick = <T>(...candidates: Array<[T | undefined, Source]>): Sourced<T> | null => {
  for (const [value, source] of candidates) if (value !== undefined && value !== '') return { value, source };
  return null;
};

/** Combines flags, environment and the profile: flag > environment > profile > default. */
export function resolveConfig({ flags, env, file, configFile }: ConfigInputs): EffectiveConfig {
  const profiles = file?.profiles ?? {};
  const profile = pick<string>([flags.profile, 'flag'], [env.CATALOG_PROFILE, 'env'], [file?.default_profile, 'profile']);
  let p: Profile = {};
  if (profile) {
    const found = profiles[profile.value];
    if (!found) {
      const names = Object.keys(profiles);
      throw new UsageError(
        `no profile '${profile.value}' in ${configFile}`,
        names.length ? `profiles: ${names.join(', ')}` : `add one:\n    profiles:\n      ${profile.value}:\n        url: https://catalog.example.com`,
      );
    }
    p = found;
  }
  const headers = new Map<string, { name: string; value: string; source: Source }>();
  for (const [name, value] of Object.entries(p.headers ?? {})) headers.set(name.toLowerCase(), { name, value: String(value), source: 'profile' });
  for (const h of flags.header ?? []) {
    const [name, value] = parseHeader(h);
    headers.set(name.toLowerCase(), { name, value, source: 'flag' });
  }
  const output = pick<string>([flags.output, 'flag'], [env.CATALOG_OUTPUT, 'env'], [p.output, 'profile']);
  if (output && !isFormat(output.value)) {
    throw new UsageError(`unknown output format '${output.value}' (from ${output.source})`, 'formats: table, json, ndjson, csv, tsv, yaml');
  }
  return {
    url: serviceUrl(pick<string>([flags.url, 'flag'], [env.CATALOG_URL, 'env'], [p.url, 'profile']), profile?.value),
    token: pick<string>([flags.token, 'flag'], [env.CATALOG_TOKEN, 'env'], [p.token, 'profile']),
    headers: [...headers.values()],
    output: output as Sourced<FormatName> | null,
    profile,
    configFile,
  };
}
