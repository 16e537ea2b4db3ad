// Bundles the compiled CLI (dist/cli/main.js and every module it loads, commander included) into
// one script that node compiles from a V8 code cache, and the small ES module that loads it:
//
//   dist/bundle/catalog-script.js  the whole CLI as the body of one CommonJS-style function (not a
//                                  module: never imported, only compiled by the entry below)
//   dist/bundle/catalog.js         the entry bin/catalog.js imports (`run`, `systemContext`): it
//                                  compiles the script with the code cache kept in the user's
//                                  $XDG_CACHE_HOME/catalog-v8, and writes that cache when there is none
//   dist/bundle/pglite-thread.js   the embedded store's thread (an ES module a worker runs)
//
// Why: Node 20 has no code cache for ES modules (module.enableCompileCache came in 22), and a
// command loaded ~50 chunks of an ES-module bundle, each resolved, read, parsed and linked on every
// run: a warm `labels list` spent ~60 ms of CPU past `node -e 0`, about half of it there. From a
// code cache nothing is parsed, and one file is read (BENCHMARKS.md, 2026-11-28).
//
// Runs after tsc (npm run build, prepack, pretest); bin/catalog.js uses the bundle only while it
// is newer than dist/ (tsc rewrites every file), so a plain `tsc` never leaves a stale bundle in use.
// `--no-sourcemap` (npm pack's prepack) leaves the maps out: the package ships the bundle alone.
// Packages other than commander stay in node_modules: they are large and loaded only when used.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = `${root}dist`;
const outdir = `${dist}/bundle`;
const pkg = JSON.parse(readFileSync(`${root}package.json`, 'utf8'));
const external = Object.keys(pkg.dependencies).filter((name) => name !== 'commander');
const SCRIPT = 'catalog-script.js';

/**
 * The script's wrapper: what a CommonJS module gets, plus `__url` (the script's own file URL) and
 * `__import` (the entry's dynamic import(), for packages left in node_modules: a script compiled
 * by vm has no import() of its own, and node 20's default-loader option for it is experimental).
 */
const WRAPPER_PARAMS = 'exports, require, module, __filename, __dirname, __url, __import';

/**
 * `import.meta.url` as it was in the module's own file (dist/cli/commands/seed.js, …), so paths
 * built from it (package.json, fixtures, the PGlite template) point where they did unbundled;
 * `import.meta.resolve(x)` as node's resolution of x (the same package directory).
 */
const ownUrl = {
  name: 'own-import-meta',
  setup(b) {
    b.onLoad({ filter: /\/dist\/.*\.js$/ }, (args) => {
      const text = readFileSync(args.path, 'utf8');
      if (!text.includes('import.meta')) return undefined;
      const rel = relative(outdir, args.path).split('\\').join('/');
      const contents = text
        .replaceAll('import.meta.url', `new URL(${JSON.stringify(rel)}, __url).href`)
        .replaceAll('import.meta.resolve(', '__resolveUrl(require, ');
      // anything else of import.meta (a script has none) esbuild would make `{}`: it warns, and the build fails below
      return { contents, loader: 'js', resolveDir: dirname(args.path) };
    });
  },
};

/**
 * The released migrations' SQL files (migrations/*.sql), embedded: the package ships
 * the bundle, not the files. dist/schema/migration-sql.js reads a file by name; in the bundle the
 * same function returns the file's text, made into an object the first time a store migrates.
 */
const MIGRATION_SQL = 'export function migrationSql(file)';
const migrationsDir = `${root}migrations/`;
const embedMigrations = {
  name: 'embed-migration-sql',
  setup(b) {
    b.onLoad({ filter: /[\\/]dist[\\/]schema[\\/]migration-sql\.js$/ }, (args) => {
      if (!readFileSync(args.path, 'utf8').includes(MIGRATION_SQL)) throw new Error(`${args.path}: no \`${MIGRATION_SQL}\` as scripts/bundle.mjs expects; update its embedMigrations plugin`);
      const files = Object.fromEntries(
        readdirSync(migrationsDir)
          .filter((name) => name.endsWith('.sql'))
          .sort()
          .map((name) => [name, readFileSync(`${migrationsDir}${name}`, 'utf8')]),
      );
      const contents = `let files;
${MIGRATION_SQL} {
  files ??= ${JSON.stringify(files)};
  if (!Object.hasOwn(files, file)) throw new Error(\`no migration \${file} in this bundle (scripts/bundle.mjs embeds migrations/*.sql)\`);
  return files[file];
}
`;
      return { contents, loader: 'js' };
    });
  },
};

/**
 * commander requires node:child_process at load for executable subcommands, which the CLI has
 * none of: loaded when spawn is first asked for (it brings net, dgram and more, ~2 ms a command).
 */
const lazyChildProcess = {
  name: 'commander-lazy-child-process',
  setup(b) {
    b.onLoad({ filter: /[\\/]commander[\\/]lib[\\/]command\.js$/ }, (args) => {
      const text = readFileSync(args.path, 'utf8');
      const eager = "const childProcess = require('node:child_process');";
      if (!text.includes(eager)) throw new Error(`${args.path}: commander no longer requires child_process as scripts/bundle.mjs expects; update its lazyChildProcess plugin`);
      return { contents: text.replace(eager, "const childProcess = { spawn: (...a) => require('node:child_process').spawn(...a) };"), loader: 'js' };
    });
  },
};

