import { UUID_TEXT } from './codecs.js';
/**
 * The link fields: one documented shape each (docs/links.md).
 *
 * - `releases.tracks`: an array of `{"id": track id, "position": n, "disc": n?}`, kept sorted by
 *   disc and position; (disc, position) is unique within a release.
 * - `tracks.primary_artists` … `engineer_artists`: arrays of `{"id"?: artist id, "name": text,
 *   "role"?: text, "share"?: 0–100}`; with an id, the name is the artist's stage name, written by
 *   the database and rewritten when the artist is renamed.
 * - `artists.tracks`: not a link. An artist's tracks are derived from the credits (the
 *   `tracks(artists)` relationship); the column is left as it is and nothing reads it.
 *
 * The database enforces these on write (migration 5, migrations/0005-link-checks.sql); this module states the same
 * rules for `catalog check`, which reports values written before the rules existed.
 */

/** The fields of tracks that hold lists of credited artists, in role order. */
export const CREDIT_FIELDS: readonly string[] = ['primary_artists', 'featuring_artists', 'remix_artists', 'writer_artists', 'performer_artists', 'engineer_artists'];

/** The keys an element of each kind of link may have. */
export const LINK_KEYS = { tracks: ['id', 'position', 'disc'], credits: ['id', 'name', 'role', 'share'] } as const;

/**
 * The link fields' column comments (what PostgREST's root description shows as their description,
 * and `describe` prints): table → column → text.
 */
export const LINK_COMMENTS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  releases: { tracks: 'Link to tracks: [{"id": track id, "position": n, "disc": n?}], kept in disc and position order, embed with tracks(...). Keys accepted on write: track ids or ISRCs, as an array or one string separated by semicolons.' },
  tracks: Object.fromEntries(
    CREDIT_FIELDS.map((f) => [f, 'Credits: [{"id": artist id?, "name": text, "role"?: text, "share"?: 0-100}], with an id the name is the artist\'s stage name, kept current, embed with artists(...). Keys accepted on write: artist ids or stage names.']),
  ),
  artists: { tracks: 'Not a link: an artist\'s tracks are derived from the tracks\' credits, embed with tracks(...).' },
};

/** A computed relationship: the embed `to` on `from`, as the SQL function `to(from)`. */
export interface ComputedRelationship {
  from: string;
  to: string;
  /** What the link is, for `describe` and the OpenAPI document. */
  via: string;
}

/** The four computed relationships migration 4 defines. */
export const COMPUTED_RELATIONSHIPS: readonly ComputedRelationship[] = [
  { from: 'releases', to: 'tracks', via: 'releases.tracks, in disc and position order' },
  { from: 'tracks', to: 'releases', via: 'releases.tracks (the releases a track is on)' },
  { from: 'tracks', to: 'artists', via: 'tracks.*_artists ids, primary first' },
  { from: 'artists', to: 'tracks', via: 'tracks.*_artists ids (every role)' },
];

/** One element of a link field that does not fit its shape. */
export interface LinkProblem {
  /** `tracks[2].position`, `primary_artists[0].id`, or the field alone. */
  path: string;
  reason: string;
  /** `position`: a repeated disc/position (its own check rule); else the element's shape. */
  kind: 'shape' | 'position';
}

const typeOf = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v === 'object' ? 'object' : typeof v === 'number' ? 'number' : typeof v === 'boolean' ? 'boolean' : 'string');
const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= 2147483647;
const given = (v: unknown): boolean => v !== undefined && v !== null;

/** The first key of an element outside `allowed` (in code-point order, as the database picks it). */
function unknownKey(el: Record<string, unknown>, allowed: readonly string[]): string | undefined {
  return Object.keys(el)
    .filter((k) => !allowed.includes(k))
    .sort()[0];
}

/** Whether a value is an array, or the problem with it (null and absent are fine: no links). */
function arrayProblem(field: string, value: unknown): LinkProblem[] | null {
  if (!given(value)) return [];
  return Array.isArray(value) ? null : [{ path: field, reason: `must be an array, not ${typeOf(value)}`, kind: 'shape' }];
}

/**
 * What does not fit the shape of `releases.tracks`, one problem per element at most.
 * @example releaseTrackProblems([{ id: 'x', position: 1 }]) // [{ path: 'tracks[0].id', reason: 'must be a track id (a uuid)', kind: 'shape' }]
 */
