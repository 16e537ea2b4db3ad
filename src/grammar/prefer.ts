/**
 * The `Prefer` request header (parse, server side; render, client side) and the
 * `Preference-Applied` response header. Parsing follows PostgREST 12.2.3: repeated headers and
 * comma lists, tokens trimmed, empty tokens skipped, the first occurrence of each kind wins.
 * `count=none`, `return=none`, `unchanged=skip` and `run=<uuid>` are our documented extensions and
 * count as valid (`run` is never echoed in Preference-Applied: it names the import a write belongs to).
 */
import { UUID_RE } from '../schema/in-database.js';
import type { Preferences } from './types.js';

type Kind = 'return' | 'resolution' | 'count' | 'missing' | 'handling' | 'tx' | 'params' | 'unchanged';

const ENUMS: Record<Kind, readonly string[]> = {
  return: ['representation', 'minimal', 'headers-only', 'none'],
  resolution: ['merge-duplicates', 'ignore-duplicates'],
  count: ['exact', 'planned', 'estimated', 'none'],
  missing: ['default', 'null'],
  handling: ['strict', 'lenient'],
  tx: ['commit', 'rollback'],
  params: ['single-object'],
  unchanged: ['skip'],
};

// An IANA-looking zone name (`UTC`, `America/Los_Angeles`, `Etc/GMT+5`); the server checks it exists.
const TIMEZONE = /^[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+)*$/;
const INTEGER = /^-?\d+$/;
// `run=`: an import's tag in the canonical (lower-case) form migration 11's trigger accepts
const RUN = new RegExp(UUID_RE);

/**
 * Parse one or more `Prefer` header values. Never throws.
 * @example parsePrefer(['return=representation, count=exact', 'foo']) // {return:'representation', count:'exact', invalid:['foo']}
 */
export function parsePrefer(headerValues: string | string[] | null | undefined): Preferences {
  const values = headerValues == null ? [] : Array.isArray(headerValues) ? headerValues : [headerValues];
  const tokens = values.flatMap((v) => v.split(',')).map((t) => t.trim()).filter((t) => t !== '');
  const prefs: Preferences = { invalid: [] };
  const set = prefs as unknown as Record<string, unknown>;
  for (const token of tokens) {
    const eq = token.indexOf('=');
    const name = eq < 0 ? token : token.slice(0, eq);
    const value = eq < 0 ? '' : token.slice(eq + 1);
    if (name in ENUMS && eq >= 0 && ENUMS[name as Kind].includes(value)) {
      if (set[name] === undefined) set[name] = value;
    } else if (name === 'timezone' && TIMEZONE.test(value)) {
      prefs.timezone ??= value;
    } else if (name === 'run' && RUN.test(value)) {
      prefs.run ??= value;
    } else if (name === 'max-affected' && INTEGER.test(value) && Number.isSafeInteger(Number(value))) {
      prefs.maxAffected ??= Number(value);
    } else {
      prefs.invalid.push(token);
    }
  }
  return prefs;
}

function tokens(p: Partial<Preferences>, order: readonly (keyof Preferences)[]): string[] {
  const out: string[] = [];
  for (const k of order) {
    const v = p[k];
    if (v === undefined || k === 'invalid') continue;
    out.push(k === 'maxAffected' ? `max-affected=${v}` : `${k}=${v}`);
  }
  return out;
}

const APPLIED_ORDER = ['resolution', 'unchanged', 'missing', 'return', 'params', 'count', 'tx', 'handling', 'timezone', 'maxAffected'] as const;

/**
 * Render a `Prefer` request header value (empty string when nothing is set), in the order
 * PostgREST applies them (as Preference-Applied lists them).
 * @example renderPrefer({ return: 'representation', count: 'exact' }) // 'return=representation, count=exact'
 */
export function renderPrefer(p: Partial<Preferences>): string {
  return tokens(p, APPLIED_ORDER).join(', ');
}

/**
 * Render `Preference-Applied` in PostgREST's fixed order; null when nothing applies.
 * @example renderPreferenceApplied({ count: 'exact', return: 'representation' }) // 'return=representation, count=exact'
 */
export function renderPreferenceApplied(p: Partial<Preferences>): string | null {
  const t = tokens(p, APPLIED_ORDER);
  return t.length === 0 ? null : t.join(', ');
}
