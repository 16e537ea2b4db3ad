/** Code point ranges that a terminal draws two cells wide (CJK, Hangul, full-width forms, most emoji). */
const WIDE: Array<[number, number]> = [
  [0x1100, 0x115f], [0x2e80, 0x303e], [0x3041, 0x33ff], [0x3400, 0x4dbf], [0x4e00, 0x9fff], [0xa000, 0xa4cf],
  [0xac00, 0xd7a3], [0xf900, 0xfaff], [0xfe30, 0xfe4f], [0xff00, 0xff60], [0xffe0, 0xffe6], [0x1f300, 0x1f64f],
  [0x1f900, 0x1f9ff], [0x20000, 0x3fffd],
];
/** Ranges drawn zero cells wide (combining marks, joiners, variation selectors). */
const ZERO: Array<[number, number]> = [
  [0x0300, 0x036f], [0x0483, 0x0489], [0x0591, 0x05bd], [0x0610, 0x061a], [0x064b, 0x065f], [0x0e31, 0x0e31],
  [0x0e34, 0x0e3a], [0x0e47, 0x0e4e], [0x1ab0, 0x1aff], [0x1dc0, 0x1dff], [0x200b, 0x200f], [0x20d0, 0x20ff],
  [0xfe00, 0xfe0f], [0xfe20, 0xfe2f],
];

const within = (cp: number, ranges: Array<[number, number]>) => ranges.some(([a, b]) => cp >= a && cp <= b);

/** Cells one code point takes in a terminal. */
export function charWidth(cp: number): number {
  if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0)) return 0;
  // Latin-1 and Latin Extended (accented names): one cell, without searching the ranges below
  if (cp < 0x300) return 1;
  if (within(cp, ZERO)) return 0;
  return within(cp, WIDE) ? 2 : 1;
}

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/**
 * Terminal width of a string (no ANSI codes expected).
 * @example displayWidth('東京') // 4
 */
export function displayWidth(s: string): number {
  // printable ASCII, most cells of most tables: one cell per character
  if (PRINTABLE_ASCII.test(s)) return s.length;
  let w = 0;
  for (const ch of s) w += charWidth(ch.codePointAt(0) as number);
  return w;
}

/**
 * Cuts `s` to at most `width` cells, ending in `…` when something was cut.
 * @example truncate('Blue Note Records', 8) // 'Blue No…'
 */
export function truncate(s: string, width: number): string {
  if (displayWidth(s) <= width) return s;
  if (width <= 0) return '';
  let out = '';
  let w = 0;
  for (const ch of s) {
    const cw = charWidth(ch.codePointAt(0) as number);
    if (w + cw > width - 1) break;
    out += ch;
    w += cw;
  }
  return `${out}…`;
}

/**
 * Fits natural column widths into `total` cells (with `gap` between columns). Columns are kept
 * in order while each still gets a comfortable width (`comfortable` cells, or its natural width
 * if smaller; `fixed` columns, such as ids, always their natural width); then the widest are
 * narrowed until the row fits. Returns the widths of the columns kept.
 * @example fitWidths([10, 40, 30], 50, 2) // [10, 18, 18]
 */
export function fitWidths(natural: number[], total: number, gap: number, fixed: boolean[] = [], comfortable = 16): number[] {
  const floor = (i: number) => (fixed[i] ? natural[i] : Math.min(natural[i], comfortable));
  let kept = 0;
  let used = 0;
  while (kept < natural.length && (kept === 0 || used + gap + floor(kept) <= total)) used += (kept === 0 ? 0 : gap) + floor(kept++);
  const widths = natural.slice(0, kept);
  const room = Math.max(total - gap * (kept - 1), 1);
  let sum = widths.reduce((s, w) => s + w, 0);
  while (sum > room) {
    const shrinkable = widths.map((w, i) => [w, i]).filter(([w, i]) => w > Math.min(floor(i), room));
    if (shrinkable.length === 0) break;
    shrinkable.sort((a, b) => b[0] - a[0]);
    const [w, i] = shrinkable[0];
    // Narrow the widest to the next-widest (or just enough), never below its floor; ties go one cell at a time.
    const target = Math.max(Math.min(floor(i), room), shrinkable[1]?.[0] ?? 0, w - (sum - room));
    widths[i] = target === w ? w - 1 : target;
    sum = widths.reduce((s, x) => s + x, 0);
  }
  return widths;
}

/**
 * Words in lines of at most `width` characters (a word longer than that gets a line of its own).
 * @example wrapWords(['one', 'two', 'three'], 7) // ['one two', 'three']
 */
export function wrapWords(words: readonly string[], width: number): string[] {
  const lines: string[] = [];
  for (const word of words) {
    const last = lines.length - 1;
    if (last >= 0 && lines[last].length + word.length + 1 <= width) lines[last] += ` ${word}`;
    else lines.push(word);
  }
  return lines;
}
