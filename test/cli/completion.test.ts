import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { posixFunctions, completionSpec } from '../../src/cli/commands/completion.js';
import { buildProgram } from '../../src/cli/main.js';
import { TABLES } from '../../src/schema/catalog.js';
import { tempDir } from '../support/stores.js';
import { runCli, testContext } from './support.js';

const has = (cmd: string) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;
const dir = tempDir('completion-');
const scripts: Record<string, string> = {};

beforeAll(async () => {
  for (const shell of ['bash', 'zsh', 'fish']) {
    const r = await runCli(['completion', shell]);
    expect(r.code).toBe(0);
    expect(r.err).toBe('');
    scripts[shell] = join(dir, `catalog.${shell}`);
    writeFileSync(scripts[shell], r.out);
  }
});

/** Calls the bash completion function as bash would: COMP_WORDS/COMP_CWORD set, COMPREPLY read back. */
function bashComplete(words: string[], line?: string): string[] {
  const setup = line === undefined ? 'unset COMP_LINE' : 'COMP_LINE=$LINE; COMP_POINT=${#LINE}';
  const out = execFileSync('bash', ['-c', `source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((\${#COMP_WORDS[@]} - 1)); ${setup}; _catalog; printf '%s\\n' "\${COMPREPLY[@]}"`, '_', scripts.bash, ...words], {
    encoding: 'utf8',
    env: { ...process.env, LINE: line ?? '' },
  });
  return out.split('\n').filter(Boolean);
}

describe('catalog completion bash', () => {
  it('loads in bash and registers the completion function', () => {
    const out = execFileSync('bash', ['-c', 'source "$1" && complete -p catalog', '_', scripts.bash], { encoding: 'utf8' });
    expect(out.trim()).toBe('complete -F _catalog catalog');
  });

  it('completes collections and other commands', () => {
    expect(bashComplete(['catalog', 'art'])).toEqual(['artists']);
    const all = bashComplete(['catalog', '']);
    for (const t of TABLES) expect(all).toContain(t.name);
    expect(all).toEqual(expect.arrayContaining(['schema', 'serve', 'changelog', 'completion', 'token']));
    expect(all).not.toContain('users');
  });

  it('completes verbs after a collection, also behind global flags', () => {
    expect(bashComplete(['catalog', 'releases', ''])).toEqual(['list', 'get', 'add', 'update', 'remove', 'describe', 'import', 'export', 'count']); // count: issue 17
    expect(bashComplete(['catalog', '--url', 'http://x', '-o', 'json', 'labels', 'up'])).toEqual(['update']);
  });

  it('completes flags of the verb and the global flags', () => {
    expect(bashComplete(['catalog', 'artists', 'list', '--wh'])).toEqual(['--where']);
    expect(bashComplete(['catalog', 'artists', 'add', '--inter'])).toEqual(['--interactive']);
    expect(bashComplete(['catalog', 'artists', 'list', '--ur'])).toEqual(['--url']);
    expect(bashComplete(['catalog', '-o', 'ya'])).toEqual(['yaml']);
    expect(bashComplete(['catalog', 'token', 'create', '--role', ''])).toEqual(['reader', 'editor', 'admin']);
  });

  it('completes field names for --where, --select, --order and FIELD=VALUE', () => {
    expect(bashComplete(['catalog', 'artists', 'list', '--where', 'stage'])).toEqual(['stage_name']);
    expect(bashComplete(['catalog', 'releases', 'list', '--select', 'id,release_t'])).toEqual(['id,release_title']);
    expect(bashComplete(['catalog', 'releases', 'list', '--select', 'lab'])).toEqual(['label', 'label_id', 'labels']);
    expect(bashComplete(['catalog', 'releases', 'export', '--order', 'release_d'])).toEqual(['release_date']);
    expect(bashComplete(['catalog', 'artists', 'add', 'is_s'])).toEqual(['is_signed=']);
    expect(bashComplete(['catalog', 'artists', 'update', 'x', 'is_signed=f'])).toEqual(['is_signed=false']);
    // created/updated are the service's to set
    expect(bashComplete(['catalog', 'labels', 'add', ''])).toEqual(['id=', 'name=']);
  });

  it('reads the line as typed, so URLs and --flag=value keep their : and =', () => {
    // What bash puts in COMP_WORDS for these lines (it breaks words at : and =).
    expect(bashComplete(['catalog', '--url', 'http', ':', '//localhost', ':', '3000', 'lab'], 'catalog --url http://localhost:3000 lab')).toEqual(['labels']);
    expect(bashComplete(['catalog', 'artists', 'list', '--where', '=', 'stage'], 'catalog artists list --where=stage')).toEqual(['stage_name']);
  });
});

