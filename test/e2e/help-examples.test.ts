import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/stores.js';
import { catalog, ensureBuilt, type Serve, startServe } from './support.js';

/**
 * Splits an example line as a POSIX shell would for the simple quoting the examples use.
 * @example words(`catalog a list --where 'x y'`) // ['catalog', 'a', 'list', '--where', 'x y']
 */
function words(line: string): string[] {
  const out: string[] = [];
  let cur: string | null = null;
  let quote: string | null = null;
  for (const ch of line) {
    if (quote) {
      if (ch === quote) quote = null;
      else cur += ch;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      cur ??= '';
    } else if (/\s/.test(ch)) {
      if (cur !== null) out.push(cur);
      cur = null;
    } else cur = (cur ?? '') + ch;
  }
  if (cur !== null) out.push(cur);
  return out;
}

const PLACEHOLDER = '3f2a9c1e-8b1d-4e7a-9c55-0d6f1b2a4e10';
const COMMANDS = ['list', 'get', 'add', 'update', 'remove', 'describe'];

let serve: Serve;
/** The record each test's examples name by id, one per collection and command ("labels get"): `remove` removes its own. */
const ids: Record<string, string> = {};

beforeAll(async () => {
  ensureBuilt();
  serve = await startServe(['--data', tempDir('examples-')]);
  for (const c of ['labels', 'releases']) {
    const title = c === 'labels' ? 'name' : 'release_title';
    const r = await catalog(['--url', serve.url, c, 'add', '--json', JSON.stringify(COMMANDS.map(() => ({ [title]: 'Old Title' })))]);
    const added = JSON.parse(r.stdout) as Array<{ id: string }>;
    COMMANDS.forEach((command, i) => (ids[`${c} ${command}`] = added[i].id));
  }
});

afterAll(async () => {
  await serve.stop();
});

describe('every example in --help runs', () => {
  for (const collection of ['labels', 'releases']) {
    for (const command of COMMANDS) {
      it(`catalog ${collection} ${command}`, async () => {
        const help = await catalog([collection, command, '--help']);
        expect(help.code).toBe(0);
        const examples = help.stdout.split('Examples:\n')[1]?.split('\n').map((l) => l.trim()).filter(Boolean) ?? [];
        expect(examples.length).toBeGreaterThanOrEqual(2);
        for (const example of examples) {
          // Examples that write files, read missing files or read secrets from the shell are shown, not run.
          if (/[>$]|--file|--url/.test(example)) continue;
          const args = words(example.replace(PLACEHOLDER, ids[`${collection} ${command}`])).slice(1);
          const r = await catalog(['--url', serve.url, ...args, ...(command === 'remove' && !args.includes('--dry-run') ? ['--yes'] : [])]);
          expect({ example, code: r.code, stderr: r.stderr }).toEqual({ example, code: command === 'remove' && r.code === 1 ? 1 : 0, stderr: expect.any(String) });
          if (r.code !== 0) expect(r.stderr).toMatch(/not found/);
        }
      });
    }
  }
});
