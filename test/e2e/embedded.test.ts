import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/stores.js';
import { catalog, ensureBuilt, startServe } from './support.js';

beforeAll(() => ensureBuilt());

describe('the embedded default (no --url)', () => {
  it('creates a catalog in CATALOG_DATA, keeps data between commands, and stops with the command', async () => {
    const data = join(tempDir('embedded-'), 'catalog');
    const env = { CATALOG_DATA: data };
    const added = await catalog(['labels', 'add', 'name=Embedded Records'], { env });
    expect(added.code).toBe(0);
    expect(added.stderr).toMatch(/Creating a new catalog in/);
    expect(JSON.parse(added.stdout).name).toBe('Embedded Records');
    const listed = await catalog(['labels', 'list', '-o', 'ndjson', '-v'], { env });
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout).name).toBe('Embedded Records');
    expect(listed.stderr).toMatch(/GET http:\/\/127\.0\.0\.1:\d+\/labels → 200/);
    expect(listed.stderr).not.toMatch(/Creating/);
  });

  it('talks to a `catalog serve` that already holds the directory', async () => {
    const data = tempDir('held-');
    const serve = await startServe(['--data', data]);
    try {
      const r = await catalog(['genres', 'add', 'name=Held', '-v'], { env: { CATALOG_DATA: data } });
      expect(r.code).toBe(0);
      // add sends a client-made id with on_conflict=id, so a resend cannot store the row twice (issue 24)
      expect(r.stderr).toContain(`POST ${serve.url}/genres?on_conflict=id → 201`);
      const c = await catalog(['config', '-o', 'json'], { env: { CATALOG_DATA: data } });
      const url = (JSON.parse(c.stdout) as Array<{ setting: string; value: string }>).find((x) => x.setting === 'url');
      expect(url?.value).toContain(`${serve.url} (catalog serve, pid ${serve.proc.pid})`);
    } finally {
      expect(await serve.stop('SIGINT')).toBe(0);
    }
  });

  it('prints the request without starting anything under --dry-run', async () => {
    const data = join(tempDir('dry-'), 'never');
    const r = await catalog(['--dry-run', 'labels', 'list', '--where', 'name=x'], { env: { CATALOG_DATA: data } });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("curl -X GET 'http://127.0.0.1:3000/labels?name=eq.x' -H 'accept: application/json'\n");
    // issue 17: it says that nothing serves the catalog now and what the requests are for (was: nothing on stderr)
    expect(r.stderr).toMatch(/^nothing serves the embedded catalog in \S+ now: these requests are for `catalog serve` at http:\/\/127\.0\.0\.1:3000/);
    expect(existsSync(data)).toBe(false);
  });

  it('catalog schema on the embedded catalog reports the address catalog serve gives it, not its temporary port', async () => {
    const r = await catalog(['schema'], { env: { CATALOG_DATA: tempDir('schema-') } });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).host).toBe('127.0.0.1:3000');
  });
});

describe('profiles', () => {
  it('take url, token and headers from config.yaml, with flags and environment on top', async () => {
    const data = tempDir('prof-data-');
    const serve = await startServe(['--data', data]);
    try {
      const config = tempDir('prof-cfg-');
      mkdirSync(join(config, 'catalog'));
      writeFileSync(join(config, 'catalog', 'config.yaml'), `default_profile: local\nprofiles:\n  local:\n    url: ${serve.url}\n    headers:\n      apikey: profile-key\n  broken:\n    url: http://127.0.0.1:9\n`);
      const env = { XDG_CONFIG_HOME: config, CATALOG_DATA: tempDir('unused-') };
      const added = await catalog(['countries', 'add', 'name=Profileland', '--dry-run'], { env });
      expect(added.stdout).toContain(`curl -X POST '${serve.url}/countries?on_conflict=id' `);
      expect(added.stdout).toContain("-H 'apikey: <redacted>'");
      const real = await catalog(['countries', 'add', 'name=Profileland'], { env });
      expect(real.code).toBe(0);
      const other = await catalog(['--profile', 'broken', 'countries', 'list'], { env });
      expect(other.code).toBe(1);
      expect(other.stderr).toMatch(/cannot reach http:\/\/127\.0\.0\.1:9/);
      const envWins = await catalog(['countries', 'list', '-o', 'json'], { env: { ...env, CATALOG_PROFILE: 'broken', CATALOG_URL: serve.url } });
      expect(JSON.parse(envWins.stdout).map((c: { name: string }) => c.name)).toEqual(['Profileland']);
      const unknown = await catalog(['--profile', 'nope', 'countries', 'list'], { env });
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toMatch(/no profile 'nope'[\s\S]*profiles: local, broken/);
      const shown = await catalog(['config', '-o', 'json'], { env });
      const rows = JSON.parse(shown.stdout) as Array<{ setting: string; value: string; source: string }>;
      expect(rows.find((r) => r.setting === 'url')).toEqual({ setting: 'url', value: serve.url, source: 'profile' });
      expect(shown.stdout).not.toContain('profile-key');
    } finally {
      await serve.stop();
    }
  });
});

