import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PATIENCE_MS } from '../support/patience.js';
import { tempDir } from '../support/stores.js';
import { startServe } from './support.js';

const ROOT = process.cwd();
const BIN = join(ROOT, 'bin', 'catalog.js');
const BUILT = existsSync(join(ROOT, 'dist', 'cli', 'main.js'));
const HAS_TMUX = spawnSync('sh', ['-c', 'command -v tmux']).status === 0;

if (!HAS_TMUX) console.warn('\n[catalog] tmux is not installed: the interactive terminal e2e tests are SKIPPED (apt-get install -y tmux to run them).\n');
if (!BUILT) console.warn('\n[catalog] dist/ is missing: run `npx tsc -p .` first; the e2e tests are SKIPPED.\n');

/** `catalog serve --port 0` on a new data directory; resolves with its URL (printed on stderr). */
async function serve(extra: string[] = []): Promise<{ url: string; proc: ChildProcess; stop(): Promise<void> }> {
  const home = tempDir('serve-home-');
  const s = await startServe(['--data', join(home, 'data'), ...extra], { XDG_CACHE_HOME: join(home, 'cache'), XDG_CONFIG_HOME: join(home, 'config') });
  return { url: s.url, proc: s.proc, stop: async () => void (await s.stop()) };
}

/**
 * A private tmux server on a socket in our own temporary directory, so the tests never touch anyone's
 * sessions and do not depend on the state of the shared /tmp/tmux-UID (tmux refuses a socket directory
 * another user owns or others may write: "directory /tmp/tmux-0 has unsafe permissions").
 */
let socketPath = '';
const SOCKET = () => (socketPath ||= join(tempDir('tmux-socket-'), 's'));
const tmux = (...args: string[]) => execFileSync('tmux', ['-S', SOCKET(), ...args], { encoding: 'utf8' });

