import { join } from 'node:path';

/** Where the tool keeps things, following the XDG base directory conventions. */
export interface Paths {
  /** `$XDG_CONFIG_HOME/catalog/config.yaml` (profiles). */
  configFile: string;
  /** `$XDG_CACHE_HOME/catalog` (root descriptions per URL). */
  cacheDir: string;
  /** The embedded catalog: `CATALOG_DATA`, else `$XDG_DATA_HOME/catalog`. */
  dataDir: string;
}

/** Resolves the paths from the environment and the home directory. */
export function resolvePaths(env: Record<string, string | undefined>, home: string): Paths {
  const xdg = (name: string, fallback: string) => (env[name] && env[name]!.startsWith('/') ? env[name]! : join(home, fallback));
  return {
    configFile: join(xdg('XDG_CONFIG_HOME', '.config'), 'catalog', 'config.yaml'),
    cacheDir: join(xdg('XDG_CACHE_HOME', '.cache'), 'catalog'),
    dataDir: env.CATALOG_DATA || join(xdg('XDG_DATA_HOME', '.local/share'), 'catalog'),
  };
}
