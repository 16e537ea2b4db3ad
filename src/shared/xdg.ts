import { isAbsolute, join } from 'node:path';

/**
 * The XDG base directories, one rule for the CLI (cli/paths.ts) and the store (its template
 * cache): `$XDG_CONFIG_HOME`, `$XDG_CACHE_HOME`, `$XDG_DATA_HOME` when set to an absolute path,
 * else `~/.config`, `~/.cache`, `~/.local/share`. A relative value is ignored, as the XDG Base
 * Directory Specification says ("all paths set in these environment variables must be absolute";
 * one that is not, e.g. a `~/x` the shell did not expand, would otherwise name a directory below
 * wherever the command runs).
 */
const BASES = {
  config: ['XDG_CONFIG_HOME', '.config'],
  cache: ['XDG_CACHE_HOME', '.cache'],
  data: ['XDG_DATA_HOME', '.local/share'],
} as const;

/**
 * One XDG base directory; `home` is asked only when the variable does not decide it.
 * @example xdgBase('cache', { XDG_CACHE_HOME: 'rel' }, () => '/home/u') // '/home/u/.cache'
 */
export function xdgBase(kind: keyof typeof BASES, env: Record<string, string | undefined>, home: string | (() => string)): string {
  const [name, fallback] = BASES[kind];
  const value = env[name];
  if (value && isAbsolute(value)) return value;
  return join(typeof home === 'string' ? home : home(), fallback);
}

/**
 * This tool's cache directory: `catalog` in the XDG cache base (root descriptions, version
 * warnings, and the migrated template when none is shipped).
 * @example catalogCacheDir({}, '/home/u') // '/home/u/.cache/catalog'
 */
export function catalogCacheDir(env: Record<string, string | undefined>, home: string | (() => string)): string {
  return join(xdgBase('cache', env, home), 'catalog');
}
