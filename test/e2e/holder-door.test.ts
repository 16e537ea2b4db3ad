import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, cpSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOOR_FILE, DOOR_PROTOCOL, FRAME, MAX_SOCKET_PATH, STDOUT_GONE } from '../../src/holder/door.js';
import { tempDir } from '../support/stores.js';
import { asOnScreen, BIN, catalog, ensureBuilt, type Result, ROOT } from './support.js';
import { PATIENCE_MS } from '../support/patience.js';
import { eventually } from '../support/patience.js';

ensureBuilt();

// the door is the bundle's (bin/catalog.js runs dist/cli/ instead while a tsc is newer)
const mtime = (rel: string) => statSync(join(ROOT, rel), { throwIfNoEntry: false })?.mtimeMs ?? -1;
const bundled = mtime('dist/bundle/catalog.js') >= mtime('dist/cli/main.js');
if (!bundled) process.stderr.write('[holder-door] dist/bundle/ is older than dist/cli/: the command door tests are SKIPPED (npm run build)\n');

const data = join(tempDir('door-'), 'catalog');
const socket = join(data, DOOR_FILE);
const env = { CATALOG_DATA: data, CATALOG_KEEP_WARM: '120', NO_COLOR: '1' };

/** The V8 code cache files of an XDG_CACHE_HOME: a command that runs itself writes one in a new one; the door never does. */
const codeCaches = (cacheHome: string) => {
  const dir = join(cacheHome, 'catalog-v8');
  return existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.v8')) : [];
};

/** Runs a command as a user would, and tells whether the warm holder ran it (see codeCaches). */
async function viaDoor(args: string[], extra: Record<string, string> = {}): Promise<Result & { door: boolean }> {
  const cache = tempDir('door-cache-');
  const r = await catalog(args, { env: { ...env, XDG_CACHE_HOME: cache, ...extra } });
  return { ...r, door: codeCaches(cache).length === 0 };
}

/** Runs a command in its own process whatever the holder (a node option: the client never offers it). */
const here = (args: string[], extra: Record<string, string> = {}) => catalog(args, { env: { ...env, ...extra }, nodeArgs: ['--max-http-header-size=16384'] });

const output = (r: Result) => ({ code: r.code, stdout: r.stdout, stderr: r.stderr });

/** A filter only the service refuses (PostgreSQL's regular expressions), and what it says. */
const SERVICE_ERROR = 'name=match.(';
const SERVICE_ERROR_TEXT = /invalid regular expression/;

/** Runs `node <bin> ...args` (stdin not a terminal), as support.ts's catalog does for this checkout's. */
function catalogAt(bin: string, args: string[], vars: Record<string, string>, nodeArgs: string[] = []): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeArgs, bin, ...args], { cwd: ROOT, env: { ...process.env, NO_COLOR: undefined, FORCE_COLOR: undefined, CATALOG_URL: undefined, ...vars }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

/**
 * A copy of the package (bin/, the bundle, the PGlite template) and a catalog of its own, so that
 * rebuilding or changing it touches no other test's; `patchBin` rewrites the copy's bin/catalog.js.
 * `run` runs a command through it as a user would, and tells whether a warm holder ran it.
 */
function packageCopy(patchBin: (text: string) => string = (t) => t) {
  const pkg = tempDir('door-package-');
  cpSync(join(ROOT, 'bin'), join(pkg, 'bin'), { recursive: true });
  writeFileSync(join(pkg, 'bin', 'catalog.js'), patchBin(readFileSync(join(ROOT, 'bin', 'catalog.js'), 'utf8')));
  mkdirSync(join(pkg, 'dist'));
  cpSync(join(ROOT, 'dist', 'bundle'), join(pkg, 'dist', 'bundle'), { recursive: true });
  for (const f of readdirSync(join(ROOT, 'dist')).filter((f) => f.endsWith('.pack'))) cpSync(join(ROOT, 'dist', f), join(pkg, 'dist', f));
  cpSync(join(ROOT, 'package.json'), join(pkg, 'package.json'));
  symlinkSync(join(ROOT, 'node_modules'), join(pkg, 'node_modules'));
  const own = { ...env, CATALOG_DATA: join(tempDir('door-copy-'), 'catalog') };
  const run = async (args: string[]) => {
    const cache = tempDir('door-cache-');
    const r = await catalogAt(join(pkg, 'bin', 'catalog.js'), args, { ...own, XDG_CACHE_HOME: cache });
    return { ...r, door: codeCaches(cache).length === 0 };
  };
  const holder = () => (JSON.parse(readFileSync(join(own.CATALOG_DATA, 'catalog-serve.json'), 'utf8')) as { pid: number }).pid;
  const stop = () => {
    try {
      process.kill(holder(), 'SIGTERM');
    } catch {
      // gone already
    }
  };
  return { pkg, data: own.CATALOG_DATA, run, stop };
}

/** Waits (bounded) for the command door of the holder of `dir`. */
async function doorOpens(dir: string): Promise<void> {
  await eventually(() => existsSync(join(dir, DOOR_FILE)), 10);
}

/** The holder's pid, from its lock. */
const holderPid = () => (JSON.parse(readFileSync(join(data, 'catalog-serve.json'), 'utf8')) as { pid: number }).pid;

/** Runs the command in a pseudo-terminal (util-linux `script`), `cols` wide; node options given force it to run itself. */
function inTerminal(args: string[], cols: number, nodeArgs: string[] = []): Promise<string> {
  const sh = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const command = `stty cols ${cols} rows 40 2>/dev/null; exec ${[process.execPath, ...nodeArgs, BIN, ...args].map(sh).join(' ')}`;
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qec', command, '/dev/null'], { cwd: ROOT, env: { ...process.env, ...env, NO_COLOR: undefined, FORCE_COLOR: undefined, CATALOG_URL: undefined, TERM: 'xterm' }, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    child.on('error', reject);
    child.on('close', () => resolve(asOnScreen(out).replace(/\r\n/g, '\n')));
    child.stdin.end();
  });
}

