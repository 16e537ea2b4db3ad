/**
 * The catalog commands under test, run as a user would run them: `node bin/catalog.js ...`
 * against a service the bench started. Kept in one place so a changed flag is one edit.
 */
import { request } from 'undici';
import { assertOk, runTimed } from './proc.js';
import { CATALOG_BIN, ROOT } from './service.js';

/** `catalog tracks import FILE --url URL` (merge-duplicates on a re-import is the command's default on id). */
export function importArgs(file, url) {
  return [CATALOG_BIN, 'tracks', 'import', file, '--url', url, '--quiet'];
}

/** `catalog tracks export FILE --format csv --url URL`. */
export function exportArgs(file, url) {
  return [CATALOG_BIN, 'tracks', 'export', file, '--format', 'csv', '--url', url, '--quiet'];
}

/** Runs a catalog command, timed with peak RSS; throws with its stderr when it fails. */
export async function runCatalog(args, what, env) {
  return assertOk(await runTimed(process.execPath, args, { cwd: ROOT, env: { NO_COLOR: '1', ...env } }), what);
}

/** The exact number of tracks, asked of the service (`Prefer: count=exact`). */
export async function countViaService(url) {
  const res = await request(`${url}/tracks?select=id&limit=1`, { headers: { Prefer: 'count=exact' } });
  await res.body.dump();
  const range = String(res.headers['content-range'] ?? '');
  const m = /\/(\d+)$/.exec(range);
  if (!m) throw new Error(`no count in Content-Range (HTTP ${res.statusCode}, "${range}")`);
  return Number(m[1]);
}
