import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/main.js';
import { COLLECTIONS } from '../../src/schema/catalog.js';
import { authenticate } from '../../src/server/auth.js';
import { testContext } from '../cli/support.js';
import { tempDir } from '../support/stores.js';
import { startServe } from './support.js';

const ROOT = process.cwd();
const BIN = join(ROOT, 'bin', 'catalog.js');
const BUILT = existsSync(join(ROOT, 'dist', 'cli', 'main.js'));
if (!BUILT) console.warn('\n[catalog] dist/ is missing: run `npx tsc -p .` first; the help e2e tests that spawn bin/catalog.js are SKIPPED.\n');

const SECRET = 'a-test-secret-that-is-32-chars-long!';
/** The commands this test runs every help example of (the terminal-experience commands). */
const MINE = [['changelog'], ['completion'], ['token'], ['token', 'create']];

/** Every visible command path of the program: ['artists'], ['artists', 'list'], …, ['token', 'create']. */
function commandPaths(cmd: Command, path: string[] = []): string[][] {
  return cmd.commands
    .filter((c) => c.name() !== 'help' && !(c as unknown as { _hidden: boolean })._hidden)
    .flatMap((c) => [[...path, c.name()], ...commandPaths(c, [...path, c.name()])]);
}

/** The lines of the "Examples:" block of a command's --help. */
function examplesOf(help: string): string[] {
  const block = help.split(/^Examples:$/m)[1] ?? '';
  const lines: string[] = [];
  for (const line of block.split('\n').slice(1)) {
    if (!/^ {2}\S/.test(line)) break;
    lines.push(line.trim());
  }
  return lines;
}

