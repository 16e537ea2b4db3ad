import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../support/stores.js';
import { catalog, startServe } from './support.js';

// Issue 28 item 3: every serve flag also as a CATALOG_* variable and in a --config file
// (flag > variable > file > default), --dump-config, and --cors-origins.
describe('catalog serve settings', () => {
  it('--dump-config shows what is in force: a flag over CATALOG_*, over the --config file, over the default; secrets redacted', async () => {
    const dir = tempDir('serve-config-');
    const file = join(dir, 'serve.yaml');
    writeFileSync(file, 'port: 4000\nmax-rows: 7\nlog_level: warn\ndatabase-url: postgres://ana:s3cret@db.example/catalog\n');
    const r = await catalog(['serve', '--config', file, '--log-level', 'info', '--dump-config'], {
      env: { CATALOG_MAX_ROWS: '5', CATALOG_JWT_SECRET: 'x'.repeat(40), CATALOG_DATABASE_URL: undefined },
    });
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toContain('port: "4000"'); // the file
    expect(lines).toContain('max-rows: "5"'); // the variable over the file
    expect(lines).toContain('log-level: "info"'); // the flag over the file
    expect(lines).toContain('host: "127.0.0.1"'); // the default
    expect(lines).toContain('jwt-secret: "<redacted>"');
    expect(lines).toContain('database-url: "postgres://ana:<redacted>@db.example/catalog"');
    expect(r.stdout).not.toContain('s3cret');
    expect(r.stdout).not.toContain('x'.repeat(40));
  });

  // issue 38 item 6
  it('--dump-config redacts password= and sslpassword= in the URL\'s query; a bad sslmode is exit 2 at once, not a wait', async () => {
    const r = await catalog(['serve', '--dump-config'], { env: { CATALOG_DATABASE_URL: 'postgres://db.example/catalog?sslmode=verify-full&sslpassword=k3y&password=hunter2' } });
    expect(r.stdout).toContain('database-url: "postgres://db.example/catalog?sslmode=verify-full&sslpassword=<redacted>&password=<redacted>"');
    expect(r.stdout).not.toMatch(/k3y|hunter2/);
    const bad = await catalog(['serve', '--port', '0', '--database-url', 'postgres://postgres@127.0.0.1:5432/test?sslmode=bogus'], { env: { CATALOG_DATABASE_URL: undefined } });
    expect([bad.code, bad.stderr]).toEqual([2, expect.stringContaining('sslmode=bogus in the database URL is not one of disable, allow, prefer, require, verify-ca, verify-full')]);
    expect(bad.stderr).not.toMatch(/trying again/);
  });

  it('says when a secret is on the command line, where any local user reads it', async () => {
    const r = await catalog(['serve', '--port', '0', '--data', join(tempDir('serve-secret-'), 'c'), '--jwt-secret', 'x'.repeat(40), '--idle-exit', '1']);
    expect(r.stderr).toMatch(/warning: --jwt-secret on the command line can be read by any local user .*CATALOG_JWT_SECRET/);
  });

  it('refuses a config file with an unknown setting (did-you-mean) or a value that is a list, exit 2', async () => {
    const dir = tempDir('serve-config-');
    writeFileSync(join(dir, 'a.yaml'), 'prot: 1\n');
    writeFileSync(join(dir, 'b.yaml'), 'port: [1, 2]\n');
    const a = await catalog(['serve', '--config', join(dir, 'a.yaml'), '--dump-config']);
    expect([a.code, a.stderr]).toEqual([2, expect.stringMatching(/unknown setting 'prot' \(did you mean 'port'\?\)/)]);
    const b = await catalog(['serve', '--config', join(dir, 'b.yaml'), '--dump-config']);
    expect([b.code, b.stderr]).toEqual([2, expect.stringMatching(/'port' takes one value/)]);
    const c = await catalog(['serve', '--cors-origins', 'https://a.example/path', '--dump-config']);
    expect(c.code).toBe(0); // --dump-config only shows; serving with it is refused:
    const d = await catalog(['serve', '--port', '0', '--data', join(dir, 'd'), '--cors-origins', 'https://a.example/path']);
    expect([d.code, d.stderr]).toEqual([2, expect.stringMatching(/--cors-origins takes origins such as/)]);
  });

  it('a CATALOG_* variable is applied when serving: CATALOG_MAX_ROWS caps the answer', async () => {
    const serve = await startServe(['--data', join(tempDir('serve-env-'), 'c')], { CATALOG_MAX_ROWS: '2' });
    try {
      const post = await fetch(`${serve.url}/labels`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify([{ name: 'A' }, { name: 'B' }, { name: 'C' }]) });
      expect(post.status).toBe(201);
      const got = (await (await fetch(`${serve.url}/labels?select=name`)).json()) as unknown[];
      expect(got).toHaveLength(2);
    } finally {
      await serve.stop();
    }
  });

  it('--cors-origins: a named origin gets CORS headers (its own, with Vary: Origin); any other gets none, preflight included', async () => {
    const serve = await startServe(['--data', join(tempDir('serve-cors-'), 'c'), '--cors-origins', 'https://a.example, https://b.example:8443']);
    try {
      const ok = await fetch(`${serve.url}/labels`, { headers: { Origin: 'https://a.example' } });
      expect(ok.status).toBe(200);
      expect(ok.headers.get('access-control-allow-origin')).toBe('https://a.example');
      expect(ok.headers.get('vary')).toMatch(/Origin/);
      const other = await fetch(`${serve.url}/labels`, { headers: { Origin: 'https://evil.example' } });
      expect(other.status).toBe(200);
      expect(other.headers.get('access-control-allow-origin')).toBeNull();
      const preflight = await fetch(`${serve.url}/labels`, { method: 'OPTIONS', headers: { Origin: 'https://evil.example', 'Access-Control-Request-Method': 'POST' } });
      expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
      expect(preflight.headers.get('access-control-allow-methods')).toBeNull();
      const allowed = await fetch(`${serve.url}/labels`, { method: 'OPTIONS', headers: { Origin: 'https://b.example:8443', 'Access-Control-Request-Method': 'POST' } });
      expect(allowed.headers.get('access-control-allow-origin')).toBe('https://b.example:8443');
    } finally {
      await serve.stop();
    }
    // without the flag every origin is answered, as PostgREST does
    const open = await startServe(['--data', join(tempDir('serve-cors-'), 'c')]);
    try {
      const any = await fetch(`${open.url}/labels`, { headers: { Origin: 'https://evil.example' } });
      expect(any.headers.get('access-control-allow-origin')).toBe('*');
    } finally {
      await open.stop();
    }
  });
});
