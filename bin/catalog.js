#!/usr/bin/env node
import { statSync } from 'node:fs';

// dist/bundle/ (scripts/bundle.mjs) is the same code as dist/cli/, in a few files that load faster.
// tsc rewrites every file of dist/ it compiles: a bundle older than dist/cli/main.js is stale.
const mtime = (path) => statSync(new URL(path, import.meta.url), { throwIfNoEntry: false })?.mtimeMs ?? -1;
const fresh = mtime('../dist/bundle/catalog.js') >= mtime('../dist/cli/main.js');
const { run, systemContext } = await import(fresh ? '../dist/bundle/catalog.js' : '../dist/cli/main.js');

process.exitCode = await run(process.argv, systemContext());
