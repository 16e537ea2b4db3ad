import { spawn } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/stores.js';
import { BIN, ROOT, catalog, ensureBuilt, type Serve, startServe } from './support.js';

/**
 * The help examples of the commands help-examples.test.ts does not cover (the collection group,
 * import, export, seed, schema, config, check, serve), run as printed by sh in a scratch directory, with
 * `catalog` on PATH pointing at bin/catalog.js and the test service. Examples that need a secret
 * from the shell, another host or another project's scripts are shown, not run.
 */

let serve: Serve;
let work: string;
let binDir: string;
let configHome: string;

/** Runs a line as sh would in the scratch directory; `catalog` in it reaches the test service, or `url`. */
function sh(line: string, url?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', line], {
      cwd: work,
      env: { ...process.env, PATH: `${binDir}:${process.env.PATH}`, XDG_CONFIG_HOME: configHome, NO_COLOR: '1', CATALOG_URL: url },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

async function examplesOf(args: string[]): Promise<string[]> {
  const help = await catalog([...args, '--help']);
  expect(help.code).toBe(0);
  const lines = help.stdout.split('Examples:\n')[1]?.split('\n').map((l) => l.trim()).filter(Boolean) ?? [];
  expect(lines.length).toBeGreaterThanOrEqual(2);
  expect(lines.length).toBeLessThanOrEqual(3);
  return lines;
}

const shownOnly = (line: string) => /\$|https:\/\/|npm run|--host 0\.0\.0\.0/.test(line);

beforeAll(async () => {
  ensureBuilt();
  serve = await startServe(['--data', tempDir('examples-more-')]);
  work = tempDir('examples-work-');
  binDir = tempDir('examples-bin-');
  configHome = tempDir('examples-config-');
  // `catalog` as the examples spell it, aimed at the test service unless the example names a URL.
  writeFileSync(
    join(binDir, 'catalog'),
    `#!/bin/sh\ncase " $* " in *" --url "*|*" serve "*) exec "${process.execPath}" "${BIN}" "$@";; esac\n[ -n "$CATALOG_URL" ] && exec "${process.execPath}" "${BIN}" "$@"\nexec "${process.execPath}" "${BIN}" --url "${serve.url}" "$@"\n`,
  );
  chmodSync(join(binDir, 'catalog'), 0o755);
  mkdirSync(join(configHome, 'catalog'), { recursive: true });
  writeFileSync(join(configHome, 'catalog', 'config.yaml'), `profiles:\n  staging:\n    url: ${serve.url}\n`);
  cpSync(join(ROOT, 'fixtures', 'seed'), join(work, 'staging-data'), { recursive: true });
  cpSync(join(ROOT, 'fixtures', 'seed', 'tracks.csv'), join(work, 'tracks.csv'));
  writeFileSync(join(work, 'vendor.csv'), 'Title,Vendor Code\nLove Song,V-001\nNight Drive,V-002\n');
  // The examples are written for a catalog with the sample loaded (tracks.csv credits its artists):
  // the test service has it before any test, whichever runs first.
  const seeded = await sh('catalog seed');
  expect(seeded.code, seeded.stderr).toBe(0);
});

afterAll(async () => {
  await serve?.stop();
});

describe('help examples of the other commands run as printed', () => {
  it('catalog seed (both examples load the sample catalog)', async () => {
    // into an empty catalog of its own (the test service has the sample already)
    const empty = await startServe(['--data', tempDir('examples-seed-')]);
    try {
      for (const line of await examplesOf(['seed'])) {
        if (shownOnly(line)) continue;
        const r = await sh(line, empty.url);
        expect({ line, code: r.code }).toEqual({ line, code: 0 });
      }
    } finally {
      await empty.stop();
    }
  });

  for (const args of [['tracks'], ['tracks', 'import'], ['tracks', 'export'], ['schema'], ['config']]) {
    it(`catalog ${args.join(' ')}`, async () => {
      for (const raw of await examplesOf(args)) {
        if (shownOnly(raw)) continue;
        const line = raw.replace(/\s+#.*$/, '');
        const r = await sh(line);
        expect({ line, code: r.code, stderr: r.code === 0 ? '' : r.stderr }).toEqual({ line, code: 0, stderr: '' });
      }
      if (args[1] === 'export') {
        expect(existsSync(join(work, 'tracks.csv'))).toBe(true);
        expect(existsSync(join(work, 'recent.ndjson'))).toBe(true);
        expect(existsSync(join(work, 'backup.yaml'))).toBe(true);
      }
      if (args[0] === 'schema') expect(existsSync(join(work, 'catalog.yaml'))).toBe(true);
    });
  }

  it('catalog check: every example runs (exit 0 clean, 5 with findings at or above --fail-on)', async () => {
    for (const raw of await examplesOf(['check'])) {
      const line = raw.replace(/\s+#.*$/, '');
      const r = await sh(line);
      expect({ line, code: [0, 5].includes(r.code) ? 'ok' : r.code, stderr: [0, 5].includes(r.code) ? '' : r.stderr }).toEqual({ line, code: 'ok', stderr: '' });
      expect(r.stderr).toMatch(/Checked \d+ collections?, [\d,]+ rows?:/);
    }
    expect(existsSync(join(work, 'findings.ndjson'))).toBe(true);
  });

  it('catalog serve: the local examples start a service that stops with exit 0', async () => {
    for (const line of await examplesOf(['serve'])) {
      if (shownOnly(line)) continue;
      const child = spawn('sh', ['-c', `exec ${line} --port 0`], {
        cwd: work,
        env: { ...process.env, PATH: `${binDir}:${process.env.PATH}`, CATALOG_DATA: join(work, 'serve-default') },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (c) => (stderr += c));
      const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
      const url = await new Promise<string>((resolve, reject) => {
        child.stderr.on('data', () => {
          const m = /Serving the catalog at (\S+)/.exec(stderr);
          if (m) resolve(m[1]);
        });
        child.on('exit', (code) => reject(new Error(`${line} exited ${code}: ${stderr}`)));
      });
      expect((await fetch(`${url}/labels?limit=1`)).status).toBe(200);
      child.kill('SIGTERM');
      expect({ line, code: await exited }).toEqual({ line, code: 0 });
    }
  });
});
