import { Command } from 'commander';
import { ServiceError } from '../../client/errors.js';
import { relativeTime } from '../../format/relative-time.js';
import { startSpinner } from '../../io/spinner.js';
import type { Style } from '../../io/style.js';
import { INTERFACE_VERSION } from '../../schema/catalog.js';
import { CHANGELOG, type InterfaceVersion } from '../../schema/changelog.js';
import type { Context } from '../context.js';
import { addFlags, type FlagRow, type FlagsOf } from './flag-table.js';
import { examples } from './shared.js';

/** Every flag of `catalog changelog`, one row each: its commander chain and ChangelogOptions come from it. */
export const CHANGELOG_FLAGS = [
  { flag: 'builtin', help: 'show the changelog built into this tool instead of asking the service' },
] as const satisfies readonly FlagRow[];

/** The flags of `catalog changelog`, as commander parses them (`builtin`: show the built-in changelog without asking the service). */
export type ChangelogOptions = FlagsOf<typeof CHANGELOG_FLAGS>;

/** `catalog changelog`. */
export function defineChangelog(ctx: Context): Command {
  const cmd = addFlags(new Command('changelog').description("Show what changed in each version of the service's interface (its Atom feed), breaking changes marked"), CHANGELOG_FLAGS).action(async (opts: ChangelogOptions) => runChangelog(opts, ctx));
  return examples(cmd, ['catalog changelog', 'catalog changelog -o json', 'catalog --url https://catalog.example.com changelog']);
}

/** Where the versions shown came from. */
export type ChangelogSource = { kind: 'service'; url: string } | { kind: 'builtin'; reason: string };

/** Fetches the feed (GET / with Accept: application/atom+xml) and prints it; the built-in changelog when there is no feed to read. */
export async function runChangelog(opts: ChangelogOptions, ctx: Context): Promise<void> {
  const config = await ctx.config();
  let versions: InterfaceVersion[] = [...CHANGELOG];
  let source: ChangelogSource;
  if (opts.builtin) source = { kind: 'builtin', reason: 'as asked (--builtin)' };
  else if (!config.url) source = { kind: 'builtin', reason: 'the embedded catalog implements this version' };
  else {
    const url = config.url.value;
    const spinner = startSpinner(ctx.io.stderr, `Reading the changelog of ${url}`);
    let fetched: { versions: InterfaceVersion[] } | { reason: string } | null;
    try {
      fetched = await fetchFeed(ctx);
    } finally {
      spinner.stop();
    }
    if (fetched === null) return; // --dry-run: the request was printed
    if ('versions' in fetched) {
      versions = fetched.versions;
      source = { kind: 'service', url };
    } else {
      source = { kind: 'builtin', reason: `the service at ${url} ${fetched.reason}` };
    }
  }
  await printChangelog(ctx, versions, source);
}

/** The service's feed as versions; a reason when it has none to give. Connection failures are errors. */
async function fetchFeed(ctx: Context): Promise<{ versions: InterfaceVersion[] } | { reason: string } | null> {
  let body: string;
  let type: string;
  try {
    const res = await ctx.send({ method: 'GET', path: '/', headers: { accept: 'application/atom+xml' } });
    if (!res) return null;
    body = res.body;
    type = res.headers['content-type'] ?? '';
  } catch (err) {
    if (err instanceof ServiceError) return { reason: `does not serve the changelog feed (HTTP ${err.status}${err.code ? ` ${err.code}` : ''})` };
    throw err;
  }
  if (!/atom|xml/i.test(type)) return { reason: `answered ${type.split(';')[0] || 'without a content type'} instead of an Atom feed` };
  try {
    return { versions: parseChangelogAtom(body) };
  } catch (err) {
    return { reason: `sent a feed this tool cannot read (${(err as Error).message})` };
  }
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/**
 * XML character data as text: tags dropped, entities and CDATA resolved, blanks collapsed.
 * @example xmlText('a &amp; <b>b</b>') // 'a & b'
 */
export function xmlText(xml: string): string {
  return xml
    .replace(/<!\[CDATA\[([\s\S]*?)\]\]>/g, (_, c: string) => c.replace(/&/g, '&amp;').replace(/</g, '&lt;'))
    .replace(/<[^>]*>/g, ' ')
    .replace(/&(#x[0-9a-f]+|#\d+|\w+);/gi, (m, e: string) => {
      if (e[0] === '#') return String.fromCodePoint(e[1].toLowerCase() === 'x' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10));
      return ENTITIES[e] ?? m;
    })
    .replace(/\s+/g, ' ')
    .trim();
}