describe('catalog serve', () => {
  it('prints its URL on stderr and exits 0 on SIGTERM', async () => {
    const serve = await startServe(['--data', tempDir('serve-')]);
    expect(serve.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const root = await fetch(`${serve.url}/`);
    expect(root.status).toBe(200);
    expect(await serve.stop('SIGTERM')).toBe(0);
    expect(serve.stderr()).toMatch(/SIGTERM: stopping/);
  });

  it('refuses a public address without a JWT secret (exit 2)', async () => {
    const r = await catalog(['serve', '--host', '0.0.0.0', '--port', '0', '--data', tempDir('pub-')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/refusing to listen on 0\.0\.0\.0/);
  });

  it('answers 401 to writes without a token when a secret is set, which the CLI reports with exit 4', async () => {
    const serve = await startServe(['--data', tempDir('jwt-'), '--jwt-secret', 'an-e2e-secret-that-is-long-enough-123']);
    try {
      const r = await catalog(['--url', serve.url, 'labels', 'add', 'name=x']);
      expect(r.code).toBe(4);
      expect(r.stderr).toMatch(/HTTP 401[\s\S]*hint: this needs credentials: pass --token/);
    } finally {
      await serve.stop();
    }
  });
});

describe('start-up', () => {
  it('`catalog --help` loads no heavy library', async () => {
    const dir = tempDir('trace-');
    const trace = join(dir, 'trace.mjs');
    const log = join(dir, 'imports.log');
    // the resolve hook runs on its own thread: it appends each import to a file synchronously (a
    // write to stderr from that thread could be lost when a quick command exits first)
    writeFileSync(
      trace,
      `import { register } from 'node:module';\nregister('data:text/javascript,' + encodeURIComponent('import { appendFileSync } from "node:fs"; export async function resolve(s, c, n) { const r = await n(s, c); appendFileSync(${JSON.stringify(JSON.stringify(log)).slice(1, -1)}, "IMPORT " + r.url + "\\\\n"); return r; }'));\n`,
    );
    const r = await catalog(['--help'], { nodeArgs: ['--import', trace] });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/artists[\s\S]*countries[\s\S]*genres[\s\S]*labels[\s\S]*languages[\s\S]*releases[\s\S]*subgenres[\s\S]*tracks/);
    expect(r.stdout).toMatch(/Exit codes:/);
    const imported = readFileSync(log, 'utf8').split('\n').filter((l) => l.startsWith('IMPORT '));
    // The trace works: commander is loaded (from node_modules, or inside dist/bundle/ when bundled).
    expect(imported.some((l) => l.includes('/commander/') || l.includes('/dist/bundle/'))).toBe(true);
    for (const heavy of ['undici', '@electric-sql/pglite', '/pg/', 'yaml', '@inquirer', 'cli-table3', 'csv-parse', 'jose']) {
      expect(imported.filter((l) => l.includes(`/node_modules/${heavy}`.replace('//', '/')))).toEqual([]);
    }
  });

  it('`catalog` alone prints a short guide', async () => {
    const r = await catalog([], { env: { CATALOG_DATA: '/tmp/guide-data' } });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^catalog — administer the music catalog/);
    expect(r.stdout).toContain('Collections: artists, countries, genres, labels, languages, releases, subgenres, tracks');
    expect(r.stdout).toContain('the embedded catalog in /tmp/guide-data');
  });
});
