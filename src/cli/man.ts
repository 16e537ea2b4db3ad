import { FORMATS } from '../format/types.js';
import { COLLECTIONS } from '../schema/catalog.js';
import type { ArgumentNode, CommandNode, OptionNode } from './command-tree.js';
import { EXIT } from './errors.js';

// The man page, catalog.1 (man(7) macros), written at build time (scripts/make-man.mjs) from
// the command tree --help shows: every command with its usage, options, notes and examples.
// What --help does not say (the environment beyond the options' own "env X", the files) is
// written here; the exit codes come from the root help, and from EXIT for any it leaves out.

/** What the page says of the build that is not in the tree. */
export interface ManMeta {
  version: string;
  /** YYYY-MM-DD, for the page footer. */
  date: string;
  homepage?: string;
  bugs?: string;
}

/**
 * Text for roff: backslashes, minus signs, quotes and characters beyond ASCII escaped, so groff
 * and mandoc print it as written (a `-` or `'` copied from the page is still ASCII).
 * @example roff("--where 'a\\b'") // "\\-\\-where \\(aqa\\(rsb\\(aq"
 */
export function roff(text: string): string {
  let out = '';
  for (const ch of text) {
    if (ch === '\\') out += '\\(rs';
    else if (ch === '-') out += '\\-';
    else if (ch === "'") out += '\\(aq';
    else if (ch === '"') out += '\\(dq';
    else if (ch === '`') out += '\\(ga';
    else if (ch === '\t') out += ' ';
    else {
      const cp = ch.codePointAt(0)!;
      out += cp < 0x80 ? ch : `\\[u${cp.toString(16).toUpperCase().padStart(4, '0')}]`;
    }
  }
  return out;
}

/** A text line as roff reads it: one starting with a dot would be a request, so it gets `\&` first. */
const textLine = (s: string) => (s.startsWith('.') ? `\\&${s}` : s);
const bold = (s: string) => `\\fB${roff(s)}\\fR`;
const italic = (s: string) => `\\fI${roff(s)}\\fR`;

/**
 * A usage or option term in roff: flags bold, `<value>` italic, `[value]` italic in brackets.
 * @example term('-w, --where <expr>') // '\\fB\\-w\\fR, \\fB\\-\\-where\\fR \\fIexpr\\fR'
 */
export function term(text: string): string {
  return text
    .split(/(\s+|,)/)
    .map((tok) => {
      if (tok.startsWith('-')) return bold(tok);
      const m = /^([<[])(.*)[>\]]$/.exec(tok);
      if (!m) return roff(tok);
      return m[1] === '<' ? italic(m[2]) : `[${italic(m[2])}]`;
    })
    .join('');
}

/** A block of the text --help prints after the options: `Examples:` and its lines, or prose. */
export interface HelpBlock {
  /** `Examples`, `Exit codes`…; null for prose. */
  title: string | null;
  lines: string[];
}

/**
 * The blocks of an after-help text, split at blank lines; a block whose first line is only a
 * title (`Examples:`) has its indented lines, two spaces taken off.
 * @example helpBlocks('\nExamples:\n  catalog seed\n') // [{ title: 'Examples', lines: ['catalog seed'] }]
 */
export function helpBlocks(text: string): HelpBlock[] {
  return text
    .split(/\n[ \t]*\n/)
    .map((chunk) => chunk.replace(/^\n+|\s+$/g, ''))
    .filter(Boolean)
    .map((chunk) => {
      const lines = chunk.split('\n');
      const title = /^([A-Z][\w ]*):$/.exec(lines[0]);
      return title ? { title: title[1], lines: lines.slice(1).map((l) => l.replace(/^ {2}/, '')) } : { title: null, lines };
    });
}

/** Lines kept as they are (examples, lists), indented. */
const display = (lines: string[]): string[] => ['.RS 4', '.nf', ...lines.map((l) => textLine(roff(l))), '.fi', '.RE'];

