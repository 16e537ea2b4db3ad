import { compileQuery } from '../../grammar/compile.js';
import type { Query } from '../../grammar/types.js';
import { CREDIT_FIELDS } from '../../schema/links.js';
import type { Context } from '../context.js';
import type { Asker, Choice } from './asker.js';
import { LOOKUP_LIMIT, nameFieldOf, referenceFinder } from './lookup.js';

/**
 * Interactive entry of a link field (docs/links.md): a release's tracks picked by title or ISRC,
 * a track's credits picked by artist name, one at a time from a searchable list, in order.
 */

/** Which link field a collection's field is: `tracks` (a release's), `artists` (a credits list), or none. */
export function linkFieldKind(collection: string, field: string): 'tracks' | 'artists' | null {
  if (collection === 'releases' && field === 'tracks') return 'tracks';
  if (collection === 'tracks' && CREDIT_FIELDS.includes(field)) return 'artists';
  return null;
}

type Link = Record<string, unknown>;

const DONE = '\u0000done';
const CLEAR = '\u0000clear';

/** One pickable row: its id and how the list shows it. */
interface Pick {
  id: string;
  label: string;
  name: string;
}

/** The ISRC search: codes starting with what was typed, separators and case aside; `title` the tracks' title field. */
function isrcQuery(term: string, title: string): string | null {
  const key = term.replace(/[\s._-]/g, '').toUpperCase();
  if (!/^[A-Z]{2}[A-Z0-9]{0,10}$/.test(key) || key.length < 3) return null;
  const q: Query = {
    select: ['id', title, 'isrc_code'].map((n) => ({ type: 'field' as const, field: { name: n, jsonPath: [] } })),
    where: [{ path: [], condition: { kind: 'filter', field: { name: 'isrc_code', jsonPath: [] }, negated: false, op: 'like', value: `${key}*` } }],
    order: [{ path: [], terms: [{ field: { name: 'isrc_code', jsonPath: [] } }] }],
    page: [{ path: [], limit: LOOKUP_LIMIT }],
  };
  return compileQuery(q);
}

/** Finds tracks by title or ISRC, or artists by stage name. */
async function finderFor(ctx: Context, kind: 'tracks' | 'artists') {
  const table = await ctx.table(kind);
  const byName = referenceFinder(ctx, table);
  const title = nameFieldOf(table);
  return async (term: string | undefined, signal?: AbortSignal): Promise<Pick[]> => {
    const named = (await byName.search(term, signal)).map((r) => ({ id: r.id, label: r.name, name: r.full ?? r.name }));
    const q = kind === 'tracks' && term ? isrcQuery(term, title) : null;
    if (!q) return named;
    const { client } = await ctx.endpoint();
    const res = await client.request({ method: 'GET', path: '/tracks', query: q, headers: { accept: 'application/json' } });
    const coded = (JSON.parse(res.body || '[]') as Array<Record<string, unknown>>).map((r) => ({ id: String(r.id), label: `${String(r.isrc_code)} · ${String(r[title] ?? '')}`, name: String(r[title] ?? '') }));
    const seen = new Set(coded.map((p) => p.id));
    return [...coded, ...named.filter((p) => !seen.has(p.id))];
  };
}

/** What a link list looks like on one line: `1. Title · 2. Title` or `Name, Name`. */
function describeLinks(kind: 'tracks' | 'artists', links: Link[], names: Map<string, string>): string {
  if (links.length === 0) return '(none)';
  const nameOf = (l: Link) => (typeof l.id === 'string' ? names.get(l.id) : undefined) ?? (typeof l.name === 'string' ? l.name : String(l.id ?? '?'));
  return kind === 'tracks' ? links.map((l) => `${String(l.position)}. ${nameOf(l)}`).join(' · ') : links.map(nameOf).join(', ');
}

/**
 * Asks for a link field: shows the list so far, then offers a search (by title or ISRC, or by
 * stage name) to add one more, until "done". Returns the new value and its one-line summary, or
 * undefined when nothing changed.
 */
export async function askLinks(ask: Asker, ctx: Context, kind: 'tracks' | 'artists', message: string, start: unknown): Promise<{ value: Link[] | null; shown: string } | undefined> {
  const s = ctx.style();
  const find = await finderFor(ctx, kind);
  let links: Link[] = Array.isArray(start) ? (start as Link[]).map((l) => ({ ...l })) : [];
  const names = new Map<string, string>();
  const first = await find(undefined);
  const what = kind === 'tracks' ? 'track (type a title or an ISRC)' : 'artist (type a name)';
  let changed = false;
  for (;;) {
    const fixed: Choice<string>[] = [
      { value: DONE, name: s.dim(`(done: ${describeLinks(kind, links, names)})`), description: 'keep this list' },
      ...(links.length ? [{ value: CLEAR, name: s.dim('(clear the list)'), description: 'start again from an empty list' }] : []),
    ];
    const toChoice = (p: Pick): Choice<string> => ({ value: p.id, name: p.label, description: p.id });
    let found: Pick[] = first;
    const picked = await ask.search<string>({
      message: `${message} ${s.dim(`· add a ${what}`)}`,
      pageSize: 10,
      source: async (term, signal) => {
        // what was searched for leads (Enter picks the best match); without a search, "done" does
        if (!term) return [...fixed, ...(found = first).map(toChoice)];
        found = await find(term, signal);
        return [...found.map(toChoice), ...fixed];
      },
    });
    if (picked === DONE) break;
    changed = true;
    if (picked === CLEAR) {
      links = [];
      continue;
    }
    const p = found.find((x) => x.id === picked) ?? first.find((x) => x.id === picked);
    if (p) names.set(p.id, p.name);
    if (kind === 'tracks') {
      const next = links.reduce((m, l) => Math.max(m, typeof l.position === 'number' ? l.position : 0), 0) + 1;
      links.push({ id: picked, position: next });
    } else links.push({ id: picked, name: p?.name ?? '' });
  }
  if (!changed) return undefined;
  return { value: links.length ? links : null, shown: describeLinks(kind, links, names) };
}
