#!/usr/bin/env node
import { createRequire } from 'node:module';

// Node opens its inspector on SIGUSR1 when nothing listens for it, and anyone who reaches
// 127.0.0.1:9229 can then run code as this process: a listener of our own, first thing, keeps the
// signal from it (`catalog serve` gives SIGUSR1 PostgREST's meaning; other commands ignore it).
process.on('SIGUSR1', () => {});

// dist/bundle/ (scripts/bundle.mjs) is the same code as dist/cli/, as one script compiled from a
// V8 code cache. tsc rewrites every file of dist/ it compiles: a bundle older than dist/cli/main.js
// is stale. (node:fs through require: an ES module's import of a built-in costs a module facade.)
const { statSync } = createRequire(import.meta.url)('node:fs');
const mtime = (path) => statSync(new URL(path, import.meta.url), { throwIfNoEntry: false })?.mtimeMs ?? -1;
const bundle = mtime('../dist/bundle/catalog.js');
const compiled = mtime('../dist/cli/main.js');
if (bundle < 0 && compiled < 0) {
  // a clone after `npm ci` (no install script builds it): say what to run instead of a module stack
  const root = new URL('..', import.meta.url).pathname;
  process.stderr.write(`catalog: this copy is not built yet: run \`npm run build\` in ${root}\n`);
  process.exit(1);
}
const { run, systemContext } = await import(bundle >= compiled ? '../dist/bundle/catalog.js' : '../dist/cli/main.js');

process.exitCode = await run(process.argv, systemContext());