/** One block in roff: a titled block as its title and a display; prose filled, with its indented lines displayed. */
function blockRoff(block: HelpBlock): string[] {
  if (block.title !== null) return ['.PP', `${roff(block.title)}:`, ...display(block.lines)];
  const out: string[] = ['.PP'];
  let indented: string[] = [];
  let prose: string[] = [];
  const flush = () => {
    if (prose.length) out.push(...(out.at(-1) === '.RE' ? ['.PP'] : []), textLine(roff(prose.join(' '))));
    if (indented.length) out.push(...display(indented));
    prose = [];
    indented = [];
  };
  for (const line of block.lines) {
    if (/^\s/.test(line)) indented.push(line.replace(/^ {2}/, ''));
    else {
      if (indented.length) flush();
      prose.push(line.trim());
    }
  }
  flush();
  return out;
}

/** A `.TP` list: each item's term, then its text. */
const tagged = (items: Array<[string, string]>): string[] => items.flatMap(([t, text]) => ['.TP', textLine(t), textLine(roff(text))]);

/** A command's options without `--help`, which every command has (said once, under OPTIONS). */
const ownOptions = (node: CommandNode): OptionNode[] => node.options.filter((o) => !o.names.includes('--help'));

/** The usage line: the command path bold (with its aliases, as --help writes them), then its arguments. */
function usageLine(node: CommandNode): string {
  const name = [node.path.join(' '), ...node.aliases].map((n) => bold(n)).join('|');
  return textLine(`${name} ${term(node.usage)}`.trim());
}

/** The arguments and options of a command, or, when another command of that name had the same, a pointer to it. */
function parameters(node: CommandNode, seen: Map<string, string>): string[] {
  const options = ownOptions(node);
  if (!options.length && !node.arguments.length) return [];
  const key = JSON.stringify([node.name, options, node.arguments]);
  const first = seen.get(key);
  if (first) return ['.PP', `Arguments and options as for ${bold(first)}.`];
  seen.set(key, node.path.join(' '));
  const args = (list: ArgumentNode[]) => tagged(list.map((a) => [italic(a.term), a.description]));
  return [
    ...(node.arguments.length ? ['.PP', 'Arguments:', ...args(node.arguments)] : []),
    ...(options.length ? ['.PP', 'Options:', ...tagged(options.map((o) => [term(o.flags), o.description]))] : []),
  ];
}

/** A command's subsection, then its subcommands'. */
function commandSection(node: CommandNode, seen: Map<string, string>): string[] {
  return [
    `.SS "${roff(node.path.join(' '))}"`,
    usageLine(node),
    '.PP',
    textLine(roff(node.description)),
    ...parameters(node, seen),
    ...helpBlocks(node.after).flatMap(blockRoff),
    ...node.subcommands.flatMap((c) => commandSection(c, seen)),
  ];
}

/** The root help's blocks that have a section of their own here (EXIT STATUS, ENVIRONMENT, EXAMPLES). */
const OWN_SECTIONS = new Set(['Exit codes', 'Environment', 'Examples']);

/** Exit codes the root help may leave out. */
const EXIT_FALLBACK: Partial<Record<number, string>> = {
  [EXIT.interrupted]: 'interrupted (Ctrl-C, SIGINT or SIGTERM) after leaving things resumable: an import keeps its checkpoint for --resume',
};

/**
 * The exit codes: each as the root help's `Exit codes:` block describes it (a code, then its text
 * over one or more lines), then any code of EXIT it leaves out.
 */
export function exitCodes(root: CommandNode): Array<[number, string]> {
  const block = helpBlocks(root.after).find((b) => b.title === 'Exit codes');
  const codes: Array<[number, string]> = [];
  for (const line of block?.lines ?? []) {
    const m = /^(\d+)\s+(.*)$/.exec(line);
    if (m) codes.push([Number(m[1]), m[2]]);
    else if (codes.length) codes[codes.length - 1][1] += ` ${line.trim()}`;
  }
  for (const code of Object.values(EXIT)) {
    if (!codes.some(([c]) => c === code)) codes.push([code, EXIT_FALLBACK[code] ?? 'see catalog --help']);
  }
  return codes.sort(([a], [b]) => a - b);
}

