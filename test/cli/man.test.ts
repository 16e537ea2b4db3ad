import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { type CommandNode, commandTree } from '../../src/cli/command-tree.js';
import { EXIT } from '../../src/cli/errors.js';
import { buildProgram } from '../../src/cli/main.js';
import { helpBlocks, manPage, roff, term } from '../../src/cli/man.js';
import { tempDir } from '../support/stores.js';
import { runCli, testContext } from './support.js';

const SRC = resolve(import.meta.dirname, '../../src');
const has = (cmd: string) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;
const META = { version: '1.2.3', date: '2025-01-25', homepage: 'https://example.com/catalog#readme', bugs: 'https://example.com/catalog/issues' };

let tree: CommandNode;
let page: string;

/** Every command below the root, depth first. */
const commands = (n: CommandNode): CommandNode[] => n.subcommands.flatMap((c) => [c, ...commands(c)]);

/** The roff of one command's subsection: from its .SS to the next. */
function section(path: string[]): string {
  const start = page.indexOf(`.SS "${roff(path.join(' '))}"\n`);
  expect(start, path.join(' ')).toBeGreaterThan(0);
  const next = page.slice(start + 1).search(/^\.S[SH] /m);
  return page.slice(start, next < 0 ? undefined : start + 1 + next);
}

beforeAll(async () => {
  tree = commandTree(await buildProgram(testContext().ctx));
  page = manPage(tree, META);
});

