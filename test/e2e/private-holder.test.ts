import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/stores.js';
import { BIN, ROOT, catalog, ensureBuilt } from './support.js';
import { PATIENCE_MS } from '../support/patience.js';
import { eventually } from '../support/patience.js';

ensureBuilt();

interface Lock {
  pid: number;
  url: string;
  key?: string;
  background?: boolean;
}

const lockOf = (data: string) => JSON.parse(readFileSync(join(data, 'catalog-serve.json'), 'utf8')) as Lock;

/** One raw exchange with node:http (fetch will not send a forged Host). */
function exchange(url: string, opts: { method?: string; headers?: Record<string, string>; body?: string }): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: opts.method ?? 'GET', headers: opts.headers }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** Whether this run can act as a second Unix user (root, with runuser and a `nobody` account). */
const asNobody = (() => {
  if (process.getuid?.() !== 0) return false;
  return spawnSync('runuser', ['-u', 'nobody', '--', process.execPath, '-e', '0']).status === 0;
})();
if (!asNobody) console.warn('[catalog] not root (or no runuser/nobody): the second-Unix-user holder tests are SKIPPED');

/** Runs a command as the user `nobody`, with a home of its own. */
function runAsNobody(args: string[], env: Record<string, string> = {}): { code: number | null; stdout: string; stderr: string } {
  const home = tempDir('nobody-home-');
  chmodSync(home, 0o755);
  chownSync(home, 65534, 65534);
  const vars = Object.entries({ HOME: home, XDG_CONFIG_HOME: `${home}/c`, XDG_CACHE_HOME: `${home}/k`, XDG_DATA_HOME: `${home}/d`, CATALOG_KEEP_WARM: '0', ...env }).map(([k, v]) => `${k}=${v}`);
  const r = spawnSync('runuser', ['-u', 'nobody', '--', 'env', ...vars, ...args], { cwd: ROOT, encoding: 'utf8', timeout: PATIENCE_MS });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Files and directories under `dir` that group or others may use (and how many entries were looked at). */
function looseModes(dir: string): { loose: string[]; seen: number } {
  const loose: string[] = [];
  let seen = 0;
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const path = join(d, name);
      const st = lstatSync(path);
      seen++;
      if (!st.isSymbolicLink() && st.mode & 0o077) loose.push(`${path} ${(st.mode & 0o777).toString(8)}`);
      if (st.isDirectory()) walk(path);
    }
  };
  const top = lstatSync(dir);
  if (top.mode & 0o077) loose.push(`${dir} ${(top.mode & 0o777).toString(8)}`);
  walk(dir);
  return { loose, seen };
}

