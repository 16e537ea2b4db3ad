/**
 * Data-quality rules for `catalog check` and `import --check`: what each rule looks at, why it
 * matters, and the per-row tests. Rules that compare rows with each other (duplicates, references,
 * consistency) declare their keys here; src/check/check.ts reads the catalog and applies them.
 */

import { isrcState, nameKey, upcKey } from '../schema/keys.js';

// the keys duplicates are compared by live below the engines (import's dedupe and sync use them too)
export { isrcKey, isrcState, NAME_FIELD, nameKey, upcKey } from '../schema/keys.js';

export type Severity = 'error' | 'warning';

/** One defect in one field of one row. */
export interface Finding {
  collection: string;
  id: string;
  field: string;
  value: unknown;
  rule: string;
  severity: Severity;
  message: string;
  /** Whether `catalog check --fix` can change it on its own. */
  fixable: boolean;
  /** The value --fix writes (fixable findings), or null. */
  fix: string | null;
}

/** The rules, as `--list-rules` and `--help` show them. */
export interface RuleInfo {
  name: string;
  severity: Severity;
  /** collection.field it looks at. */
  scope: string;
  fixable: boolean;
  rationale: string;
}

export const RULES: readonly RuleInfo[] = [
  { name: 'isrc-format', severity: 'error', scope: 'tracks.isrc_code', fixable: true, rationale: 'an ISRC is 12 characters CC-XXX-YY-NNNNN written without hyphens; distributors reject anything else (hyphens, spaces and lower case are fixed, the rest is an error)' },
  { name: 'isrc-duplicate', severity: 'error', scope: 'tracks.isrc_code', fixable: false, rationale: 'one recording, one ISRC: two tracks with the same code split royalties' },
  { name: 'upc-format', severity: 'error', scope: 'releases.upc_code', fixable: true, rationale: 'a UPC/EAN is 12 or 13 digits with a valid check digit; Excel turns long numbers into 1.23E+11 and loses digits' },
  { name: 'upc-duplicate', severity: 'error', scope: 'releases.upc_code', fixable: false, rationale: 'a barcode names one product: two releases with one UPC are mixed up by stores' },
  { name: 'duplicate-name', severity: 'error', scope: 'labels, genres, subgenres, countries, languages .name; artists.stage_name (warning)', fixable: false, rationale: 'names equal after trimming, folding case and removing accents are one thing entered twice' },
  { name: 'duplicate-release', severity: 'warning', scope: 'releases.release_title', fixable: false, rationale: 'the same title on one label and date is usually one release entered twice' },
  { name: 'whitespace', severity: 'warning', scope: 'every text field', fixable: true, rationale: 'leading/trailing or doubled spaces and control characters make names that look equal compare unequal' },
  { name: 'consistency', severity: 'warning', scope: 'releases.label, genre, subgenre', fixable: true, rationale: 'the text copy must say what label_id, genre_id and subgenre_id point at; fixed from the id' },
  { name: 'unresolved-reference', severity: 'warning', scope: 'releases.label_id, genre_id, subgenre_id', fixable: true, rationale: 'a release that names its label, genre or subgenre in text but has no id for it is left out of every by-id query (embeds, --where label_id=…); fixed when exactly one record has that name' },
  { name: 'release-date', severity: 'warning', scope: 'releases.release_date', fixable: false, rationale: 'a date before 1900 or after next year is almost always a typo' },
  { name: 'birthdate', severity: 'warning', scope: 'artists.birthdate', fixable: false, rationale: 'a birthdate in the future is a typo' },
  { name: 'email', severity: 'warning', scope: 'artists.email', fixable: false, rationale: 'an address without one @ and a domain bounces' },
  { name: 'profile-url', severity: 'warning', scope: 'artists.spotify, youtube, instagram, … ; releases.bandcamp', fixable: false, rationale: "a profile field should hold a URL of that service, not a handle or another site's link" },
  { name: 'artist-reference', severity: 'warning', scope: 'tracks.*_artists', fixable: false, rationale: 'an artist id inside a credits list must name an artist that exists' },
  { name: 'link-shape', severity: 'error', scope: 'releases.tracks; tracks.*_artists', fixable: false, rationale: 'a link element must have its documented shape (docs/links.md) or the relationships cannot follow it; values written before the shape was checked are kept, not dropped' },
  { name: 'track-position', severity: 'error', scope: 'releases.tracks', fixable: false, rationale: 'two tracks in one position of one disc make the running order ambiguous' },
  { name: 'track-reference', severity: 'warning', scope: 'releases.tracks', fixable: false, rationale: 'a track id in a release must name a track that exists (a removed track leaves its id behind)' },
  { name: 'credit-name', severity: 'warning', scope: 'tracks.*_artists', fixable: false, rationale: "a credit with an artist id shows the artist's stage name; an older copy that disagrees is stale (renames keep them current from now on)" },
];