rmSync(outdir, { recursive: true, force: true });
const result = await build({
  entryPoints: { 'catalog-script': `${dist}/cli/main.js` },
  outdir,
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  external,
  // embedMigrations first: ownUrl would otherwise take migration-sql.js (it reads import.meta.url)
  plugins: [embedMigrations, ownUrl, lazyChildProcess],
  sourcemap: process.argv.includes('--no-sourcemap') ? false : 'linked',
  logLevel: 'warning',
  metafile: true,
  minifyWhitespace: true,
  // ES modules are strict; so is the script (in its function, as the directive must come first).
  banner: { js: `(function (${WRAPPER_PARAMS}) {"use strict";\nconst __resolveUrl = (req, spec) => require("node:url").pathToFileURL(req.resolve(spec)).href;` },
  footer: { js: '})' },
});

// The embedded store's thread (src/store/pglite-thread.ts, started by pglite-remote.ts): an ES
// module of its own, since a worker runs a file, with the migrations embedded as in the script.
// import.meta.url stays its own file's, dist/bundle/, one level below dist/ as dist/store/ is, so
// the paths it builds from it (the shipped template) are the same.
const THREAD = 'pglite-thread.js';
await build({
  entryPoints: [`${dist}/store/${THREAD}`],
  outfile: `${outdir}/${THREAD}`,
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external,
  plugins: [embedMigrations],
  sourcemap: process.argv.includes('--no-sourcemap') ? false : 'linked',
  logLevel: 'warning',
  minifyWhitespace: true,
});
if (readFileSync(`${outdir}/${THREAD}`, 'utf8').includes('../../migrations/')) throw new Error(`${THREAD}: reads the migration files from migrations/ instead of embedding them (see embedMigrations)`);

const metaWarnings = result.warnings.filter((w) => w.text.includes('import.meta'));
if (metaWarnings.length) throw new Error(`import.meta other than .url and .resolve() cannot be bundled into a script: ${metaWarnings.map((w) => `${w.location?.file}:${w.location?.line}`).join(', ')}`);

// Dynamic import() of a package or built-in is left as import() by esbuild: the script has none
// (see WRAPPER_PARAMS), so each becomes __import(). Counted against the metafile, so text that
// merely looks like one is never rewritten, and none is missed.
const scriptPath = `${outdir}/${SCRIPT}`;
const dynamic = Object.values(result.metafile.outputs)
  .flatMap((o) => o.imports)
  .filter((i) => i.external && i.kind === 'dynamic-import');