describe('the background holder answers only its owner (issue 24)', () => {
  // the parent is traversable, so another user reaches the data directory's own permissions
  const parent = tempDir('private-');
  chmodSync(parent, 0o755);
  const data = join(parent, 'catalog');
  const env = { CATALOG_DATA: data, CATALOG_KEEP_WARM: '120' };
  let lock: Lock;

  beforeAll(async () => {
    const added = await catalog(['labels', 'add', 'name=Mine', '-o', 'json'], { env });
    expect(added.code, added.stderr).toBe(0);
    lock = lockOf(data);
  });

  afterAll(() => {
    try {
      process.kill(lockOf(data).pid, 'SIGTERM');
    } catch {
      // stopped already
    }
  });

  it("its lock holds a credential and is the owner's alone; the directory is 0700", () => {
    expect(lock).toMatchObject({ background: true, url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/), key: expect.stringMatching(/^[\w-]{43}$/) });
    expect(lstatSync(join(data, 'catalog-serve.json')).mode & 0o777).toBe(0o600);
    expect(lstatSync(join(data, 'catalog-holder.log')).mode & 0o777).toBe(0o600);
    expect(lstatSync(data).mode & 0o777).toBe(0o700);
  });

  it('the owner\'s commands go through it (the credential sent for them)', async () => {
    const listed = await catalog(['labels', 'list', '-o', 'json'], { env });
    expect(listed.code, listed.stderr).toBe(0);
    expect((JSON.parse(listed.stdout) as Array<{ name: string }>).map((r) => r.name)).toEqual(['Mine']);
    expect(lockOf(data).pid).toBe(lock.pid);
  });

  it('a request without the credential, or with another one, gets 401 and no rows', async () => {
    for (const headers of [{}, { 'catalog-holder-key': 'x'.repeat(43) }, { authorization: `Bearer ${lock.key}` }] as Record<string, string>[]) {
      const r = await exchange(`${lock.url}/labels`, { headers });
      expect(r.status).toBe(401);
      expect(JSON.parse(r.body)).toMatchObject({ code: 'PGRST302' });
      expect(r.body).not.toContain('Mine');
    }
  });

  it('a forged Host (DNS rebinding) gets 400, even with the credential', async () => {
    for (const host of ['evil.example', `evil.example:${new URL(lock.url).port}`, '127.0.0.1.evil.example', 'localhost.evil.example:80']) {
      const r = await exchange(`${lock.url}/labels`, { headers: { host, 'catalog-holder-key': lock.key! } });
      expect(r.status, host).toBe(400);
      expect(r.body).not.toContain('Mine');
    }
    const ok = await exchange(`${lock.url}/labels`, { headers: { host: `localhost:${new URL(lock.url).port}`, 'catalog-holder-key': lock.key! } });
    expect(ok.status).toBe(200);
  });

  it('a cross-site form POST writes nothing: 401 without the credential, 415 for its body type with it', async () => {
    const form = { method: 'POST', body: 'name=Evil', headers: { origin: 'https://evil.example', 'content-type': 'application/x-www-form-urlencoded' } };
    expect((await exchange(`${lock.url}/labels`, form)).status).toBe(401);
    for (const type of ['application/x-www-form-urlencoded', 'text/plain', 'multipart/form-data; boundary=x', undefined]) {
      const headers: Record<string, string> = { 'catalog-holder-key': lock.key! };
      if (type) headers['content-type'] = type;
      const r = await exchange(`${lock.url}/labels`, { method: 'POST', body: type === 'text/plain' ? '{"name":"Evil"}' : 'name=Evil', headers });
      expect(r.status, type).toBe(415);
      expect(JSON.parse(r.body)).toMatchObject({ code: 'PGRST102', message: `Content-Type not acceptable: ${type ?? '(none)'}` });
    }
    const listed = await catalog(['labels', 'list', '-o', 'json'], { env });
    expect((JSON.parse(listed.stdout) as Array<{ name: string }>).map((r) => r.name)).toEqual(['Mine']);
  });

  it('answers no CORS: neither a preflight nor a request with an Origin gets Access-Control-* headers', async () => {
    const preflight = await exchange(`${lock.url}/labels`, {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'catalog-holder-key' },
    });
    expect(preflight.status).toBe(401);
    const withKey = await exchange(`${lock.url}/labels`, { headers: { origin: 'https://evil.example', 'catalog-holder-key': lock.key! } });
    expect(withKey.status).toBe(200);
    for (const r of [preflight, withKey]) expect(Object.keys(r.headers).filter((h) => h.startsWith('access-control-'))).toEqual([]);
  });

  it.skipIf(!asNobody)('another Unix user gets nothing: the lock is unreadable, the directory refused, the port asks a credential', () => {
    const read = runAsNobody([process.execPath, '-e', `require('fs').readFileSync(${JSON.stringify(join(data, 'catalog-serve.json'))})`]);
    expect(read.code).not.toBe(0);
    expect(read.stderr).toMatch(/EACCES/);
    const cli = runAsNobody([process.execPath, BIN, 'labels', 'list', '-o', 'json'], { CATALOG_DATA: data });
    expect(cli.code, cli.stderr).toBe(2);
    // refused by its owner check, or earlier by the permissions of a directory above it
    expect(cli.stderr).toMatch(/the catalog directory .* (belongs to user 0, not to you \(user 65534\): refusing to use it|permission denied \(is it another user's\?\))/);
    expect(cli.stdout).not.toContain('Mine');
    const script = `require('http').get(${JSON.stringify(`${lock.url}/labels`)}, (r) => { let b = ''; r.on('data', (c) => (b += c)); r.on('end', () => console.log(r.statusCode, b)); })`;
    const raw = runAsNobody([process.execPath, '-e', script]);
    expect(raw.stdout).toMatch(/^401 /);
    expect(raw.stdout).not.toContain('Mine');
  });
});

describe('the data directory is private, as ssh wants ~/.ssh (issue 24)', () => {
  it('a new catalog is 0700 with 0600 files even under umask 000, a command opening it itself included', async () => {
    const data = join(tempDir('umask-'), 'catalog');
    const run = (args: string[], keepWarm: string) =>
      spawnSync('sh', ['-c', `umask 000; exec "$0" "$@"`, process.execPath, BIN, ...args], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, CATALOG_DATA: data, CATALOG_KEEP_WARM: keepWarm, CATALOG_URL: '' } });
    expect(run(['labels', 'add', 'name=Tight'], '0').status).toBe(0);
    expect(run(['labels', 'list'], '0').status).toBe(0);
    const first = looseModes(data);
    expect(first.seen).toBeGreaterThan(100);
    expect(first.loose).toEqual([]);
    // and through a background holder, stopped again
    expect(run(['labels', 'list'], '30').status).toBe(0);
    const holder = lockOf(data);
    process.kill(holder.pid, 'SIGTERM');
    await eventually(() => !existsSync(join(data, 'catalog-serve.json')));
    expect(looseModes(data).loose).toEqual([]);
  });

  it('a data directory writable by its group or others is refused with exit 2, as ssh does', async () => {
    const data = join(tempDir('loose-'), 'catalog');
    mkdirSync(data);
    chmodSync(data, 0o775);
    const r = await catalog(['labels', 'list'], { env: { CATALOG_DATA: data } });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`the catalog directory ${data} is writable by its group (mode 775): refusing to use it`);
    expect(r.stderr).toContain(`chmod 700 ${data}`);
    expect(existsSync(join(data, 'PG_VERSION'))).toBe(false);
  });

  it("a readable directory of the user's own is made 0700", async () => {
    const data = join(tempDir('open-'), 'catalog');
    mkdirSync(data);
    chmodSync(data, 0o755);
    const r = await catalog(['labels', 'list'], { env: { CATALOG_DATA: data } });
    expect(r.code, r.stderr).toBe(0);
    expect(lstatSync(data).mode & 0o777).toBe(0o700);
  });

  it.skipIf(!asNobody)('a data directory owned by another user is refused with exit 2', async () => {
    const data = join(tempDir('theirs-'), 'catalog');
    mkdirSync(data, { mode: 0o700 });
    chownSync(data, 65534, 65534);
    const r = await catalog(['labels', 'list'], { env: { CATALOG_DATA: data } });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/belongs to user 65534, not to you \(user 0\): refusing to use it/);
  });

  it('a symlinked holder log is never followed: the command says so (exit 2) and the target is untouched', async () => {
    const dir = tempDir('log-link-');
    const data = join(dir, 'catalog');
    // made by a command that opens the catalog itself, leaving no holder (and no log or lock) behind
    expect((await catalog(['labels', 'list'], { env: { CATALOG_DATA: data, CATALOG_KEEP_WARM: '0' } })).code).toBe(0);
    const victim = join(dir, 'victim.txt');
    writeFileSync(victim, 'precious\n'.repeat(200_000));
    symlinkSync(victim, join(data, 'catalog-holder.log'));
    const r = await catalog(['labels', 'list'], { env: { CATALOG_DATA: data, CATALOG_KEEP_WARM: '5' } });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${join(data, 'catalog-holder.log')} is a symbolic link: refusing to follow it (remove it)`);
    expect(readFileSync(victim, 'utf8')).toBe('precious\n'.repeat(200_000));
    expect(existsSync(join(data, 'catalog-serve.json'))).toBe(false);
  });

  it('a lock that is a symlink is not trusted: exit 2, its target neither read as a lock nor changed', async () => {
    const dir = tempDir('lock-link-');
    const data = join(dir, 'catalog');
    expect((await catalog(['labels', 'list'], { env: { CATALOG_DATA: data, CATALOG_KEEP_WARM: '0' } })).code).toBe(0);
    const elsewhere = join(dir, 'elsewhere.json');
    const planted = JSON.stringify({ pid: process.pid, start: null, url: 'http://127.0.0.1:9' });
    writeFileSync(elsewhere, planted);
    symlinkSync(elsewhere, join(data, 'catalog-serve.json'));
    const r = await catalog(['labels', 'list'], { env: { CATALOG_DATA: data, CATALOG_KEEP_WARM: '0' } });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`the lock ${join(data, 'catalog-serve.json')} is a symbolic link: it is not trusted (remove it)`);
    expect(readFileSync(elsewhere, 'utf8')).toBe(planted);
  });

  it.skipIf(!asNobody)("a lock planted by another user is not trusted: exit 2, and the planted URL gets no request", async () => {
    const data = join(tempDir('planted-'), 'catalog');
    expect((await catalog(['labels', 'add', 'name=Secret'], { env: { CATALOG_DATA: data } })).code).toBe(0);
    const seen: string[] = [];
    const trap = createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      res.end('[]');
    });
    await new Promise<void>((r) => trap.listen(0, '127.0.0.1', () => r()));
    try {
      const lockPath = join(data, 'catalog-serve.json');
      // a live pid (this test process), so only the owner check can turn it away
      writeFileSync(lockPath, JSON.stringify({ pid: process.pid, start: null, url: `http://127.0.0.1:${(trap.address() as AddressInfo).port}` }));
      chownSync(lockPath, 65534, 65534);
      const r = await catalog(['labels', 'add', 'name=Sent', '-o', 'json'], { env: { CATALOG_DATA: data } });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`the lock ${lockPath} belongs to user 65534, not to you (user 0): it is not trusted`);
      expect(seen).toEqual([]);
    } finally {
      trap.close();
    }
  });
});