export const RULE_NAMES: readonly string[] = RULES.map((r) => r.name);

/** Severities in order, for thresholds (`--severity`, `--fail-on`, `import --check LEVEL`). */
export const SEVERITY_RANK: Readonly<Record<Severity, number>> = { warning: 1, error: 2 };

const SEVERITY_OF = new Map(RULES.map((r) => [r.name, r.severity]));

/** A rule's default severity (a map lookup, not a search of RULES per finding). */
export const severityOf = (rule: string): Severity => SEVERITY_OF.get(rule) ?? 'warning';

/** Whether a 12- or 13-digit code's last digit is the GTIN check digit of the others. */
export function gtinValid(digits: string): boolean {
  if (!/^\d{12,13}$/.test(digits)) return false;
  let sum = 0;
  for (let i = digits.length - 2, w = 3; i >= 0; i--, w = 4 - w) sum += Number(digits[i]) * w;
  return (10 - (sum % 10)) % 10 === Number(digits[digits.length - 1]);
}

/** What is wrong with a UPC/EAN (null: nothing), and the fix when only separators are off. */
export function upcProblem(raw: string): { message: string; fix: string | null } | null {
  if (gtinValid(raw)) return null;
  if (/^\d+(?:[.,]\d+)?E\+?\d+$/i.test(raw.trim())) {
    return { message: `UPC ${JSON.stringify(raw)} was turned into scientific notation (by Excel?): its last digits are lost; take it from the original source`, fix: null };
  }
  const bare = upcKey(raw);
  if (bare !== raw && gtinValid(bare)) return { message: `UPC ${JSON.stringify(raw)} has separators`, fix: bare };
  if (/^\d{11}$/.test(bare) && gtinValid(`0${bare}`)) return { message: `UPC ${JSON.stringify(raw)} lost its leading zero`, fix: `0${bare}` };
  if (/^\d{12,13}$/.test(bare)) return { message: `UPC ${JSON.stringify(raw)} has a wrong check digit`, fix: null };
  return { message: `UPC ${JSON.stringify(raw)} is not 12 or 13 digits`, fix: null };
}

/** Free-text fields where line breaks and long runs of text are normal: only control characters count. */
const LONG_TEXT = new Set(['biography', 'description', 'lyrics', 'lyrics_text', 'address']);
/** Codes the isrc/upc rules judge (whitespace in them is their finding). */
const CODES = new Set(['isrc_code', 'upc_code']);
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/;
// eslint-disable-next-line no-control-regex
const CONTROLS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/g;

/** What the whitespace rule finds in a text value (null: nothing), and its fix. */
export function whitespaceProblem(field: string, value: string): { message: string; fix: string } | null {
  if (CODES.has(field)) return null;
  const problems: string[] = [];
  let fix = value;
  if (CONTROL.test(value)) {
    problems.push('control characters');
    fix = fix.replace(CONTROLS, '');
  }
  if (!LONG_TEXT.has(field)) {
    if (/^\s|\s$/u.test(fix)) problems.push(/^\s/u.test(fix) && /\s$/u.test(fix) ? 'leading and trailing spaces' : /^\s/u.test(fix) ? 'leading spaces' : 'trailing spaces');
    if (/[ \u00a0]{2,}/u.test(fix.trim())) problems.push('doubled spaces');
    fix = fix.trim().replace(/[ \u00a0]{2,}/gu, ' ');
  }
  return problems.length ? { message: `${problems.join(', ')} in ${JSON.stringify(value)}`, fix } : null;
}