describe.skipIf(!bundled)("the background holder's command door (src/holder/door.ts, bin/catalog.js)", () => {
  let id = '';

  beforeAll(async () => {
    // the first command makes the catalog and starts the background holder, which opens its door
    const add = await catalog(['labels', 'add', 'name=Door Records', '-o', 'json'], { env });
    expect(add.code, add.stderr).toBe(0);
    id = (JSON.parse(add.stdout) as { id: string }).id;
    expect((await catalog(['labels', 'add', 'name=Smith & Jones'], { env })).code).toBe(0);
    await eventually(() => existsSync(socket), 10);
  });

  afterAll(() => {
    try {
      process.kill(holderPid(), 'SIGTERM');
    } catch {
      // gone already
    }
  });

  it('is a socket only its owner may use, in the private data directory', () => {
    const st = lstatSync(socket);
    expect(st.isSocket()).toBe(true);
    expect(st.mode & 0o777).toBe(0o600);
    expect(statSync(data).mode & 0o777).toBe(0o700);
  });

  it('runs reading commands in the warm holder: the same bytes, stderr and exit code as a command that runs itself', async () => {
    const lines = [
      ['labels', 'list'],
      ['labels', 'ls', '-o', 'csv', '--select', 'name'],
      ['labels', 'list', '-o', 'table', '--where', 'name~*door*'],
      ['labels', 'list', '--where', 'name=Nobody'],
      ['labels', 'count'],
      ['labels', 'get', id],
      ['labels', 'get', id, '-o', 'yaml'],
      ['labels', 'get', '00000000-0000-4000-8000-000000000000'],
      ['labels', 'list', '--no-such-flag'],
      ['labels', 'list', '--where', 'no_such_field=1'],
      ['--output', 'json', 'labels', 'list', '--limit', '1'],
    ];
    for (const args of lines) {
      const door = await viaDoor(args);
      expect(door.door, args.join(' ')).toBe(true);
      expect(output(door), args.join(' ')).toEqual(output(await here(args)));
    }
    // and they did answer (not two equal failures)
    expect((await viaDoor(['labels', 'count'])).stdout.trim()).toBe('2');
    expect((await viaDoor(['labels', 'list', '--no-such-flag'])).code).toBe(2);
  });

  it('words -v lines and the service\'s errors as a command that runs itself (its requests served in the holder, not over HTTP)', async () => {
    // the milliseconds of a -v line differ from run to run; everything else is the same bytes
    const untimed = (r: Result) => ({ ...output(r), stderr: r.stderr.replace(/\(\d+ ms\)/g, '(N ms)') });
    const lines = [
      ['labels', 'list', '-v'],
      ['-v', 'labels', 'count'],
      ['labels', 'get', id, '--verbose', '-o', 'json'],
      ['labels', 'get', '00000000-0000-4000-8000-000000000000', '-v'],
      // an error only the service finds (PostgreSQL refuses the pattern), plain and with -v
      ['labels', 'list', '--where', SERVICE_ERROR],
      ['labels', 'list', '--where', SERVICE_ERROR, '-v'],
    ];
    for (const args of lines) {
      const door = await viaDoor(args);
      expect(door.door, args.join(' ')).toBe(true);
      expect(untimed(door), args.join(' ')).toEqual(untimed(await here(args)));
    }
    // and they say what they should: the holder's URL on the -v line, the service's error
    expect((await viaDoor(['labels', 'list', '-v'])).stderr).toMatch(/^GET http:\/\/127\.0\.0\.1:\d+\/labels\S* → 200 \(\d+ ms\)$/m);
    const refused = await viaDoor(['labels', 'list', '--where', SERVICE_ERROR]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(SERVICE_ERROR_TEXT);
  });

  it('hands back what it does not run as the client would, which then runs itself as before', async () => {
    const cases: Array<[string[], Record<string, string>]> = [
      [['labels', 'list', '--all'], {}],
      [['labels', 'list', '--dry-run'], {}],
      [['labels', 'list', '--url', 'http://127.0.0.1:9'], {}],
      [['labels', 'list'], { TZ: 'America/New_York' }],
      [['labels', 'list'], { LC_ALL: 'C' }],
      // the client says nothing of its own under --pending-deprecation
      [['labels', 'list'], { NODE_PENDING_DEPRECATION: '1' }],
      [['labels', 'export', '-o', 'csv'], {}],
      [['labels', 'list', '--help'], {}],
    ];
    // an export's summary line says how long it took ('(0.0 s)'): that differs from run to run
    const untimed = (r: Result) => ({ ...output(r), stderr: r.stderr.replace(/\(\d+\.\d s\)/g, '(N s)') });
    for (const [args, extra] of cases) {
      const door = await viaDoor(args, extra);
      expect(door.door, `${args.join(' ')} ${JSON.stringify(extra)}`).toBe(false);
      expect(untimed(door), args.join(' ')).toEqual(untimed(await here(args, extra)));
    }
  });

  it('is not used once a build has replaced the bundle its holder runs', async () => {
    const copy = packageCopy();
    expect((await copy.run(['labels', 'add', 'name=Rebuilt'])).code).toBe(0);
    await doorOpens(copy.data);
    const warm = await copy.run(['labels', 'list']);
    expect(warm.door).toBe(true);
    try {
      // a build writes the entry anew: the holder still runs the code it loaded before
      const entry = join(copy.pkg, 'dist', 'bundle', 'catalog.js');
      writeFileSync(entry, readFileSync(entry));
      const stale = await copy.run(['labels', 'list']);
      expect(stale.door).toBe(false);
      expect(output(stale)).toEqual(output(warm));
    } finally {
      copy.stop();
    }
    // the door closes before the server and its lock: once the lock is gone, so is the socket
    await eventually(() => !existsSync(join(copy.data, 'catalog-serve.json')), 10);
    expect(existsSync(join(copy.data, 'catalog-serve.json'))).toBe(false);
    expect(existsSync(join(copy.data, DOOR_FILE))).toBe(false);
  });

  it('a door left behind by a holder killed with SIGKILL is passed by: the command runs itself', async () => {
    const dir = join(tempDir('door-stale-'), 'catalog');
    const vars = { ...env, CATALOG_DATA: dir, CATALOG_KEEP_WARM: '0' };
    expect((await catalog(['labels', 'add', 'name=Stale'], { env: vars })).code).toBe(0);
    // a socket nobody listens on any more, where the door's is
    const made = spawnSync(process.execPath, ['-e', `require('net').createServer().listen(${JSON.stringify(join(dir, DOOR_FILE))}, () => process.kill(process.pid, 'SIGKILL'))`]);
    expect(made.signal).toBe('SIGKILL');
    expect(lstatSync(join(dir, DOOR_FILE)).isSocket()).toBe(true);
    // the client tries it (a private directory of this user's, a socket of this user's), is refused, and runs the command itself
    const r = await catalog(['labels', 'list', '-o', 'csv', '--select', 'name'], { env: vars });
    expect(output(r)).toEqual({ code: 0, stdout: 'name\nStale\n', stderr: '' });
  });

  it('draws for the client\'s terminal: its width, and the first page of a list as a terminal gets it', async () => {
    // the created and updated columns say how long ago ("just now", "1 minute ago"): two runs that
    // straddle a step of that differ there, and in the column widths it sets; then every other cell
    // must still be the same, in the same lines
    const ago = /just now|\d+ (?:minute|hour|day|month|year)s? ago/g;
    const same = (a: string, b: string) => a === b || (a.replace(ago, '~').replace(/ +/g, ' ') === b.replace(ago, '~').replace(/ +/g, ' ') && a.split('\n').length === b.split('\n').length);
    for (const cols of [60, 120]) {
      const door = await inTerminal(['labels', 'list'], cols);
      expect(door).toContain('Door Records');
      const itself = await inTerminal(['labels', 'list'], cols, ['--max-http-header-size=16384']);
      expect(same(door, itself), `${door}\n---\n${itself}`).toBe(true);
    }
  });

  it('leaves commands that read stdin to run themselves: `import -` from a pipe', async () => {
    const imported = await catalog(['labels', 'import', '-', '--format', 'csv'], { env, input: 'name\nPiped Label\n' });
    expect(imported.code, imported.stderr).toBe(0);
    const list = await viaDoor(['labels', 'list', '--where', 'name=Piped Label', '-o', 'json']);
    expect(list.door).toBe(true);
    expect((JSON.parse(list.stdout) as Array<{ name: string }>).map((l) => l.name)).toEqual(['Piped Label']);
  });

  it('a Ctrl-C stops a command waiting on the holder', async () => {
    const pid = holderPid();
    // a holder that does not answer (stopped): the command waits on it, in the door or past it
    process.kill(pid, 'SIGSTOP');
    try {
      const child = spawn(process.execPath, [BIN, 'labels', 'list'], { cwd: ROOT, env: { ...process.env, ...env }, stdio: 'ignore' });
      const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
      await new Promise((r) => setTimeout(r, 300));
      child.kill('SIGINT');
      expect(await ended).toEqual({ code: null, signal: 'SIGINT' });
    } finally {
      process.kill(pid, 'SIGCONT');
    }
  });

  it('speaks the protocol bin/catalog.js speaks', () => {
    const bin = readFileSync(BIN, 'utf8');
    expect(bin).toContain(`const DOOR_FILE = '${DOOR_FILE}';`);
    expect(bin).toContain(`const DOOR_PROTOCOL = ${DOOR_PROTOCOL};`);
    expect(bin).toContain(`const MAX_SOCKET_PATH = ${MAX_SOCKET_PATH};`);
    expect(bin).toContain(`const FRAME = { STARTED: ${FRAME.STARTED}, STDOUT: ${FRAME.STDOUT}, STDERR: ${FRAME.STDERR}, EXIT: ${FRAME.EXIT}, HAND_BACK: ${FRAME.HAND_BACK} };`);
    expect(bin).toContain(`const STDOUT_GONE = ${STDOUT_GONE};`);
  });

  describe('another Unix user', () => {
    const asNobody = process.getuid?.() === 0 && spawnSync('runuser', ['-u', 'nobody', '--', process.execPath, '-e', '0']).status === 0;
    if (!asNobody) console.warn('[holder-door] not root (or no runuser/nobody): the second-user door test is SKIPPED');

    it.skipIf(!asNobody)('cannot reach the door, and its commands never go through it', () => {
      const home = tempDir('door-nobody-');
      chmodSync(home, 0o755);
      chownSync(home, 65534, 65534);
      const as = (args: string[], extra: Record<string, string> = {}) => {
        const vars = Object.entries({ HOME: home, XDG_CACHE_HOME: `${home}/k`, CATALOG_DATA: data, ...extra }).map(([k, v]) => `${k}=${v}`);
        return spawnSync('runuser', ['-u', 'nobody', '--', 'env', ...vars, ...args], { cwd: ROOT, encoding: 'utf8', timeout: PATIENCE_MS });
      };
      const raw = as([process.execPath, '-e', `require('net').connect(${JSON.stringify(socket)}).on('connect', () => { console.log('connected'); process.exit(0); }).on('error', (e) => { console.log(e.code); process.exit(0); })`]);
      expect(raw.stdout.trim()).toBe('EACCES');
      const cli = as([process.execPath, BIN, 'labels', 'list', '-o', 'json']);
      expect(cli.status, cli.stderr).toBe(2);
      expect(cli.stdout).toBe('');
      expect(cli.stderr).toMatch(/the catalog directory .* (belongs to user 0|permission denied)/);
    });
  });
});
