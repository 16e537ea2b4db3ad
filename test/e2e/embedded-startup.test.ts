import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/stores.js';
import { catalog, ensureBuilt, ROOT } from './support.js';

ensureBuilt();

// bin/catalog.js runs the bundle (scripts/bundle.mjs) only while it is newer than dist/cli/: a
// plain tsc since the last `npm run build` leaves the code cache out of what these commands run
const mtime = (rel: string) => statSync(join(ROOT, rel), { throwIfNoEntry: false })?.mtimeMs ?? -1;
const bundled = mtime('dist/bundle/catalog.js') >= mtime('dist/cli/main.js');
if (!bundled) process.stderr.write('[embedded-startup] dist/bundle/ is older than dist/cli/: the code cache tests are SKIPPED (npm run build)\n');

/** The V8 code cache files under an XDG_CACHE_HOME ($XDG_CACHE_HOME/catalog-v8). */
const codeCaches = (cacheHome: string) => {
  const dir = join(cacheHome, 'catalog-v8');
  return existsSync(dir) ? readdirSync(dir).filter((f) => /^code-.*\.v8$/.test(f)).map((f) => join(dir, f)) : [];
};

const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

describe.skipIf(!bundled)("the bundle's V8 code cache (scripts/bundle.mjs)", () => {
  it('is written by the first command (0600, in a 0700 directory), then read and left alone', async () => {
    const home = tempDir('code-cache-');
    const env = { XDG_CACHE_HOME: home };
    const first = await catalog(['--version'], { env });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout.trim()).toBe(version);
    const [file] = codeCaches(home);
    expect(codeCaches(home)).toHaveLength(1);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(home, 'catalog-v8')).mode & 0o777).toBe(0o700);
    const before = statSync(file);
    const again = await catalog(['--version'], { env });
    expect(again.stdout.trim()).toBe(version);
    const after = statSync(file);
    expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs]);
  });

  it('is not trusted when others may write it, when it is not V8\'s, or through a symlink: it is made afresh', async () => {
    const home = tempDir('code-cache-bad-');
    const env = { XDG_CACHE_HOME: home };
    await catalog(['--version'], { env });
    const [file] = codeCaches(home);
    const good = readFileSync(file);

    // writable by its group: someone else could have put code in it
    chmodSync(file, 0o660);
    const ino = statSync(file).ino;
    expect((await catalog(['--version'], { env })).stdout.trim()).toBe(version);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(file).ino).not.toBe(ino);

    // bytes V8 refuses
    writeFileSync(file, Buffer.alloc(good.length, 7), { mode: 0o600 });
    expect((await catalog(['--version'], { env })).stdout.trim()).toBe(version);
    expect(readFileSync(file).equals(Buffer.alloc(good.length, 7))).toBe(false);

    // a symlink in its place is neither followed nor written through
    const elsewhere = join(tempDir('code-cache-target-'), 'target');
    writeFileSync(elsewhere, 'not a cache', { mode: 0o600 });
    unlinkSync(file);
    symlinkSync(elsewhere, file);
    expect((await catalog(['--version'], { env })).stdout.trim()).toBe(version);
    expect(readFileSync(elsewhere, 'utf8')).toBe('not a cache');
    expect(lstatSync(file).isSymbolicLink()).toBe(false);
  });

  it("drops other bundles' caches past the newest three, and any older than a week, when it writes its own", async () => {
    const home = tempDir('code-cache-others-');
    const dir = join(home, 'catalog-v8');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const hoursAgo = (h: number) => new Date(Date.now() - h * 3600_000);
    for (const [name, hours] of [['a', 1], ['b', 2], ['c', 3], ['d', 4], ['old', 24 * 8]] as const) {
      const file = join(dir, `code-other${name}-v0-x64.v8`);
      writeFileSync(file, 'x', { mode: 0o600 });
      utimesSync(file, hoursAgo(hours), hoursAgo(hours));
    }
    await catalog(['--version'], { env: { XDG_CACHE_HOME: home } });
    const names = readdirSync(dir).sort();
    expect(names.filter((n) => n.startsWith('code-other'))).toEqual(['code-othera-v0-x64.v8', 'code-otherb-v0-x64.v8', 'code-otherc-v0-x64.v8']);
    expect(codeCaches(home)).toHaveLength(4);
  });

  it('is not written by a command that changed its V8 flags (it opened the catalog itself): V8 would refuse it next time', async () => {
    const home = tempDir('code-cache-flags-');
    const r = await catalog(['labels', 'list', '-o', 'json'], { env: { XDG_CACHE_HOME: home, CATALOG_DATA: join(tempDir('code-cache-data-'), 'catalog'), CATALOG_KEEP_WARM: '0' } });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([]);
    expect(codeCaches(home)).toEqual([]);
  });
});