/** Variables no option's help names: [names, text]. */
const OTHER_VARIABLES: Array<[string[], string]> = [
  [['CATALOG_OUTPUT'], `The default of -o (--output): ${FORMATS.join(', ')}.`],
  [['CATALOG_DATA'], "The embedded catalog's directory (also the default of catalog serve --data); default $XDG_DATA_HOME/catalog."],
  [['CATALOG_KEEP_WARM'], 'Seconds a background holder keeps the embedded catalog open after the last command, so the next one starts at once (default 300; 0 starts none).'],
  [['CATALOG_PAGER', 'PAGER'], 'The pager long output goes through on a terminal (list --all): CATALOG_PAGER, else PAGER, else less -SR; cat or an empty value for none. LESS defaults to FRX.'],
  [
    ['HTTPS_PROXY', 'HTTP_PROXY', 'ALL_PROXY', 'NO_PROXY'],
    'The proxy a service is reached through, read as curl reads them: https_proxy for https URLs, http_proxy for http ones, then all_proxy, each in lowercase first, then uppercase. NO_PROXY lists host names (with their subdomains), IP addresses and CIDR ranges reached directly, or * for all. Loopback addresses are always reached directly; only http:// and https:// proxies are spoken.',
  ],
  [['NO_COLOR', 'FORCE_COLOR'], 'NO_COLOR (any value) turns colour off, as --no-color does; FORCE_COLOR turns it on where it would be off (0 or false: off).'],
  [['XDG_CONFIG_HOME', 'XDG_CACHE_HOME', 'XDG_DATA_HOME'], 'Where the files below live; a value that is not an absolute path is ignored.'],
];

/** Each `env NAME` an option's help names: [name, the options it is the default of]. */
function optionVariables(node: CommandNode, found = new Map<string, string[]>()): Map<string, string[]> {
  for (const o of node.options) {
    for (const [, name] of o.description.matchAll(/\benv (CATALOG_[A-Z_]+)/g)) {
      const rest = o.description.replace(` (env ${name})`, '').replace(`(env ${name}; `, '(').replace(`; env ${name}`, '');
      const where = [...node.path.slice(1), o.names.find((n) => n.startsWith('--')) ?? o.names[0]].join(' ');
      (found.get(name) ?? found.set(name, []).get(name)!).push(`The default of ${node.path.length > 1 ? 'catalog ' : ''}${where}: ${rest}.`);
    }
  }
  for (const c of node.subcommands) optionVariables(c, found);
  return found;
}

/** The ENVIRONMENT entries: the root's options' variables, the others above, then the commands' options'. */
export function environment(root: CommandNode): Array<[string[], string]> {
  const all = optionVariables(root);
  const rootNames = new Set(optionVariables({ ...root, subcommands: [] }).keys());
  const fromOptions = (names: string[]) => names.map((n): [string[], string] => [[n], all.get(n)!.join(' ')]);
  return [...fromOptions([...rootNames]), ...OTHER_VARIABLES, ...fromOptions([...all.keys()].filter((n) => !rootNames.has(n)))];
}

/** FILES: [path, text]. */
const FILES: Array<[string, string]> = [
  ['$XDG_CONFIG_HOME/catalog/config.yaml', 'Profiles (default ~/.config/catalog/config.yaml): named settings chosen with --profile or CATALOG_PROFILE, and default_profile. For example:'],
  ['$XDG_CACHE_HOME/catalog/', "Each service's root description, cached per URL (--refresh-schema reads it again), and which version warnings were shown (default ~/.cache/catalog)."],
  ['$CATALOG_DATA, else $XDG_DATA_HOME/catalog/', 'The embedded catalog (default ~/.local/share/catalog), with catalog-holder.log, the log of the background holder that keeps it open.'],
];

const PROFILE_EXAMPLE = ['profiles:', '  staging:', '    url: https://catalog.example.com', '    token: eyJ...', '    headers: { apikey: eyJ... }', 'default_profile: staging'];

