import type stringWidthOf from 'string-width';

/**
 * Terminal widths from string-width (the measure Ink, listr2 and most table libraries use): a
 * grapheme cluster at a time, emoji and their ZWJ sequences, skin tones and keycaps two cells,
 * East Asian Wide and Fullwidth forms two, combining marks and Indic vowel signs none.
 *
 * The library is loaded only when text other than printable ASCII is measured: it makes an
 * Intl.Segmenter when it loads, and the first Intl object of a process costs ~10-14 ms of ICU
 * start-up (measured here, Node 20), which a command printing ASCII should not pay. So the
 * measuring functions are synchronous and refuse such text until `loadWidths()` has run;
 * `measured(fn)` runs `fn`, and once more after loading the library if `fn` needed it.
 */
let stringWidth: typeof stringWidthOf | undefined;
let graphemes: Intl.Segmenter | undefined;

/** Thrown (and caught by `measured`) when text other than printable ASCII is measured before `loadWidths()`. */
class WidthsNotLoaded extends Error {
  constructor() {
    super('format/width: text other than printable ASCII was measured before loadWidths()');
  }
}

/** Loads the width library (once per process). */
export async function loadWidths(): Promise<void> {
  stringWidth ??= (await import('string-width')).default;
  graphemes ??= new Intl.Segmenter(undefined, { granularity: 'grapheme' });
}

/**
 * Runs `fn`, which measures text; if it met text the library is needed for, loads the library
 * and runs it again (so `fn` must not have done anything else by then: measure first, then act).
 */
export async function measured<T>(fn: () => T): Promise<T> {
  try {
    return fn();
  } catch (err) {
    if (!(err instanceof WidthsNotLoaded)) throw err;
    await loadWidths();
    return fn();
  }
}

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/**
 * Terminal width of a string (ANSI colour codes count nothing).
 * @example displayWidth('東京') // 4 (after loadWidths())
 * @example displayWidth('👨‍👩‍👧') // 2
 */
export function displayWidth(s: string): number {
  // printable ASCII, most cells of most tables: one cell per character, no library
  if (PRINTABLE_ASCII.test(s)) return s.length;
  if (!stringWidth) throw new WidthsNotLoaded();
  return stringWidth(s);
}

/**
 * Cuts `s` to at most `width` cells, ending in `…` when something was cut; never inside a
 * grapheme cluster (an emoji with its skin tone or ZWJ parts, a letter with its marks, an Indic
 * conjunct stay whole or go whole).
 * @example truncate('Blue Note Records', 8) // 'Blue No…'
 * @example truncate('👍🏽👍🏽👍🏽', 4) // '👍🏽…'
 */
export function truncate(s: string, width: number): string {
  if (displayWidth(s) <= width) return s;
  if (width <= 0) return '';
  if (PRINTABLE_ASCII.test(s)) return `${s.slice(0, width - 1)}…`;
  let out = '';
  let w = 0;
  for (const { segment } of (graphemes as Intl.Segmenter).segment(s)) {
    const cw = displayWidth(segment);
    if (w + cw > width - 1) break;
    out += segment;
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
 * Words in lines of at most `width` cells (a word wider than that gets a line of its own).
 * @example wrapWords(['one', 'two', 'three'], 7) // ['one two', 'three']
 */
export function wrapWords(words: readonly string[], width: number): string[] {
  const lines: string[] = [];
  let used = 0;
  for (const word of words) {
    const w = displayWidth(word);
    if (lines.length > 0 && used + 1 + w <= width) {
      lines[lines.length - 1] += ` ${word}`;
      used += 1 + w;
    } else {
      lines.push(word);
      used = w;
    }
  }
  return lines;
}