/** A preload that reports every package a command requires, and an ESM hook for what it imports. */
function traces(): string[] {
  const dir = tempDir('trace-');
  const cjs = join(dir, 'require.cjs');
  writeFileSync(
    cjs,
    `const Module = require('node:module');\nconst load = Module._load;\nModule._load = function (request, parent, isMain) {\n  if (!request.startsWith('node:') && !Module.isBuiltin(request) && !request.startsWith('.') && !request.startsWith('/')) process.stderr.write('LOADED ' + request + '\\n');\n  return load.apply(this, arguments);\n};\n`,
  );
  const esm = join(dir, 'import.mjs');
  writeFileSync(
    esm,
    `import { register } from 'node:module';\nregister('data:text/javascript,' + encodeURIComponent('export async function resolve(s, c, n) { const r = await n(s, c); if (r.url.includes("/node_modules/")) process.stderr.write("LOADED " + r.url + "\\\\n"); return r; }'));\n`,
  );
  return ['--require', cjs, '--import', esm];
}

/** The packages a command loaded, commander aside (bundled, or the CLI's own parser in dist/cli/). */
const loaded = (stderr: string) =>
  stderr
    .split('\n')
    .filter((l) => l.startsWith('LOADED ') && !l.includes('commander'))
    .map((l) => l.slice(7));

describe('what a command loads before it answers', () => {
  const data = join(tempDir('startup-loads-'), 'catalog');
  const env = { CATALOG_DATA: data, CATALOG_KEEP_WARM: '20' };

  afterAll(() => {
    const lock = join(data, 'catalog-serve.json');
    if (existsSync(lock)) {
      try {
        process.kill((JSON.parse(readFileSync(lock, 'utf8')) as { pid: number }).pid, 'SIGTERM');
      } catch {
        // gone already
      }
    }
  });

  it('`catalog --help` and a warm `labels list` load no package (neither required nor imported)', async () => {
    const help = await catalog(['--help'], { nodeArgs: traces() });
    expect(help.code, help.stderr).toBe(0);
    expect(loaded(help.stderr)).toEqual([]);
    // the first command makes the catalog and starts the background holder; the next one finds it
    expect((await catalog(['labels', 'add', 'name=Warm'], { env })).code).toBe(0);
    const warm = await catalog(['labels', 'list', '-o', 'json'], { env, nodeArgs: traces() });
    expect(warm.code, warm.stderr).toBe(0);
    expect((JSON.parse(warm.stdout) as Array<{ name: string }>).map((l) => l.name)).toEqual(['Warm']);
    expect(loaded(warm.stderr)).toEqual([]);
  });

  it('a command line that fails before it reaches the catalog creates no new catalog', async () => {
    const fresh = join(tempDir('startup-usage-'), 'catalog');
    const r = await catalog(['labels', 'list', '--no-such-flag'], { env: { CATALOG_DATA: fresh } });
    expect(r.code).toBe(2);
    expect(existsSync(join(fresh, 'PG_VERSION'))).toBe(false);
    expect(existsSync(join(fresh, 'catalog-serve.json'))).toBe(false);
  });
});

describe('a user with neither HOME nor a passwd entry (a container started with an arbitrary uid)', () => {
  const root = process.getuid?.() === 0;
  const setpriv = existsSync('/usr/bin/setpriv');
  if (!root || !setpriv) console.warn('[embedded-startup] SKIPPED the user-without-home test: it needs root and /usr/bin/setpriv to become a uid without a passwd entry');
  it.skipIf(!root || !setpriv)('runs commands (os.homedir() throws for it): without the code cache when XDG_CACHE_HOME is unset', async () => {
    const { spawnSync } = await import('node:child_process');
    const dir = tempDir('no-home-');
    chmodSync(dir, 0o777);
    const run = (extra: Record<string, string>) =>
      spawnSync('/usr/bin/setpriv', ['--reuid', '54321', '--regid', '54321', '--clear-groups', process.execPath, join(ROOT, 'bin', 'catalog.js'), '--version'], {
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...extra },
        cwd: dir,
        encoding: 'utf8',
      });
    const bare = run({});
    expect([bare.status, bare.stdout.trim(), bare.stderr]).toEqual([0, version, '']);
    const cached = run({ XDG_CACHE_HOME: join(dir, 'cache') });
    expect([cached.status, cached.stdout.trim()]).toEqual([0, version]);
  });
});
