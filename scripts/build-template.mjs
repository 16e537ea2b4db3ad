// Builds the migrated PGlite template pack into dist/ (npm run build, which npm ci runs in a clone and npm pack before packing), so the first embedded
// catalog on a machine opens in about a second instead of running initdb in WebAssembly (4–6 s,
// 850 MB). Templates of other PGlite or schema versions (and the older .tar.gz form) are removed.
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

const { buildTemplatePack, shippedPackPath } = await import('../dist/store/pglite.js');
const target = shippedPackPath();
if (!existsSync(target)) {
  const started = Date.now();
  await buildTemplatePack(target);
  console.error(`catalog: built the embedded catalog template in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
for (const name of readdirSync(dirname(target))) {
  if (name.startsWith('pglite-template-') && name !== basename(target)) rmSync(join(dirname(target), name), { force: true });
}