/** The hosts a profile field's URL may point at (and their subdomains). */
export const PROFILE_HOSTS: Readonly<Record<string, readonly string[]>> = {
  spotify: ['spotify.com'],
  youtube: ['youtube.com', 'youtu.be'],
  instagram: ['instagram.com'],
  soundcloud: ['soundcloud.com'],
  bandcamp: ['bandcamp.com'],
  facebook: ['facebook.com', 'fb.com'],
  tiktok: ['tiktok.com'],
  twitch: ['twitch.tv'],
  x: ['x.com', 'twitter.com'],
  mixcloud: ['mixcloud.com'],
  songkick: ['songkick.com'],
  bandsintown: ['bandsintown.com'],
  linkedin: ['linkedin.com'],
  snapchat: ['snapchat.com'],
  apple_music: ['music.apple.com', 'itunes.apple.com'],
};

/** Why a profile field's value is not a link to its service (null: it is). */
export function profileProblem(field: string, value: string): string | null {
  const hosts = PROFILE_HOSTS[field];
  if (!hosts) return null;
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    return `${field} ${JSON.stringify(value)} is not a URL (expected a link to ${hosts[0]})`;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return `${field} ${JSON.stringify(value)} is not a web link`;
  const host = url.hostname.toLowerCase();
  if (!hosts.some((h) => host === h || host.endsWith(`.${h}`))) return `${field} links to ${host}, not ${hosts.join(' or ')}`;
  return null;
}

const EMAIL = /^[^\s@]+@[^\s@.]+(?:\.[^\s@.]+)+$/u;

/** The fields of tracks that hold lists of credited artists ({id?, name, …} objects). */
export { CREDIT_FIELDS } from '../schema/links.js';
import { CREDIT_FIELDS, creditProblems, releaseTrackProblems } from '../schema/links.js';

type Row = Readonly<Record<string, unknown>>;

/** A finding of `rule` on `field` of `row`, with the rule's severity unless told. */
function finding(collection: string, row: Row, field: string, rule: string, message: string, fix?: string | null, severity?: Severity): Finding {
  return { collection, id: String(row.id ?? ''), field, value: row[field] ?? null, rule, severity: severity ?? severityOf(rule), message, fixable: fix !== undefined && fix !== null, fix: fix ?? null };
}

/** What "today" and "next year" mean for the plausibility rules. */
export interface Today {
  /** YYYY-MM-DD */
  date: string;
  year: number;
}

export function todayOf(now: number): Today {
  const date = new Date(now).toISOString().slice(0, 10);
  return { date, year: Number(date.slice(0, 4)) };
}

/**
 * The findings a row gives on its own (every rule that needs no other row), for the rules in
 * `rules`. Pure: `import --check` runs it on rows before they are sent.
 */
export function rowFindings(collection: string, row: Row, rules: ReadonlySet<string>, today: Today): Finding[] {
  const out: Finding[] = [];
  const on = (r: string) => rules.has(r);
  for (const field in row) {
    const value = row[field];
    if (typeof value !== 'string') continue;
    if (on('whitespace')) {
      const w = whitespaceProblem(field, value);
      if (w) out.push(finding(collection, row, field, 'whitespace', w.message, w.fix));
    }
    if (value === '') continue;
    if (on('isrc-format') && collection === 'tracks' && field === 'isrc_code') {
      const s = isrcState(value);
      if (!s.ok) {
        out.push(
          s.fix
            ? finding(collection, row, field, 'isrc-format', `ISRC ${JSON.stringify(value)} should be written ${s.fix}`, s.fix, 'warning')
            : finding(collection, row, field, 'isrc-format', `ISRC ${JSON.stringify(value)} is not CC-XXX-YY-NNNNN (2 letters, 3 letters or digits, 7 digits)`),
        );
      }
    }
    if (on('upc-format') && collection === 'releases' && field === 'upc_code') {
      const p = upcProblem(value);
      if (p) out.push(finding(collection, row, field, 'upc-format', p.message, p.fix, p.fix ? 'warning' : 'error'));
    }
    if (on('email') && field === 'email' && !EMAIL.test(value.trim())) out.push(finding(collection, row, field, 'email', `${JSON.stringify(value)} is not an email address`));
    if (on('profile-url') && (collection === 'artists' || (collection === 'releases' && field === 'bandcamp'))) {
      const p = profileProblem(field, value);
      if (p) out.push(finding(collection, row, field, 'profile-url', p));
    }
  }
  if (on('release-date') && collection === 'releases' && typeof row.release_date === 'string') {
    const y = Number(row.release_date.slice(0, 4));
    if (y < 1900) out.push(finding(collection, row, 'release_date', 'release-date', `released ${row.release_date}: before 1900`));
    else if (y > today.year + 1) out.push(finding(collection, row, 'release_date', 'release-date', `released ${row.release_date}: after next year`));
  }
  if (on('birthdate') && collection === 'artists' && typeof row.birthdate === 'string' && row.birthdate > today.date) {
    out.push(finding(collection, row, 'birthdate', 'birthdate', `born ${row.birthdate}: in the future`));
  }
  return out;
}