describe('lock recovery does not trust a future mtime (a clock step-back, issue 24)', () => {
  const hourAhead = () => new Date(Date.now() + 3600_000);

  it('an unreadable lock whose mtime is an hour ahead is taken over at once, not waited on as "being written"', async () => {
    const data = join(tempDir('future-lock-'), 'catalog');
    expect((await catalog(['labels', 'add', 'name=Before'], { env: { CATALOG_DATA: data } })).code).toBe(0);
    const lockPath = join(data, 'catalog-serve.json');
    writeFileSync(lockPath, '', { mode: 0o600 });
    utimesSync(lockPath, hourAhead(), hourAhead());
    const r = await catalog(['labels', 'list', '-o', 'json'], { env: { CATALOG_DATA: data } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(/Waiting for process/);
    expect((JSON.parse(r.stdout) as Array<{ name: string }>).map((x) => x.name)).toEqual(['Before']);
  });

  it("a takeover guard left with a future mtime does not keep a dead holder's lock forever", async () => {
    const data = join(tempDir('future-guard-'), 'catalog');
    expect((await catalog(['labels', 'add', 'name=Before'], { env: { CATALOG_DATA: data } })).code).toBe(0);
    const lockPath = join(data, 'catalog-serve.json');
    // a dead holder's lock (pid 2^22 + 1 is above Linux's pid_max) and a killed remover's guard
    writeFileSync(lockPath, JSON.stringify({ pid: 4194305, start: '1', url: 'http://127.0.0.1:9' }), { mode: 0o600 });
    writeFileSync(`${lockPath}.takeover`, '', { mode: 0o600 });
    utimesSync(`${lockPath}.takeover`, hourAhead(), hourAhead());
    const r = await catalog(['labels', 'add', 'name=After', '-o', 'json'], { env: { CATALOG_DATA: data } });
    expect(r.code, r.stderr).toBe(0);
    const listed = await catalog(['labels', 'list', '-o', 'json'], { env: { CATALOG_DATA: data } });
    expect((JSON.parse(listed.stdout) as Array<{ name: string }>).map((x) => x.name).sort()).toEqual(['After', 'Before']);
  });
});
