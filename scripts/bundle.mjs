// Bundles the compiled CLI (dist/cli/main.js and every module it loads, commander included) into
// a few files in dist/bundle/, one per lazily loaded part. Node then resolves, reads and compiles
// a handful of files instead of ~60 small ones on every command: ~20 ms of a 90 ms `--help`.
// Runs after tsc (npm run build, which prepare runs on npm ci and npm pack; pretest); bin/catalog.js uses the bundle only while it
// is newer than dist/ (tsc rewrites every file), so a plain `tsc` never leaves a stale bundle in use.
// `--no-sourcemap` leaves the maps out; the package ships the bundle alone either way (`files` takes *.js only).
// Packages other than commander stay in node_modules: they are large and loaded only when used.
import { readFileSync, rmSync } from 'node:fs';
import { dirname, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = `${root}dist`;
const outdir = `${dist}/bundle`;
const pkg = JSON.parse(readFileSync(`${root}package.json`, 'utf8'));
const external = Object.keys(pkg.dependencies).filter((name) => name !== 'commander');

/**
 * `import.meta.url` as it was in the module's own file (dist/cli/commands/seed.js, …), so paths
 * built from it (package.json, fixtures, the PGlite template) point where they did unbundled.
 */
const ownUrl = {
  name: 'own-import-meta-url',
  setup(b) {
    b.onLoad({ filter: /\/dist\/.*\.js$/ }, (args) => {
      const text = readFileSync(args.path, 'utf8');
      if (!text.includes('import.meta.url')) return undefined;
      const rel = relative(outdir, args.path).split('\\').join('/');
      return { contents: text.replaceAll('import.meta.url', `new URL(${JSON.stringify(rel)}, import.meta.url).href`), loader: 'js', resolveDir: dirname(args.path) };
    });
  },
};

rmSync(outdir, { recursive: true, force: true });
await build({
  entryPoints: { catalog: `${dist}/cli/main.js` },
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external,
  plugins: [ownUrl],
  sourcemap: process.argv.includes('--no-sourcemap') ? false : 'linked',
  chunkNames: 'chunk-[hash]',
  logLevel: 'warning',
  // commander is CommonJS: give its require() calls of node built-ins a require to call.
  banner: { js: "import { createRequire as __catalogRequire } from 'node:module'; const require = __catalogRequire(import.meta.url);" },
});
