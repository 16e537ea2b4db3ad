// Builds the migrated PGlite template into dist/ at install time, so the first embedded catalog
// on a machine opens in about a second instead of running initdb in WebAssembly (4–6 s, 850 MB).
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

const { migratedTemplate, shippedTemplatePath } = await import('../dist/store/pglite.js');
const target = shippedTemplatePath();
if (existsSync(target)) process.exit(0);
const started = Date.now();
const blob = await migratedTemplate(null);
mkdirSync(dirname(target), { recursive: true });
writeFileSync(target, new Uint8Array(await blob.arrayBuffer()));
console.error(`catalog: built the embedded catalog template in ${((Date.now() - started) / 1000).toFixed(1)} s`);