/** The fields a release copies from the row its id points at: text field → [id field, collection]. */
export const COPIED: ReadonlyArray<readonly [string, string, string]> = [
  ['label', 'label_id', 'labels'],
  ['genre', 'genre_id', 'genres'],
  ['subgenre', 'subgenre_id', 'subgenres'],
];

/** The consistency finding of a release's copied name (null: it agrees with the row its id names). */
export function consistencyFinding(row: Row, field: string, idField: string, name: string | undefined): Finding | null {
  const id = row[idField];
  if (typeof id !== 'string' || name === undefined) return null;
  const text = row[field];
  const want = name.trim().replace(/\s+/g, ' ');
  if (typeof text === 'string' && text.trim().replace(/\s+/g, ' ') === want) return null;
  const message = text === null || text === undefined || text === '' ? `${field} is empty but ${idField} names “${want}”` : `${field} says “${String(text)}” but ${idField} names “${want}”`;
  return finding('releases', row, field, 'consistency', message, want);
}

/**
 * The finding of a release whose text reference (`label`) names something but whose id field
 * (`label_id`) is empty; `ids` maps compared names (nameKey) to the one id with that name (null
 * when several share it). Null when there is nothing to report.
 */
export function unresolvedFinding(row: Row, field: string, idField: string, ids: ReadonlyMap<string, string | null>): Finding | null {
  const text = row[field];
  if (typeof text !== 'string' || text.trim() === '' || (row[idField] !== null && row[idField] !== undefined)) return null;
  const id = ids.get(nameKey(text));
  const why = id ? `; it names ${id}` : id === null ? '; several records have that name' : '; no record has that name';
  return finding('releases', row, idField, 'unresolved-reference', `${field} says “${text.trim()}” but ${idField} is empty${why}`, id ?? null);
}

/** A duplicate finding for one row of a group of rows that share a key. */
export function duplicateFinding(collection: string, rule: string, field: string, row: Row, others: string[], severity?: Severity): Finding {
  const shown = others.slice(0, 3).join(', ') + (others.length > 3 ? ` and ${others.length - 3} more` : '');
  const what = rule === 'isrc-duplicate' ? 'ISRC' : rule === 'upc-duplicate' ? 'UPC' : rule === 'duplicate-release' ? 'title, label and date' : 'name';
  return finding(collection, row, field, rule, `same ${what} as ${shown}`, undefined, severity);
}

/**
 * The link rules that need no other row: `link-shape` (an element that does not fit its shape) and
 * `track-position` (a repeated disc/position), one finding per element, at the element's path.
 */
export function linkShapeFindings(collection: string, row: Row, rules: ReadonlySet<string>): Finding[] {
  if (!rules.has('link-shape') && !rules.has('track-position')) return [];
  const fields = collection === 'releases' ? ['tracks'] : collection === 'tracks' ? CREDIT_FIELDS : [];
  const out: Finding[] = [];
  for (const field of fields) {
    const problems = field === 'tracks' ? releaseTrackProblems(row[field]) : creditProblems(field, row[field]);
    for (const p of problems) {
      const rule = p.kind === 'position' ? 'track-position' : 'link-shape';
      if (rules.has(rule)) out.push(finding(collection, row, field, rule, `${p.path}: ${p.reason}`));
    }
  }
  return out;
}