/** Runs the CLI as a user would (spawned), with its own home and the given environment. */
function cli(args: string[], env: Record<string, string> = {}, input?: string) {
  const home = tempDir('cli-home-');
  const r = spawnSync(process.execPath, [BIN, ...args], {
    encoding: 'utf8',
    input,
    env: { PATH: process.env.PATH ?? '', HOME: home, XDG_CACHE_HOME: join(home, 'cache'), XDG_CONFIG_HOME: join(home, 'config'), CATALOG_DATA: join(home, 'data'), ...env },
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

async function serve(extra: string[]): Promise<{ url: string; stop(): Promise<void> }> {
  const home = tempDir('serve-home-');
  const s = await startServe(['--data', join(home, 'data'), ...extra], { XDG_CACHE_HOME: join(home, 'cache') });
  return { url: s.url, stop: async () => void (await s.stop()) };
}

describe('help that teaches', () => {
  let helps: Map<string, string>;

  beforeAll(async () => {
    const program = await buildProgram(testContext().ctx);
    helps = new Map();
    for (const path of commandPaths(program)) {
      const { ctx, stdout } = testContext();
      const { run } = await import('../../src/cli/main.js');
      const code = await run(['node', 'catalog', ...path, '--help'], ctx);
      expect(code).toBe(0);
      helps.set(path.join(' '), stdout.text());
    }
  });

  it('gives two or three examples for changelog, completion and token', () => {
    for (const path of MINE) {
      const ex = examplesOf(helps.get(path.join(' '))!);
      expect(ex.length, path.join(' ')).toBeGreaterThanOrEqual(2);
      expect(ex.length, path.join(' ')).toBeLessThanOrEqual(3);
    }
  });

  it('gives at least two examples for every command that does the work (the leaves)', () => {
    const leaves = [...helps.keys()].filter((p) => ![...helps.keys()].some((q) => q.startsWith(`${p} `)));
    const missing = leaves.filter((p) => examplesOf(helps.get(p)!).length < 2);
    expect(missing).toEqual([]);
    // Reported, not enforced: group commands (`catalog artists --help`) and examples beyond three.
    const groups = [...helps.keys()].filter((p) => !leaves.includes(p) && examplesOf(helps.get(p)!).length === 0);
    const many = [...helps.keys()].filter((p) => examplesOf(helps.get(p)!).length > 3);
    if (groups.length || many.length) {
      console.warn(`[catalog] help without examples: ${groups.join(', ') || 'none'}; more than three examples: ${many.join(', ') || 'none'}`);
    }
  });

  it.skipIf(!BUILT)('serve --help says what the embedded store is for: a large write makes other requests wait; shared use wants PostgreSQL', () => {
    const r = cli(['serve', '--help']);
    expect(r.code).toBe(0);
    const text = r.out.replace(/\s+/g, ' ');
    expect(text).toContain('PGlite runs one statement at a time in this process, so a large write');
    expect(text).toContain('makes every other request wait until it is done');
    expect(text).toContain('A catalog several people use at once wants --database-url');
  });

  it.skipIf(!BUILT)('prints a short guide when run alone: collections, common commands, where the data lives', () => {
    const r = cli([]);
    expect(r.code).toBe(0);
    expect(r.out).toContain(`Collections: ${COLLECTIONS.join(', ')}`);
    expect(r.out).toContain('Common commands:');
    expect(r.out).toMatch(/Data: the embedded catalog in \S+data \(CATALOG_DATA\)/);
    expect(r.out.split('\n').length).toBeLessThan(30);
  });
});

describe.skipIf(!BUILT)('every example in the help of changelog, completion and token runs', () => {
  let svc: { url: string; stop(): Promise<void> };
  beforeAll(async () => {
    svc = await serve(['--jwt-secret', SECRET]);
  });
  afterAll(async () => {
    await svc?.stop();
  });

  it('runs each example as printed, with `catalog` being bin/catalog.js', () => {
    const seen = new Set<string>();
    for (const path of MINE) {
      const help = cli([...path, '--help']);
      expect(help.code).toBe(0);
      for (const example of examplesOf(help.out)) {
        if (seen.has(example)) continue;
        seen.add(example);
        const home = tempDir('example-home-');
        const fpath = join(home, 'zsh-functions');
        mkdirSync(fpath, { recursive: true });
        mkdirSync(join(home, '.config', 'fish', 'completions'), { recursive: true });
        const command = example.replace('https://catalog.example.com', svc.url);
        // fpath is zsh's function path; bash only needs ${fpath[1]} to name a directory.
        const script = `set -euo pipefail; fpath=("${fpath}" "${fpath}"); catalog() { node "${BIN}" "$@"; }\n${command}`;
        const r = spawnSync('bash', ['-c', script], {
          cwd: home,
          encoding: 'utf8',
          env: { PATH: process.env.PATH ?? '', HOME: home, XDG_CACHE_HOME: join(home, 'cache'), XDG_CONFIG_HOME: join(home, 'config'), CATALOG_URL: svc.url, CATALOG_JWT_SECRET: SECRET },
        });
        expect(r.status, `${example}\n${r.stderr}`).toBe(0);
        // What each example should have produced.
        if (example.includes('> reader.jwt')) expect(readFileSync(join(home, 'reader.jwt'), 'utf8')).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+\n$/);
        if (example.includes('_catalog"')) expect(readFileSync(join(fpath, '_catalog'), 'utf8')).toMatch(/^#compdef catalog/);
        if (example.includes('catalog.fish')) expect(readFileSync(join(home, '.config/fish/completions/catalog.fish'), 'utf8')).toContain('complete -c catalog');
        if (/^catalog changelog$/.test(example)) expect(r.stdout).toContain('12.2.3');
        if (/token create --role editor --secret/.test(example)) expect(r.stdout).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+\n$/);
      }
    }
    expect(seen.size).toBeGreaterThanOrEqual(8);
  });
});

describe.skipIf(!BUILT)('catalog token create', () => {
  let svc: { url: string; stop(): Promise<void> };
  beforeAll(async () => {
    svc = await serve(['--jwt-secret', SECRET]);
  });
  afterAll(async () => {
    await svc?.stop();
  });

  it('prints only a token the service accepts for the role', async () => {
    const r = cli(['token', 'create', '--role', 'editor', '--secret', SECRET]);
    expect(r.code).toBe(0);
    expect(r.err).toBe('');
    expect(r.out).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+\n$/);
    const token = r.out.trim();
    const principal = await authenticate(`Bearer ${token}`, SECRET);
    expect(principal.role).toBe('editor');
    const claims = principal.claims as { exp: number; iat: number };
    expect(claims.exp - claims.iat).toBe(3600);

    const added = cli(['--url', svc.url, '--token', token, 'labels', 'add', 'name=Minted', '-o', 'json']);
    expect(added.code).toBe(0);
    const id = JSON.parse(added.out).id as string;
    // An editor writes but may not delete; without a token nothing is written.
    expect(cli(['--url', svc.url, '--token', token, 'labels', 'remove', id, '--yes']).code).toBe(4);
    expect(cli(['--url', svc.url, 'labels', 'add', 'name=Anonymous']).code).toBe(4);
  });

  it('reads the secret from CATALOG_JWT_SECRET and mints tokens that never expire on request', async () => {
    const r = cli(['token', 'create', '--role', 'admin', '--expires', 'never'], { CATALOG_JWT_SECRET: SECRET });
    expect(r.code).toBe(0);
    const principal = await authenticate(`Bearer ${r.out.trim()}`, SECRET);
    expect(principal.role).toBe('admin');
    expect((principal.claims as { exp?: number }).exp).toBeUndefined();
  });

  it('fails with exit 2 and says what to pass: no secret, a bad role, a bad lifetime', () => {
    const none = cli(['token', 'create', '--role', 'editor']);
    expect(none.code).toBe(2);
    expect(none.err).toContain('no secret to sign the token with');
    expect(none.err).toContain('--secret or set CATALOG_JWT_SECRET');
    const role = cli(['token', 'create', '--role', 'owner', '--secret', SECRET]);
    expect(role.code).toBe(2);
    expect(role.err).toContain("--role must be one of reader, editor, admin, not 'owner'");
    const life = cli(['token', 'create', '--role', 'reader', '--expires', 'soon', '--secret', SECRET]);
    expect(life.code).toBe(2);
    expect(life.err).toContain('--expires 30m');
    expect(cli(['token', 'create', '--secret', SECRET]).code).toBe(2);
  });
});

describe.skipIf(!BUILT)('terminal manners', () => {
  it('colours only when asked or on a terminal: FORCE_COLOR on a pipe, NO_COLOR never', () => {
    expect(cli(['changelog', '-o', 'table']).out).not.toContain('\x1b[');
    expect(cli(['changelog', '-o', 'table'], { FORCE_COLOR: '1' }).out).toContain('\x1b[31m');
    expect(cli(['changelog', '-o', 'table'], { NO_COLOR: '1' }).out).not.toContain('\x1b[');
    expect(cli(['--no-color', 'changelog', '-o', 'table'], { FORCE_COLOR: '1' }).out).not.toContain('\x1b[');
  });

  it('draws no spinner and no prompts on a pipe', () => {
    const r = cli(['--url', 'http://127.0.0.1:9', 'labels', 'add', '--interactive'], {}, 'x\n');
    expect(r.code).toBe(2);
    expect(r.err).not.toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]|\?\s+name/);
  });
});
