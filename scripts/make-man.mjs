// Writes the man page, dist/man/catalog.1, from the command tree of the compiled CLI (dist/cli/,
// so after tsc: npm run build runs it after the bundle). package.json's `man` ships it, and a
// global npm install links it into <prefix>/share/man/man1, where `man catalog` finds it.
// The date is SOURCE_DATE_EPOCH's when set (reproducible builds), else today's.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Readable } from 'node:stream';

const root = new URL('..', import.meta.url);
const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8'));
const { buildProgram } = await import('../dist/cli/main.js');
const { Context } = await import('../dist/cli/context.js');
const { commandTree } = await import('../dist/cli/command-tree.js');
const { manPage } = await import('../dist/cli/man.js');
const { bufferOutput } = await import('../dist/io/streams.js');

// A context that reads nothing of this machine: the tree is the same wherever it is built.
const ctx = new Context({
  io: { stdin: { isTTY: false, stream: Readable.from([]) }, stdout: bufferOutput({}), stderr: bufferOutput({}) },
  env: {},
  home: '/nonexistent',
  version: pkg.version,
});
const epoch = process.env.SOURCE_DATE_EPOCH;
const date = (epoch ? new Date(Number(epoch) * 1000) : new Date()).toISOString().slice(0, 10);
const page = manPage(commandTree(await buildProgram(ctx)), { version: pkg.version, date, homepage: pkg.homepage, bugs: pkg.bugs?.url });

const out = new URL('dist/man/', root);
mkdirSync(out, { recursive: true });
writeFileSync(new URL('catalog.1', out), page);
