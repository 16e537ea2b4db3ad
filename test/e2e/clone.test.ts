import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { registryEnv } from '../support/registry-env.js';
import { tempDir } from '../support/stores.js';
import { ROOT } from './support.js';

const run = promisify(execFile);

/** npm's codes for "the registry could not be reached and the cache did not have it". */
const OFFLINE = /ENOTCACHED|ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT|ENETUNREACH/;

/**
 * A newcomer's set-up, exactly as the README gives it: a fresh `git clone`, `npm ci` (whose
 * `dependencies` script builds the clone), then `npx catalog seed && npx catalog labels list`. The clone is of
 * the committed HEAD: what CI checks out, without this working tree's uncommitted changes.
 */
describe('a fresh clone', () => {
  const clone = join(tempDir('clone-'), 'catalog');
  const home = tempDir('clone-home-');
  const env = {
    ...process.env,
    CATALOG_DATA: join(home, 'data'),
    XDG_CACHE_HOME: join(home, 'cache'),
    XDG_CONFIG_HOME: join(home, 'config'),
    CATALOG_KEEP_WARM: '0',
    CATALOG_URL: '',
    // the suite's own npm settings (npm_config_*, npm_lifecycle_*) must not leak into the clone's npm
    ...Object.fromEntries(Object.keys(process.env).filter((k) => /^npm_/i.test(k)).map((k) => [k, undefined])),
  };
  let skipped = '';

  beforeAll(async () => {
    if (!existsSync(join(ROOT, '.git'))) {
      skipped = 'this checkout is not a git repository';
      return;
    }
    await run('git', ['clone', '--quiet', '--no-hardlinks', ROOT, clone]);
    try {
      // The cache the suite's own `npm ci` filled holds every package; the registry is asked only for what it lacks.
      await run('npm', ['ci', '--prefer-offline', '--no-audit', '--no-fund'], { cwd: clone, env: registryEnv(env), maxBuffer: 64 << 20 });
    } catch (err) {
      const text = String((err as { stderr?: string }).stderr ?? err);
      if (!OFFLINE.test(text)) throw err;
      skipped = `the npm registry is unreachable and the cache lacks a package (${text.match(OFFLINE)?.[0]})`;
    }
  });

  it('is built by npm ci alone, then seeds and lists labels with npx', async (ctx) => {
    if (skipped) {
      console.warn(`\n[catalog] SKIPPED the fresh-clone test: ${skipped}.\n`);
      ctx.skip();
      return;
    }
    expect(existsSync(join(clone, 'dist', 'bundle', 'catalog.js'))).toBe(true);
    const { stdout } = await run('sh', ['-c', 'npx catalog seed && npx catalog labels list -o csv'], { cwd: clone, env });
    expect(stdout.split('\n')[0]).toBe('id,name,created,updated');
    expect(stdout).toContain('Northern Lights Recordings');
  });

  it('shows releases with their tracks from the sample catalog', async (ctx) => {
    if (skipped) return ctx.skip();
    // seeding is idempotent: this test does not lean on the one above having run
    const { stdout } = await run('sh', ['-c', "npx catalog seed && npx catalog releases list --select 'release_title,tracks(track_title)' --limit 5 -o json"], { cwd: clone, env });
    const releases = JSON.parse(stdout) as Array<{ release_title: string; tracks: Array<{ track_title: string }> }>;
    expect(releases).toHaveLength(5);
    expect(releases.filter((r) => r.tracks.length > 0).length).toBeGreaterThanOrEqual(3);
    expect(releases.flatMap((r) => r.tracks.map((t) => t.track_title)).filter((t) => t.length > 0).length).toBeGreaterThan(0);
  });
});