let text = readFileSync(scriptPath, 'utf8');
if (text.includes('../../migrations/')) throw new Error(`${SCRIPT}: reads the migration files from migrations/ instead of embedding them (see embedMigrations)`);
let rewritten = 0;
text = text.replace(/\bimport\((?="[^"\n]+"\))/g, () => {
  rewritten++;
  return '__import(';
});
if (rewritten !== dynamic.length) throw new Error(`${SCRIPT}: rewrote ${rewritten} import() calls, the metafile lists ${dynamic.length} dynamic imports of packages`);
if (/\bimport\(/.test(text.replace(/"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`(?:[^`\\]|\\.)*`/g, '""'))) {
  throw new Error(`${SCRIPT}: an import() esbuild left that is not a package's`);
}
// ASCII only (esbuild escapes strings, not every regular expression), so the entry reads it as latin1
// and V8 keeps it in one byte per character. \uXXXX means the same character in a string, template,
// regular expression or identifier; only String.raw would see the difference.
if (/[^\x00-\x7f]/.test(text)) {
  if ((text.match(/String\.raw`[^`]*`/g) ?? []).some((raw) => /[^\x00-\x7f]/.test(raw))) throw new Error(`${SCRIPT}: non-ASCII text in a String.raw template; escape it in the source instead`);
  text = text.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
writeFileSync(scriptPath, text);

// The cache is named after the script's content: V8 itself only compares the source's length.
const id = createHash('sha256').update(text).digest('hex').slice(0, 16);
writeFileSync(`${outdir}/catalog.js`, entry(id));

/** dist/bundle/catalog.js: compiles the script with its code cache and runs the CLI from it. */
function entry(scriptId) {
  return `// Generated by scripts/bundle.mjs: the CLI's entry. Compiles ${SCRIPT} (the whole CLI, one
// function) with V8's code cache, which lives in $XDG_CACHE_HOME/catalog-v8 (0600, this user's own
// files only: a code cache is code) and is written after the first command that found none. Its own
// directory, beside the CLI's ($XDG_CACHE_HOME/catalog: root descriptions, a template built here).
// Built-ins come through require: an ES module's import of one builds a module facade (~0.3 ms each).
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { closeSync, constants, fstatSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } = require('node:fs');
const { dirname, join } = require('node:path');
const { fileURLToPath } = require('node:url');
const { Script } = require('node:vm');

/**
 * This file as this process loaded it (device, inode, size, mtime), taken before anything else: a
 * background holder's command door serves only a client whose bin/catalog.js would load this very
 * file, and never once a build has replaced it (src/holder/door.ts).
 */
const entryFile = fileURLToPath(import.meta.url);
const identity = (st) => st && \`\${st.dev}:\${st.ino}:\${st.size}:\${st.mtimeMs}\`;
const loaded = identity(statSync(entryFile, { throwIfNoEntry: false }));

const SCRIPT_ID = ${JSON.stringify(scriptId)};
const url = new URL(${JSON.stringify(`./${SCRIPT}`)}, import.meta.url);
const file = fileURLToPath(url);

/** $XDG_CACHE_HOME/catalog-v8 (an absolute XDG_CACHE_HOME only, as src/cli/paths.ts reads it). */
function cacheDir() {
  const xdg = process.env.XDG_CACHE_HOME;
  if (xdg && xdg.startsWith('/')) return join(xdg, 'catalog-v8');
  // os.homedir() is $HOME where there is one (POSIX); node:os is loaded only without. A user with
  // neither HOME nor a passwd entry (a container's arbitrary uid) runs without the code cache.
  let home = process.platform !== 'win32' && process.env.HOME;
  try {
    home ||= require('node:os').homedir();
  } catch {
    return null;
  }
  return join(home, '.cache', 'catalog-v8');
}

const prefix = \`code-\${SCRIPT_ID}-\`;
const cacheHome = cacheDir();
const cacheFile = cacheHome && join(cacheHome, \`\${prefix}\${process.version}-\${process.arch}.v8\`);
const uid = typeof process.getuid === 'function' ? process.getuid() : null;

/** The cache when it is a regular file of this user's that nobody else may write; else undefined. */
function readCache() {
  if (!cacheFile) return undefined;
  let fd;
  try {
    fd = openSync(cacheFile, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
  } catch {
    return undefined;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || (uid !== null && (st.uid !== uid || st.mode & 0o022))) return undefined;
    return readFileSync(fd);
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/**
 * Other bundles' caches kept: the newest few, written in the last week (two installs in use keep
 * theirs; a checkout rebuilt all day does not pile them up).
 */
const KEEP_OTHERS = 3;
const STALE_MS = 7 * 24 * 3600 * 1000;

/**
 * Writes the cache (0600, through a new file renamed into place) and drops other bundles' old
 * caches; quietly gives up. The cache is made only once there is a file to write it to (a
 * read-only home never pays for making it).
 */
function writeCache(make) {
  if (!cacheFile) return;
  const dir = dirname(cacheFile);
  const tmp = \`\${cacheFile}.\${process.pid}.tmp\`;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0), 0o600);
    try {
      const data = make();
      for (let at = 0; at < data.length; ) at += writeSync(fd, data, at);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, cacheFile);
    const others = readdirSync(dir)
      .filter((name) => name.startsWith('code-') && !name.startsWith(prefix) && name.endsWith('.v8'))
      .map((name) => ({ path: join(dir, name), mtime: statSync(join(dir, name)).mtimeMs }))
      .sort((a, b) => b.mtime - a.mtime);
    others.forEach((o, i) => (i >= KEEP_OTHERS || Date.now() - o.mtime > STALE_MS) && unlinkSync(o.path));
  } catch {
    try {
      unlinkSync(tmp);
    } catch {
      // not made
    }
  }
}

/** A built-in as import() gives it (its exports, and the module as default), through require. */
const builtin = (m) => Object.assign(Object.create(m), { default: m });
/** The script's import(): built-ins through require, packages through this module's import(). */
const dynamicImport = (specifier) => (specifier.startsWith('node:') ? Promise.resolve().then(() => builtin(require(specifier))) : import(specifier));

const cached = readCache();
// latin1: the script is ASCII (scripts/bundle.mjs escapes the rest), read without decoding UTF-8
const script = new Script(readFileSync(file, 'latin1'), { filename: file, cachedData: cached });
const cli = { exports: {} };
script.runInThisContext()(cli.exports, createRequire(file), cli, file, dirname(file), url.href, dynamicImport);
const needsCache = cached === undefined || script.cachedDataRejected === true;

/**
 * The context of a real run, with this file (see \`loaded\`) and how a background holder it becomes
 * runs the commands thin clients hand over (src/holder/door.ts).
 */
export const systemContext = () =>
  cli.exports.systemContext({
    bundle: { entry: entryFile, unchanged: () => loaded !== undefined && identity(statSync(entryFile, { throwIfNoEntry: false })) === loaded },
    handOver: cli.exports.runHandedOver,
  });

/** Runs the command line; then, when no cache was used, writes one from what this run compiled. */
export async function run(argv, ctx) {
  const code = await cli.exports.run(argv, ctx);
  // a cache made after the V8 flags changed (a command that opened the catalog itself) would be refused next time
  if (needsCache && !(await cli.exports.v8FlagsChanged())) writeCache(() => script.createCachedData());
  return code;
}
`;
}