describe('the shared candidates function', () => {
  it('runs in plain sh (which the fish script calls) with the same answers', async () => {
    const { ctx } = testContext();
    const sh = `${posixFunctions(completionSpec(await buildProgram(ctx)))}\n_catalog_candidates "$@"\n`;
    const candidates = (...words: string[]) => execFileSync('sh', ['-c', sh, 'catalog', String(words.length - 1), ...words], { encoding: 'utf8' }).split('\n').filter(Boolean);
    expect(candidates('catalog', 'artists', 'li')).toEqual(['words', 'list']);
    expect(candidates('catalog', 'artists', 'add', 'stage')).toEqual(['nospace', 'stage_name=']);
    expect(candidates('catalog', 'tracks', 'list', '--order=track_t')).toEqual(['nospace', '--order=track_title']);
    expect(candidates('catalog', 'tracks', 'import', '')).toEqual(['files']);
    expect(candidates('catalog', 'completion', '')).toEqual(['words', 'bash', 'zsh', 'fish', 'powershell']);
    // a verb's alias has the verb's flags
    expect(candidates('catalog', 'artists', 'ls', '--wh')).toEqual(['words', '--where']);
  });

  it('the fish script carries that function intact', () => {
    const text = execFileSync('cat', [scripts.fish], { encoding: 'utf8' });
    const m = /^set -g __catalog_completion_sh '([\s\S]*?)'\nfunction/m.exec(text);
    expect(m).not.toBeNull();
    const unquoted = m![1].replace(/\\(['\\])/g, '$1');
    expect(unquoted).toContain('_catalog_candidates() {');
    expect(spawnSync('sh', ['-n', '-c', unquoted]).status).toBe(0);
  });

  it.skipIf(!has('zsh'))('loads in zsh', () => {
    const r = spawnSync('zsh', ['-c', 'autoload -U compinit && compinit -u; source "$1"; print -r -- $_comps[catalog]', '_', scripts.zsh], { encoding: 'utf8' });
    expect(r.stdout.trim()).toBe('_catalog');
  });

  it.skipIf(!has('fish'))('loads in fish', () => {
    const r = spawnSync('fish', ['-c', `source ${scripts.fish}; complete -C 'catalog art'`], { encoding: 'utf8' });
    expect(r.stdout).toContain('artists');
  });

  if (!has('zsh') || !has('fish')) {
    console.warn(`[catalog] ${['zsh', 'fish'].filter((s) => !has(s)).join(' and ')} not installed: loading those completion scripts is SKIPPED (their shared sh logic is tested).`);
  }
});

describe('catalog completion, the command', () => {
  it('refuses an unknown shell with exit 2', async () => {
    const r = await runCli(['completion', 'tcsh']);
    expect(r.code).toBe(2);
    expect(r.err).toContain("no completion for 'tcsh'");
    expect(r.err).toContain('bash, zsh, fish, powershell');
  });

  const bin = join(process.cwd(), 'bin', 'catalog.js');
  const built = existsSync(join(process.cwd(), 'dist', 'cli', 'main.js'));
  it.skipIf(!built)('works as documented: bash -c \'source <(catalog completion bash); complete -p catalog\'', () => {
    const out = execFileSync('bash', ['-c', `source <(node "${bin}" completion bash); complete -p catalog`], { encoding: 'utf8' });
    expect(out).toContain('complete -F _catalog catalog');
  });
});
