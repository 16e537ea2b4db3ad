/**
 * `catalog check tracks` (issue 18) against `catalog serve --data DIR` (PGlite) holding the
 * bench's N-row tracks file: every rule that applies to tracks (ISRC form and duplicates,
 * whitespace, credit references), rows/s and the command's peak RSS. The command exits 0 or 5
 * (findings); anything else fails the row. Run alone:
 *
 *   node bench/scenarios/check.js --rows 100000 --file /path/tracks.csv   # prints one JSON line
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertOk, runTimed } from '../lib/proc.js';
import { CATALOG_BIN, ROOT, startCatalog } from '../lib/service.js';

/** Imports the file, then times `catalog check tracks -o ndjson` (findings to /dev/null). */
export async function checkRun(n, file, { scratch = mkdtempSync(join(tmpdir(), 'bench-check-')) } = {}) {
  const service = await startCatalog({ dataDir: join(scratch, 'data') });
  try {
    const cli = (args, opts) => runTimed(process.execPath, [CATALOG_BIN, '--url', service.url, ...args], { cwd: ROOT, ...opts });
    assertOk(await cli(['tracks', 'import', file]), 'catalog tracks import (check bench)');
    const res = await cli(['check', 'tracks', '-o', 'ndjson', '--fail-on', 'none'], { stdoutFile: '/dev/null' });
    assertOk(res, 'catalog check tracks');
    const m = /Checked 1 collection, ([\d,]+) rows?: (.*)/.exec(res.stderr);
    if (!m || Number(m[1].replace(/,/g, '')) !== n) throw new Error(`catalog check did not read ${n} rows: ${res.stderr.trim()}`);
    return { rows: n, ms: Math.round(res.ms), rowsPerSec: Math.round(n / (res.ms / 1000)), peakRssMb: res.peakKb ? Math.round(res.peakKb / 1024) : null, found: m[2] };
  } finally {
    await service.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** For bench/run.js: records `check.tracks.N` (ms) and `check.tracks.rss.N` (peak MB). */
export async function checkSize(ctx, n) {
  await ctx.R.attempt([`check.tracks.${n}`, `check.tracks.rss.${n}`], async () => {
    const r = await checkRun(n, ctx.tracksFile(n), { scratch: mkdtempSync(join(ctx.scratch, 'check-')) });
    ctx.R.add(`check.tracks.${n}`, r.ms);
    ctx.R.add(`check.tracks.rss.${n}`, r.peakRssMb);
    ctx.R.extra.set(`check.tracks.${n}`, r.found);
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const arg = (name) => process.argv[process.argv.indexOf(name) + 1];
  const n = Number(arg('--rows').replace(/k$/i, '000'));
  console.log(JSON.stringify(await checkRun(n, arg('--file'))));
}