/** One command running in a 200×50 tmux pane: keys in, screen out. */
function terminalSession(name: string, command: string, env: Record<string, string>) {
  const vars = Object.entries(env).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(' ');
  tmux('new-session', '-d', '-x', '200', '-y', '50', '-s', name, `cd ${JSON.stringify(ROOT)} && env ${vars} ${command}; echo "EXIT=$?"; sleep 600`);
  const screen = () => tmux('capture-pane', '-p', '-t', name, '-S', '-2000');
  return {
    screen,
    /** Waits until the pane shows `text` (the whole history is searched). */
    async waitFor(text: string | RegExp): Promise<string> {
      // a guard against a hang (test/support/patience.ts), never a speed check: a loaded machine may take long to draw the prompt
      const deadline = Date.now() + PATIENCE_MS;
      for (;;) {
        const s = screen();
        if (typeof text === 'string' ? s.includes(text) : text.test(s)) return s;
        if (Date.now() > deadline) throw new Error(`the terminal never showed ${String(text)}; it shows:\n${s}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    /** Types text literally. */
    type: (text: string) => void tmux('send-keys', '-t', name, '-l', text),
    /** Presses named keys (Enter, Up, Down, Space, BSpace). */
    press: (...keys: string[]) => void tmux('send-keys', '-t', name, ...keys),
    close: () => void spawnSync('tmux', ['-S', SOCKET(), 'kill-session', '-t', name]),
  };
}

describe.skipIf(!BUILT)('interactive add without a terminal', () => {
  let svc: Awaited<ReturnType<typeof serve>>;
  beforeAll(async () => {
    svc = await serve();
  });
  afterAll(async () => {
    await svc?.stop();
  });

  it('fails with exit 2, names the flags to pass, and adds nothing', async () => {
    const home = tempDir('home-');
    const r = spawnSync(process.execPath, [BIN, 'labels', 'add', '--interactive', '--url', svc.url], {
      input: 'Blue Note\n',
      encoding: 'utf8',
      env: { ...process.env, XDG_CACHE_HOME: join(home, 'cache'), XDG_CONFIG_HOME: join(home, 'config') },
    });
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('--interactive needs a terminal to ask on, and stdin is not one');
    expect(r.stderr).toContain('catalog labels add FIELD=VALUE... or --json/--file');
    expect(await (await fetch(`${svc.url}/labels`)).json()).toEqual([]);
  });
});

describe.skipIf(!BUILT || !HAS_TMUX)('interactive add in a real terminal (tmux)', () => {
  let svc: Awaited<ReturnType<typeof serve>>;
  let home: string;
  const sessions: Array<{ close(): void }> = [];
  const env = () => ({ XDG_CACHE_HOME: join(home, 'cache'), XDG_CONFIG_HOME: join(home, 'config'), NO_COLOR: '1', TERM: 'xterm-256color' });
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${svc.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', prefer: 'return=representation' }, body: JSON.stringify(body) });
    expect(res.status).toBe(201);
    return ((await res.json()) as Array<Record<string, string>>)[0];
  };

  beforeAll(async () => {
    svc = await serve();
    home = tempDir('tmux-home-');
  });
  afterAll(async () => {
    for (const s of sessions) s.close();
    spawnSync('tmux', ['-S', SOCKET(), 'kill-server']);
    await svc?.stop();
  });

  it('labels add --interactive: asks the name, shows the summary, adds the label', async () => {
    const t = terminalSession('labels', `node bin/catalog.js labels add --interactive --url ${svc.url}`, env());
    sessions.push(t);
    await t.waitFor('? name');
    t.type('Blue Note');
    t.press('Enter');
    await t.waitFor('Add this label?');
    expect(t.screen()).toMatch(/New label:\n\s+name\s+Blue Note/);
    t.press('Enter');
    const screen = await t.waitFor(/EXIT=\d+/);
    expect(screen).toContain('EXIT=0');
    expect(screen).toContain('Added 1 label');
    const rows = (await (await fetch(`${svc.url}/labels?name=eq.Blue%20Note`)).json()) as Array<{ id: string; name: string }>;
    expect(rows).toHaveLength(1);
    expect(screen).toContain(rows[0].id);
  });

  it('releases add --interactive: date checked as typed, label and genre picked from searchable lists, JSON in the editor', async () => {
    const impulse = await post('/labels', { name: 'Impulse!' });
    await post('/labels', { name: 'Verve' });
    const jazz = await post('/genres', { name: 'Jazz' });
    const editor = join(home, 'fake-editor.sh');
    writeFileSync(editor, `#!/bin/sh\nprintf '{"front": "a-love-supreme.jpg", "size": 3000}\\n' > "$1"\n`);
    chmodSync(editor, 0o755);

    const t = terminalSession('releases', `node bin/catalog.js releases add --interactive --url ${svc.url}`, { ...env(), EDITOR: editor, VISUAL: editor });
    sessions.push(t);
    await t.waitFor('Which fields do you want to fill in?');
    // The list wraps: Up from the first entry reaches the last one, cover_artwork.
    t.press('Up', 'Space');
    await t.waitFor('◉ cover_artwork');
    t.press('Enter');
    await t.waitFor('? release_title');
    t.type('A Love Supreme');
    t.press('Enter');
    await t.waitFor('? release_date');
    t.type('1965-02-3');
    await t.waitFor(/1965-02-3 YYYY-MM-DD/);
    t.type('0');
    await t.waitFor('1965-02-30 1965-02-30 is not a real date');
    t.press('Enter');
    await t.waitFor('> 1965-02-30 is not a real date');
    t.press('BSpace', 'BSpace', 'BSpace', 'BSpace', 'BSpace');
    t.type('01-09');
    t.press('Enter');
    await t.waitFor('? label_id');
    await t.waitFor('Verve');
    t.type('impu');
    // The highlighted entry's id shows under the list once the search has answered.
    await t.waitFor(impulse.id);
    t.press('Enter');
    await t.waitFor('? genre_id');
    t.type('jaz');
    await t.waitFor(jazz.id);
    t.press('Enter');
    await t.waitFor('subgenre_id: there are no subgenres yet');
    await t.waitFor('? cover_artwork');
    t.type('y');
    t.press('Enter');
    await t.waitFor('to launch your preferred editor');
    t.press('Enter');
    await t.waitFor('Add this release?');
    const summary = t.screen();
    expect(summary).toMatch(/release_title\s+A Love Supreme/);
    expect(summary).toMatch(/release_date\s+1965-01-09/);
    expect(summary).toMatch(/label_id\s+Impulse! [0-9a-f]{8}…/);
    expect(summary).toMatch(/genre_id\s+Jazz [0-9a-f]{8}…/);
    t.press('Enter');
    const screen = await t.waitFor(/EXIT=\d+/);
    expect(screen).toContain('EXIT=0');

    const res = await fetch(`${svc.url}/releases?release_title=eq.A%20Love%20Supreme&select=release_date,label_id,genre_id,cover_artwork,labels(name),genres(name)`);
    expect(await res.json()).toEqual([
      {
        release_date: '1965-01-09',
        label_id: impulse.id,
        genre_id: jazz.id,
        cover_artwork: { front: 'a-love-supreme.jpg', size: 3000 },
        labels: { name: 'Impulse!' },
        genres: { name: 'Jazz' },
      },
    ]);
  });
});
