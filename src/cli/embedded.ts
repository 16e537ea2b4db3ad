/**
 * The one file of the CLI that reaches into `server/` and `store/`: the embedded catalog (a
 * service started in this process over PGlite), `catalog serve`, and token minting. Everything is
 * loaded on first use, so a command that talks to a URL never loads the server or PGlite.
 */
export type { RequestFigures, RunningServer, StartOptions } from '../server/listen.js';

/** The service: start, the data-directory lock, secret checks (src/server/listen.ts). */
export const loadServer = () => import('../server/listen.js');
/** `catalog serve --workers N` (src/server/cluster.ts). */
export const loadCluster = () => import('../server/cluster.js');
/** Token minting for `catalog token create` (src/server/auth.ts). */
export const loadAuth = () => import('../server/auth.js');
/** The embedded store's engine: warm-up and buffer-pool size (src/store/pglite.ts). */
export const loadPGlite = () => import('../store/pglite.js');
/** The embedded catalog's holder: finding or becoming it, the background holder (src/holder/holder.ts). */
export const loadHolder = () => import('../holder/holder.js');
