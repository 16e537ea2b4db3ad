/**
 * Query-string splitting and percent-coding as PostgREST's http-types does it: pairs are split on
 * `&` and `;`, a pair without `=` has no value, `+` decodes to a space, and a malformed `%` escape
 * is kept literally.
 */

export interface RawParam {
  key: string;
  /** null when the pair had no `=`. */
  value: string | null;
}

const HEX = /^[0-9a-fA-F]{2}$/;
const utf8 = new TextDecoder('utf-8', { fatal: false });
const encoder = new TextEncoder();

/** Percent-decode with `+` → space; invalid escapes stay as written; bytes are read as UTF-8. */
export function decodeComponent(s: string): string {
  if (!/[%+]/.test(s)) return s;
  const spaced = s.replace(/\+/g, ' ');
  try {
    return decodeURIComponent(spaced);
  } catch {
    // Malformed escapes or invalid UTF-8: decode byte by byte like http-types does.
  }
  const bytes: number[] = [];
  for (let i = 0; i < spaced.length; i++) {
    const c = spaced[i];
    if (c === '%' && HEX.test(spaced.slice(i + 1, i + 3))) {
      bytes.push(parseInt(spaced.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      const ch = String.fromCodePoint(spaced.codePointAt(i)!);
      for (const b of encoder.encode(ch)) bytes.push(b);
      i += ch.length - 1;
    }
  }
  return utf8.decode(new Uint8Array(bytes));
}

/** Split a raw query string (with or without the leading `?`) into decoded pairs, in order. */
export function splitQuery(search: string): RawParam[] {
  const s = search.startsWith('?') ? search.slice(1) : search;
  if (s === '') return [];
  return s.split(/[&;]/).map((pair) => {
    const eq = pair.indexOf('=');
    return eq < 0
      ? { key: decodeComponent(pair), value: null }
      : { key: decodeComponent(pair.slice(0, eq)), value: decodeComponent(pair.slice(eq + 1)) };
  });
}

// Characters left as they are: unreserved ones plus the grammar's punctuation, for readable URLs.
const KEEP = /^[A-Za-z0-9\-_.~(),:*!$@/>]*$/;
const KEEP_CHAR = /[A-Za-z0-9\-_.~(),:*!$@/>]/;

/** Percent-encode a key or value so that `+ & ; = # % "` spaces and non-ASCII survive decoding. */
export function encodeComponent(s: string): string {
  if (KEEP.test(s)) return s;
  let out = '';
  for (const ch of s) {
    if (KEEP_CHAR.test(ch)) out += ch;
    else for (const b of encoder.encode(ch)) out += `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}