describe('the man page', () => {
  it('has the sections a man page has, in order', () => {
    const sections = [...page.matchAll(/^\.SH (.*)$/gm)].map((m) => m[1]);
    expect(sections).toEqual(['NAME', 'SYNOPSIS', 'DESCRIPTION', 'OPTIONS', 'COLLECTIONS', 'OTHER COMMANDS', 'EXIT STATUS', 'ENVIRONMENT', 'FILES', 'EXAMPLES', 'SEE ALSO', 'REPORTING BUGS']);
    expect(page).toMatch(/^\.TH CATALOG 1 2025-01-25 "catalog 1\.2\.3" "User Commands"$/m);
    expect(page).toMatch(/^\.SH NAME\ncatalog \\- administer the music catalog/m);
  });

  it('has a subsection for every command and subcommand, as --help lists them', () => {
    const headings = [...page.matchAll(/^\.SS "(.*)"$/gm)].map((m) => m[1]);
    expect(headings).toEqual(commands(tree).map((c) => roff(c.path.join(' '))));
    // the tree is the whole program: every collection, its nine verbs, token create
    expect(headings).toContain('catalog tracks count');
    expect(headings).toContain('catalog token create');
    expect(headings.length).toBeGreaterThan(80);
  });

  it('gives each command its options (once per verb: the other collections point to the first)', () => {
    for (const c of commands(tree)) {
      const text = section(c.path);
      const own = c.options.filter((o) => !o.names.includes('--help'));
      if (own.length === 0) continue;
      if (text.includes('Arguments and options as for')) {
        const [, first] = /Arguments and options as for \\fB(.*)\\fR\./.exec(text)!;
        const same = commands(tree).find((o) => roff(o.path.join(' ')) === first)!;
        expect(same.name).toBe(c.name);
        expect([same.options, same.arguments], c.path.join(' ')).toEqual([c.options, c.arguments]);
      } else {
        for (const o of own) expect(text, `${c.path.join(' ')} ${o.flags}`).toContain(`.TP\n${term(o.flags)}\n${roff(o.description)}\n`);
      }
    }
    expect(section(['catalog', 'artists', 'import'])).toContain(term('--on-conflict <cols>'));
    expect(section(['catalog', 'releases', 'import'])).toContain('Arguments and options as for \\fBcatalog artists import\\fR.');
  });

  it("carries every example each command's --help prints", async () => {
    for (const c of commands(tree)) {
      const help = (await runCli([...c.path.slice(1), '--help'])).out;
      const examples = helpBlocks(help.slice(help.lastIndexOf('\nExamples:\n'))).find((b) => b.title === 'Examples')?.lines ?? [];
      if (c.subcommands.length === 0) expect(examples.length, c.path.join(' ')).toBeGreaterThan(0);
      for (const line of examples) expect(section(c.path), c.path.join(' ')).toContain(`\n${roff(line)}\n`);
    }
  });

  it('lists every exit code, 130 included, with what the root help says of them', () => {
    const exit = page.slice(page.indexOf('.SH EXIT STATUS'), page.indexOf('.SH ENVIRONMENT'));
    for (const code of Object.values(EXIT)) expect(exit).toContain(`.TP\n\\fB${code}\\fR\n`);
    expect(exit).toContain('Partial import: some rows were rejected.');
    expect(exit).toContain('Authentication or permission refused (HTTP 401/403).');
    expect(exit).toMatch(/\\fB130\\fR\nInterrupted/);
  });

  it('names every CATALOG_* variable the code reads, the proxies and the root help’s variables', () => {
    const env = page.slice(page.indexOf('.SH ENVIRONMENT'), page.indexOf('.SH FILES'));
    const sources = readdirSync(SRC, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
    const read = new Set(sources.flatMap((f) => [...readFileSync(join(SRC, f), 'utf8').matchAll(/\bCATALOG_[A-Z_]+\b/g)].map((m) => m[0])));
    read.delete('CATALOG_CLUSTER_WORKER'); // between a cluster's processes, not for people
    read.delete('CATALOG_WORKER_POOL'); // a worker's share of --db-pool, from its primary
    // the root help's Environment block: CATALOG_*, NO_COLOR, FORCE_COLOR, the XDG directories
    const rootEnv = helpBlocks(tree.after).find((b) => b.title === 'Environment')!.lines.join(' ');
    const fromHelp = [...rootEnv.matchAll(/\b[A-Z]+_[A-Z_]+\b/g)].map((m) => m[0]);
    expect(fromHelp).toContain('NO_COLOR');
    const proxies = ['HTTPS_PROXY', 'HTTP_PROXY', 'ALL_PROXY', 'NO_PROXY'];
    for (const name of new Set([...read, ...fromHelp, ...proxies, 'PAGER', 'XDG_CACHE_HOME'])) expect(env, name).toContain(`\\fB${roff(name)}\\fR`);
    expect(env).toContain('The default of catalog serve \\-\\-port: TCP port (0 picks a free one; default 3000).');
  });

  it('names the config file, the cache and the data directory', () => {
    const files = page.slice(page.indexOf('.SH FILES'), page.indexOf('.SH EXAMPLES'));
    expect(files).toContain('\\fI$XDG_CONFIG_HOME/catalog/config.yaml\\fR');
    expect(files).toContain('\\fI$XDG_CACHE_HOME/catalog/\\fR');
    expect(files).toContain('\\fI$CATALOG_DATA, else $XDG_DATA_HOME/catalog/\\fR');
  });

  it('is plain ASCII roff: minus signs, quotes and backslashes escaped, no text line a request', () => {
    expect(page).toMatch(/^[\x20-\x7e\n]*$/);
    for (const line of page.split('\n')) {
      if (line.startsWith('.\\"') || line.startsWith('.TH ')) continue; // a comment; the date's hyphens
      expect(line, line).not.toMatch(/(?<!\\)-/); // every minus sign is \-
      expect(line, line).not.toMatch(/\\(?![-&(f[])/); // only the escapes roff() and the fonts write: \- \& \(xx \fB \[uXXXX]
      expect(line, line).not.toMatch(/^'/);
      if (line.startsWith('.')) expect(line, line).toMatch(/^\.(TH|SH|SS|PP|TP|IP|RS|RE|nf|fi|nh|ad|br)( |$)/);
    }
  });
});

describe('roff escapes', () => {
  const node = (path: string[], extra: Partial<CommandNode> = {}): CommandNode => ({
    name: path.at(-1)!,
    aliases: [],
    path,
    usage: '',
    group: '',
    description: '',
    options: [],
    arguments: [],
    after: '',
    subcommands: [],
    ...extra,
  });

  it('escapes backslashes, hyphens, quotes and what is beyond ASCII', () => {
    expect(roff("--where 'a\\b' \"c\" `d`")).toBe('\\-\\-where \\(aqa\\(rsb\\(aq \\(dqc\\(dq \\(gad\\(ga');
    expect(roff('old → new, 日本')).toBe('old \\[u2192] new, \\[u65E5]\\[u672C]');
    expect(roff('🎵')).toBe('\\[u1F3B5]');
    expect(term('-w, --where <expr>')).toBe('\\fB\\-w\\fR, \\fB\\-\\-where\\fR \\fIexpr\\fR');
    expect(term('--check [level]')).toBe('\\fB\\-\\-check\\fR [\\fIlevel\\fR]');
  });

  it('keeps a text line that starts with a dot or a quote from being read as a request', () => {
    const sub = node(['tool', 'x'], { description: '.hidden is not a macro', group: 'Other commands:', after: "\nExamples:\n  .dotfile \\ back\n  'quoted' --flag\n" });
    const text = manPage(node(['tool'], { description: 'A tool', subcommands: [sub] }), { version: '1', date: '2025-01-01' });
    expect(text).toContain('\n\\&.hidden is not a macro\n');
    expect(text).toContain('\n\\&.dotfile \\(rs back\n');
    expect(text).toContain("\n\\(aqquoted\\(aq \\-\\-flag\n");
    expect(text).toContain('.SH OTHER COMMANDS\n.SS "tool x"\n');
  });

  it('reads the after-help blocks: a title with its lines, prose with its indented lines', () => {
    expect(helpBlocks('\nNote one\nstill one:\n  catalog seed\n\nExamples:\n  catalog a\n  catalog b   # c\n')).toEqual([
      { title: null, lines: ['Note one', 'still one:', '  catalog seed'] },
      { title: 'Examples', lines: ['catalog a', 'catalog b   # c'] },
    ]);
  });
});

describe.skipIf(!has('groff'))('groff', () => {
  it('formats the page without a warning (groff -man -ww)', () => {
    const file = join(tempDir('man-'), 'catalog.1');
    writeFileSync(file, page);
    const r = spawnSync('groff', ['-man', '-Tutf8', '-ww', file], { encoding: 'utf8' });
    expect(r.status).toBe(0);
    expect(r.stderr).toBe('');
    const plain = r.stdout.replace(/.\x08/g, '');
    expect(plain).toContain('catalog - administer the music catalog');
    expect(plain).toContain("catalog artists list --where 'stage_name~*blue*' --order stage_name --limit 20");
    expect(plain).toMatch(/^EXIT STATUS$/m);
  });
});

if (!has('groff')) console.warn('[catalog] groff not installed: formatting the man page with -ww is SKIPPED (its roff is checked as text).');
