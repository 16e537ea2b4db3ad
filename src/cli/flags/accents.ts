/**
 * The short form's `~` match ignores case and accents against any PostgREST: the `*`-wildcard
 * pattern is compiled to a POSIX regular expression for the standard `imatch` operator (`~*`),
 * each letter that has accented forms written as a class of them, so `*cafe*` finds "Café del
 * Mar" and `*café*` finds "Cafe". Upper-case forms are in the classes too: under a C collation
 * `~*` folds only ASCII letters.
 */

/** The accented forms of each base letter (Latin-1, Latin Extended-A and common others). */
const VARIANTS: Record<string, string> = {
  a: 'àáâãäåāăąǎ',
  c: 'çćĉċč',
  d: 'ďđ',
  e: 'èéêëēĕėęě',
  g: 'ĝğġģ',
  h: 'ĥħ',
  i: 'ìíîïĩīĭįıǐ',
  j: 'ĵ',
  k: 'ķ',
  l: 'ĺļľŀł',
  n: 'ñńņň',
  o: 'òóôõöøōŏőǒ',
  r: 'ŕŗř',
  s: 'śŝşšș',
  t: 'ţťŧț',
  u: 'ùúûüũūŭůűųǔ',
  w: 'ŵ',
  y: 'ýÿŷ',
  z: 'źżž',
};

/** Accented letter → its base letter, for a pattern typed with accents. */
const BASE = new Map<string, string>();
for (const [base, forms] of Object.entries(VARIANTS)) for (const f of forms) BASE.set(f, base);

/** The regex class of a letter: the base letter and every accented form, both cases. */
function letterClass(base: string): string {
  const forms = base + VARIANTS[base];
  return `[${forms}${forms.toUpperCase()}]`;
}

/**
 * An ilike-style pattern (`*` and `%` any run, `_` one character) as an anchored POSIX regex
 * matching the same text ignoring accents (with `imatch`, case too).
 * @example accentPattern('*cafe*') // '^.*[cçćĉċčCÇĆĈĊČ][aàáâ…]f[eèéêë…].*$'
 */
export function accentPattern(pattern: string): string {
  let out = '^';
  for (const ch of pattern) {
    const lower = ch.toLowerCase();
    const base = VARIANTS[lower] !== undefined ? lower : BASE.get(lower);
    if (ch === '*' || ch === '%') out += '.*';
    else if (ch === '_') out += '.';
    else if (base !== undefined) out += letterClass(base);
    else if (/[\\^$.|?+()[\]{}]/.test(ch)) out += `\\${ch}`;
    else out += ch;
  }
  return `${out}$`;
}