export function releaseTrackProblems(value: unknown): LinkProblem[] {
  const early = arrayProblem('tracks', value);
  if (early) return early;
  const out: LinkProblem[] = [];
  const seen = new Map<string, number>();
  (value as unknown[]).forEach((el, i) => {
    const at = `tracks[${i}]`;
    if (typeOf(el) !== 'object') return void out.push({ path: at, reason: `must be an object, not ${typeOf(el)}`, kind: 'shape' });
    const o = el as Record<string, unknown>;
    const k = unknownKey(o, LINK_KEYS.tracks);
    if (k !== undefined) return void out.push({ path: at, reason: `unknown key "${k}" (a track link has ${LINK_KEYS.tracks.join(', ')})`, kind: 'shape' });
    if (typeof o.id !== 'string' || !UUID_TEXT.test(o.id)) return void out.push({ path: `${at}.id`, reason: 'must be a track id (a uuid)', kind: 'shape' });
    if (!isCount(o.position)) return void out.push({ path: `${at}.position`, reason: 'must be a whole number from 1', kind: 'shape' });
    if (given(o.disc) && !isCount(o.disc)) return void out.push({ path: `${at}.disc`, reason: 'must be a whole number from 1', kind: 'shape' });
    const disc = given(o.disc) ? (o.disc as number) : 1;
    const slot = `${disc}/${o.position}`;
    const first = seen.get(slot);
    if (first !== undefined) return void out.push({ path: `${at}.position`, reason: `repeats position ${o.position} of disc ${disc} (tracks[${first}])`, kind: 'position' });
    seen.set(slot, i);
  });
  return out;
}

/**
 * What does not fit the shape of a credits list (`primary_artists`, …), one problem per element at most.
 * @example creditProblems('writer_artists', [{ share: 50 }]) // [{ path: 'writer_artists[0]', reason: 'needs a "name" (or the "id" of an artist in the catalog)', kind: 'shape' }]
 */
export function creditProblems(field: string, value: unknown): LinkProblem[] {
  const early = arrayProblem(field, value);
  if (early) return early;
  const out: LinkProblem[] = [];
  (value as unknown[]).forEach((el, i) => {
    const p = creditElementProblem(`${field}[${i}]`, el);
    if (p) out.push(p);
  });
  return out;
}

function creditElementProblem(at: string, el: unknown): LinkProblem | null {
  if (typeOf(el) !== 'object') return { path: at, reason: `must be an object, not ${typeOf(el)}`, kind: 'shape' };
  const o = el as Record<string, unknown>;
  const k = unknownKey(o, LINK_KEYS.credits);
  if (k !== undefined) return { path: at, reason: `unknown key "${k}" (a credit has ${LINK_KEYS.credits.join(', ')})`, kind: 'shape' };
  if (given(o.name) && typeof o.name !== 'string') return { path: `${at}.name`, reason: `must be text, not ${typeOf(o.name)}`, kind: 'shape' };
  if (given(o.id)) {
    if (typeof o.id !== 'string' || !UUID_TEXT.test(o.id)) return { path: `${at}.id`, reason: 'must be an artist id (a uuid)', kind: 'shape' };
  } else if (typeof o.name !== 'string' || o.name.trim() === '') {
    return { path: at, reason: 'needs a "name" (or the "id" of an artist in the catalog)', kind: 'shape' };
  }
  if (given(o.role) && typeof o.role !== 'string') return { path: `${at}.role`, reason: `must be text, not ${typeOf(o.role)}`, kind: 'shape' };
  if (given(o.share) && (typeof o.share !== 'number' || o.share < 0 || o.share > 100)) return { path: `${at}.share`, reason: 'must be a number from 0 to 100', kind: 'shape' };
  return null;
}

/**
 * A link value as the database reads it (catalog_key_list): a string is its `;`-separated keys,
 * trimmed, empty ones dropped; any other value as it is.
 * @example keyList(' US1; ;US2') // ['US1', 'US2']
 */
export function keyList(value: unknown): unknown {
  return typeof value === 'string' ? value.split(';').map((k) => k.trim()).filter((k) => k !== '') : value;
}

/** The ids a link field names (elements whose id is a uuid), lower-cased, in order. */
export function linkIds(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  const out: string[] = [];
  for (const el of value) {
    const id = el && typeof el === 'object' ? (el as Record<string, unknown>).id : undefined;
    if (typeof id === 'string' && UUID_TEXT.test(id)) out.push(id.toLowerCase());
  }
  return out;
}
