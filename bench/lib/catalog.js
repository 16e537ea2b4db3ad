/**
 * The catalog commands under test, run as a user would run them: `node bin/catalog.js ...`
 * against a service the bench started. Kept in one place so a changed flag is one edit.
 * While `tracks import`/`tracks export` are not wired into the CLI, the same engines are driven by
 * bench/peers/engine-driver.js instead and the figure is marked "(engine driver)".
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { assertOk, runTimed } from './proc.js';
import { CATALOG_BIN, ROOT } from './service.js';

const ENV = { NO_COLOR: '1' };

/** `catalog tracks import FILE --url URL` (a re-import merges on id: the command's default). */
export function importArgs(file, url) {
  return [CATALOG_BIN, 'tracks', 'import', file, '--url', url, '--quiet'];
}

/** `catalog tracks export FILE --format csv --url URL`. */
export function exportArgs(file, url) {
  return [CATALOG_BIN, 'tracks', 'export', file, '--format', 'csv', '--url', url, '--quiet'];
}

/** Runs a catalog command, timed with peak RSS; throws with its stderr when it fails. */
export async function runCatalog(args, what, env) {
  return assertOk(await runTimed(process.execPath, args, { cwd: ROOT, env: { ...ENV, ...env } }), what);
}

function unwired(res, verb) {
  return res.code !== 0 && new RegExp(`unknown command '${verb}'`).test(res.stderr);
}

/** Removes what an import leaves beside its input (rejects file, checkpoint). */
function removeSidecars(file) {
  for (const suffix of ['.rejects.csv', '.rejects.ndjson', '.checkpoint.json']) rmSync(`${file}${suffix}`, { force: true });
}

/**
 * Imports FILE into the service at URL with the CLI (or the engine driver while the command is
 * missing). Returns the timed result plus `via` ('cli' | 'engine').
 */
export async function catalogImport(file, url, scratch) {
  try {
    const res = await runTimed(process.execPath, importArgs(file, url), { cwd: ROOT, env: ENV });
    if (!unwired(res, 'import')) return { ...assertOk(res, 'catalog tracks import'), via: 'cli' };
    const viaEngine = await runTimed(process.execPath, [join(ROOT, 'bench/peers/engine-driver.js'), 'import', url, file, scratch], { cwd: ROOT, env: ENV });
    return { ...assertOk(viaEngine, 'import engine driver'), via: 'engine' };
  } finally {
    removeSidecars(file);
  }
}

/** Exports every track to FILE as CSV with the CLI (or the engine driver while it is missing). */
export async function catalogExport(file, url) {
  const res = await runTimed(process.execPath, exportArgs(file, url), { cwd: ROOT, env: ENV });
  if (!unwired(res, 'export')) return { ...assertOk(res, 'catalog tracks export'), via: 'cli' };
  const viaEngine = await runTimed(process.execPath, [join(ROOT, 'bench/peers/engine-driver.js'), 'export', url, file], { cwd: ROOT, env: ENV });
  return { ...assertOk(viaEngine, 'export engine driver'), via: 'engine' };
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