/** NAME, SYNOPSIS, DESCRIPTION and the global OPTIONS. */
function head(root: CommandNode, collections: CommandNode[], others: CommandNode[]): string[] {
  const name = root.name;
  const rootBlocks = helpBlocks(root.after).filter((b) => b.title === null || !OWN_SECTIONS.has(b.title));
  const synopsis = (rest: string) => ['.br', `${bold(name)} [${italic('options')}] ${rest}`];
  return [
    '.SH NAME',
    `${name} \\- ${roff(root.description.charAt(0).toLowerCase() + root.description.slice(1))}`,
    '.SH SYNOPSIS',
    ...synopsis(`${italic('collection')} ${italic('command')} [${italic('options')}] [${italic('arguments')}]`).slice(1),
    ...others.flatMap((c) => synopsis(`${bold(c.name)} ${term(c.usage)}`)),
    '.br',
    `${bold(name)} ${bold('--help')} | ${bold('--version')}`,
    '.SH DESCRIPTION',
    textLine(roff(`${root.description}.`)),
    ...rootBlocks.flatMap(blockRoff),
    '.PP',
    `The collections are ${collections.map((c) => bold(c.name)).join(', ')}.`,
    '.PP',
    roff('Without --url, CATALOG_URL or a profile naming a service, commands work on the embedded catalog: a database in a directory of this machine (see FILES), which a background holder keeps open between commands. With one, they talk to that service over HTTP, as any PostgREST client does.'),
    '.PP',
    roff('Data goes to standard output, everything else (progress, counts, warnings, errors) to standard error. Output is a table on a terminal and JSON otherwise (see -o). Run without arguments, catalog prints a short guide.'),
    '.SH OPTIONS',
    roff('These global options apply to every command, before or after it. Every command also takes -h, --help, which prints its usage, options and examples.'),
    ...tagged(root.options.map((o) => [term(o.flags), o.description])),
  ];
}

/** EXIT STATUS, ENVIRONMENT, FILES, EXAMPLES, SEE ALSO, REPORTING BUGS. */
function tail(root: CommandNode, meta: ManMeta): string[] {
  const examples = helpBlocks(root.after).find((b) => b.title === 'Examples');
  return [
    '.SH EXIT STATUS',
    ...tagged(exitCodes(root).map(([code, text]) => [bold(String(code)), text.charAt(0).toUpperCase() + text.slice(1) + (text.endsWith('.') ? '' : '.')])),
    '.SH ENVIRONMENT',
    ...tagged(environment(root).map(([names, text]) => [names.map((n) => bold(n)).join(', '), text])),
    '.SH FILES',
    // the profile example stays in its item: .IP goes on at the item's indent
    ...FILES.flatMap(([path, text], i) => [...tagged([[italic(path), text]]), ...(i === 0 ? ['.IP', '.nf', ...PROFILE_EXAMPLE.map((l) => textLine(roff(l))), '.fi'] : [])]),
    ...(examples ? ['.SH EXAMPLES', ...display(examples.lines)] : []),
    '.SH SEE ALSO',
    `${bold(`${root.name} --help`)}, ${bold(`${root.name} `)}${italic('collection')} ${italic('command')} ${bold('--help')}, ${bold(`${root.name} completion`)} ${italic('shell')}, ${bold('less')}(1)`,
    ...(meta.homepage ? ['.PP', roff(`Longer guides (importing, checking, links, output, the service) are in the docs/ folder of the source repository, ${meta.homepage.replace(/#.*$/, '')}.`)] : []),
    ...(meta.bugs ? ['.SH REPORTING BUGS', roff(meta.bugs)] : []),
  ];
}

/**
 * The man page (section 1) of a program's command tree: NAME, SYNOPSIS, DESCRIPTION, the global
 * OPTIONS, a section per help group (COLLECTIONS, OTHER COMMANDS) with a subsection per command,
 * then EXIT STATUS, ENVIRONMENT, FILES, EXAMPLES and SEE ALSO.
 * @example manPage(commandTree(await buildProgram(ctx)), { version: '0.1.0', date: '2025-01-25' }).startsWith('.\\"') // true
 */
export function manPage(root: CommandNode, meta: ManMeta): string {
  const collections = root.subcommands.filter((c) => (COLLECTIONS as readonly string[]).includes(c.name));
  const others = root.subcommands.filter((c) => !collections.includes(c));
  const groups = [...new Set(root.subcommands.map((c) => c.group))];
  const seen = new Map<string, string>();
  const sections = groups.flatMap((g) => [
    `.SH ${roff((g.replace(/:$/, '') || 'Commands').toUpperCase())}`,
    ...root.subcommands.filter((c) => c.group === g).flatMap((c) => commandSection(c, seen)),
  ]);
  return `${[
    `.\\" ${root.name}.1, made by scripts/make-man.mjs from the command tree of ${root.name} ${meta.version}: change the commands, not this file.`,
    `.TH ${roff(root.name.toUpperCase())} 1 ${meta.date} "${roff(`${root.name} ${meta.version}`)}" "User Commands"`,
    '.nh',
    '.ad l',
    ...head(root, collections, others),
    ...sections,
    ...tail(root, meta),
  ].join('\n')}\n`;
}
