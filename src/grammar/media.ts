/**
 * Media types and `Accept` negotiation. Ordering follows the wai `parseHttpAccept` that
 * PostgREST 12.2.3 uses: blanks removed, sorted by q (highest first) and then by specificity
 * (more parameters first, fewer `*` first), otherwise in the order given.
 */
import type { MediaType } from './types.js';

/** The media types the service knows. */
export const MEDIA = {
  json: 'application/json',
  csv: 'text/csv',
  object: 'application/vnd.pgrst.object+json',
  array: 'application/vnd.pgrst.array+json',
  openapi: 'application/openapi+json',
  yaml: 'application/yaml',
  atom: 'application/atom+xml',
  any: '*/*',
} as const;

/**
 * Our bulk media type (not PostgREST's), one name for both sides: CSV as PostgreSQL's
 * `COPY … (FORMAT csv, HEADER true)` reads and writes it. A POST body of it is loaded with COPY
 * (src/server/payload.ts); a GET that accepts it is answered by `COPY … TO STDOUT`
 * (src/server/copy-out.ts). `catalog import` and `export` use it.
 */
export const COPY_CSV = 'application/vnd.catalog.copy+csv';

/** Haskell `reads :: Double` prefix: `0.5` → 0.5, `1e-1x` → 0.1; no leading digit → undefined. */
function readQ(s: string): number | undefined {
  const m = /^\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(s);
  return m === null ? undefined : Number(m[0]);
}

/**
 * Parse a media type with parameters: `text/csv; charset=utf-8` → `{type:'text/csv', params:{charset:'utf-8'}, q:1}`.
 * @example parseMediaType('Application/JSON') // { type: 'application/json', params: {}, q: 1 }
 */
export function parseMediaType(text: string, q = 1): MediaType {
  const [type, ...rest] = text.split(';');
  const params: Record<string, string> = {};
  for (const p of rest) {
    const eq = p.indexOf('=');
    if (eq < 0) continue;
    params[p.slice(0, eq).trim().toLowerCase()] = p.slice(eq + 1).trim().replace(/^"(.*)"$/, '$1').toLowerCase();
  }
  return { type: type.trim().toLowerCase(), params, q };
}

/**
 * Parse an `Accept` header into media types in preference order; absent or empty means `*\/*`.
 * @example parseAccept('text/csv, application/json;q=0.5') // [{type:'text/csv',…,q:1}, {type:'application/json',…,q:0.5}]
 */
export function parseAccept(header: string | null | undefined): MediaType[] {
  const text = (header ?? '').replace(/ /g, '');
  const entries = text.split(',').filter((s) => s !== '').map((s, index) => {
    const at = s.indexOf(';q=');
    const media = at < 0 ? s : s.slice(0, at);
    const qText = at < 0 ? '' : s.slice(at + 3).split(';')[0];
    const q = at < 0 ? 1 : (readQ(qText) ?? 1);
    const specificity = (media.match(/;/g)?.length ?? 0) - (media.match(/\*/g)?.length ?? 0);
    return { mt: parseMediaType(media, q), specificity, index };
  });
  if (entries.length === 0) return [{ type: '*/*', params: {}, q: 1 }];
  entries.sort((a, b) => b.mt.q - a.mt.q || b.specificity - a.specificity || a.index - b.index);
  return entries.map((e) => e.mt);
}

// `application/vnd.pgrst.object` and `…object+json` name the same thing (likewise for array).
const canonical = (t: string): string => t.toLowerCase().replace(/^(application\/vnd\.pgrst\.(?:object|array))\+json$/, '$1');

/**
 * The first offered type (server's list, in its preference order) that the client accepts, or null.
 * Entries with q=0 are not acceptable.
 * @example negotiate(parseAccept('text/csv'), ['application/json', 'text/csv']) // 'text/csv'
 */
export function negotiate(accepted: MediaType[], offered: string[]): string | null {
  for (const a of accepted) {
    if (a.q <= 0) continue;
    const [major] = a.type.split('/');
    const hit = offered.find((o) => {
      const t = parseMediaType(o).type;
      if (a.type === '*/*') return true;
      if (a.type.endsWith('/*')) return t.split('/')[0] === major;
      return canonical(t) === canonical(a.type);
    });
    if (hit !== undefined) return hit;
  }
  return null;
}
