import { join } from 'node:path';
import { catalogCacheDir, xdgBase } from '../shared/xdg.js';

/** Where the tool keeps things, following the XDG base directory conventions. */
export interface Paths {
  /** `$XDG_CONFIG_HOME/catalog/config.yaml` (profiles). */
  configFile: string;
  /** `$XDG_CACHE_HOME/catalog` (root descriptions per URL). */
  cacheDir: string;
  /** The embedded catalog: `CATALOG_DATA`, else `$XDG_DATA_HOME/catalog`. */
  dataDir: string;
}

/** Resolves the paths from the environment and the home directory (an XDG_* value that is not absolute is ignored: src/shared/xdg.ts). */
export function resolvePaths(env: Record<string, string | undefined>, home: string): Paths {
  return {
    configFile: join(xdgBase('config', env, home), 'catalog', 'config.yaml'),
    cacheDir: catalogCacheDir(env, home),
    dataDir: env.CATALOG_DATA || join(xdgBase('data', env, home), 'catalog'),
  };
}
