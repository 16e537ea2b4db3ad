/**
 * `--only orphans`: tracks imported before their artists (a directory imported in the wrong
 * order, another system's export): every track credits artists the catalog does not have, so the
 * database refuses nearly every row (23503). Measures how long the import takes to reject them:
 * the send stage checks references in advance once 16 rows were refused (src/import/send/
 * references.ts) instead of bisecting every batch down to single rows.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { importArgs } from '../lib/catalog.js';
import { runTimed } from '../lib/proc.js';
import { ROOT, startCatalog } from '../lib/service.js';

/** Rows of the tracks file the scenario imports (the first ones). */
export const ORPHAN_ROWS = 5000;

/** The first `rows` records of a tracks file (one line each: the generator writes no line breaks in cells). */
function head(file, rows, out) {
  const text = readFileSync(file, 'utf8');
  let at = -1;
  for (let i = 0; i <= rows && at < text.length; i++) at = text.indexOf('\n', at + 1);
  writeFileSync(out, text.slice(0, at + 1));
}

export async function orphans(ctx, tracksFile) {
  const { R, o } = ctx;
  const input = join(ctx.scratch, 'orphan-tracks.csv');
  head(tracksFile, ORPHAN_ROWS, input);
  for (let run = 1; run <= o.runs; run++) {
    ctx.log(`orphans: ${ORPHAN_ROWS} tracks into a catalog without artists, run ${run}/${o.runs}`);
    const dataDir = join(ctx.scratch, `orphans-${run}`);
    mkdirSync(dataDir, { recursive: true });
    await R.attempt(['pglite.orphans.catalog'], async () => {
      const service = await startCatalog({ dataDir });
      try {
        const res = await runTimed(process.execPath, importArgs(input, service.url), { cwd: ROOT, env: { NO_COLOR: '1' } });
        // exit 3: rows were rejected, which is the point
        if (res.code !== 3) throw new Error(`catalog tracks import exited ${res.code}, expected 3: ${res.stderr.slice(-300)}`);
        R.add('pglite.orphans.catalog', res.ms);
      } finally {
        await service.stop();
        rmSync(dataDir, { recursive: true, force: true });
        for (const s of ['.rejects.csv', '.checkpoint.json']) rmSync(`${input}${s}`, { force: true });
      }
    });
  }
}
