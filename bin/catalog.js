#!/usr/bin/env node
import { statSync } from 'node:fs';

// dist/bundle/ (scripts/bundle.mjs) is the same code as dist/cli/, in a few files that load faster.
// tsc rewrites every file of dist/ it compiles: a bundle older than dist/cli/main.js is stale.
const mtime = (path) => statSync(new URL(path, import.meta.url), { throwIfNoEntry: false })?.mtimeMs ?? -1;
const fresh = mtime('../dist/bundle/catalog.js') >= mtime('../dist/cli/main.js');
if (mtime('../dist/bundle/catalog.js') < 0 && mtime('../dist/cli/main.js') < 0) {
  // a clone after `npm ci` (no install script builds it): say what to run instead of a module stack
  const root = new URL('..', import.meta.url).pathname;
  process.stderr.write(`catalog: this copy is not built yet: run \`npm run build\` in ${root}\n`);
  process.exit(1);
}
const { run, systemContext } = await import(fresh ? '../dist/bundle/catalog.js' : '../dist/cli/main.js');

process.exitCode = await run(process.argv, systemContext());