const element = (xml: string, name: string): string | null => {
  const m = new RegExp(`<${name}\\b[^>]*?(?:/>|>([\\s\\S]*?)</${name}>)`).exec(xml);
  return m ? m[1] ?? '' : null;
};

/**
 * Reads the interface changelog feed (Atom 1.0): one entry per version, each change a list item
 * `[breaking] change (applies to)` or `[non-breaking] …`. Throws when the text is not an Atom feed.
 * @example parseChangelogAtom(changelogAtom('http://x'))[0].version // '12.2.3'
 */
export function parseChangelogAtom(xml: string): InterfaceVersion[] {
  if (!/<feed\b[^>]*xmlns\s*=\s*["']http:\/\/www\.w3\.org\/2005\/Atom["']/.test(xml)) throw new Error('not an Atom feed');
  const entries = [...xml.matchAll(/<entry\b[^>]*>([\s\S]*?)<\/entry>/g)].map((m) => m[1]);
  return entries.map((e) => {
    const title = xmlText(element(e, 'title') ?? '');
    const term = /<category\b[^>]*term\s*=\s*["']version:([^"']+)["']/.exec(e)?.[1];
    const version = term ?? title.split(' ').pop() ?? title;
    const date = xmlText(element(e, 'updated') ?? element(e, 'published') ?? '').slice(0, 10);
    const summary = xmlText(element(e, 'summary') ?? '');
    const items = [...(element(e, 'content') ?? '').matchAll(/<li\b[^>]*>([\s\S]*?)<\/li>/g)].map((m) => xmlText(m[1]));
    const changes = items.map((text) => {
      const mark = /^\[(breaking|non-breaking)\]\s*/i.exec(text);
      const rest = mark ? text.slice(mark[0].length) : text;
      const applies = /^(.*\S)\s+\(([^()]*)\)$/.exec(rest);
      return { change: applies ? applies[1] : rest, appliesTo: applies ? applies[2] : '', breaking: mark?.[1].toLowerCase() === 'breaking' };
    });
    return { version, date, summary, changes };
  });
}

/** The versions for people (text on stdout), or as data in the chosen -o format. */
async function printChangelog(ctx: Context, versions: InterfaceVersion[], source: ChangelogSource): Promise<void> {
  // Loaded when the command runs: defining it (for `catalog --help`) must stay cheap.
  const { outputFormat, writeRows } = await import('../output.js');
  const format = await outputFormat(ctx);
  const s = ctx.style();
  if (source.kind === 'builtin') {
    await ctx.note(s.dim(`Showing the changelog built into this tool (interface ${INTERFACE_VERSION}): ${source.reason}.`));
  }
  if (format === 'json' || format === 'yaml') {
    await writeRows(ctx, versions as unknown as Array<Record<string, unknown>>, { format });
  } else if (format === 'table') {
    await ctx.io.stdout.write(renderChangelog(versions, ctx.style('stdout'), ctx.io.stdout.isTTY ? ctx.clock.now() : null));
  } else {
    const rows = versions.flatMap((v) => v.changes.map((c) => ({ version: v.version, date: v.date, breaking: c.breaking, change: c.change, applies_to: c.appliesTo })));
    await writeRows(ctx, rows, { format });
  }
  const newest = versions[0]?.version;
  if (source.kind === 'service' && newest && newest !== INTERFACE_VERSION) {
    await ctx.warn(`the service's newest interface version is ${newest}; this tool was built for ${INTERFACE_VERSION}`);
  }
}

/**
 * The changelog as text: a heading per version (its date, relative too when `now` is given, i.e.
 * on a terminal), the summary, then each change marked BREAKING or non-breaking with what it applies to.
 */
export function renderChangelog(versions: readonly InterfaceVersion[], s: Style, now: number | null): string {
  const out: string[] = [];
  for (const v of versions) {
    const breaking = v.changes.filter((c) => c.breaking).length;
    const when = v.date ? `${v.date}${now !== null ? ` (${relativeTime(`${v.date}T00:00:00Z`, now)})` : ''}` : 'undated';
    out.push(`${s.bold(`Interface ${v.version}`)}  ${s.dim(when)}${breaking ? `  ${s.red(`${breaking} breaking`)}` : ''}`);
    if (v.summary) out.push(`  ${v.summary}`);
    for (const c of v.changes) {
      out.push(`  ${c.breaking ? s.red(s.bold('BREAKING    ')) : s.green('non-breaking')}  ${c.change}`);
      if (c.appliesTo) out.push(`                ${s.dim(`applies to: ${c.appliesTo}`)}`);
    }
    out.push('');
  }
  if (versions.length === 0) out.push('The changelog has no entries.', '');
  return out.join('\n');
}
