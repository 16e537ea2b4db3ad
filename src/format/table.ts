import { style } from '../io/style.js';
import { relativeTime } from './relative-time.js';
import type { Output } from '../io/streams.js';
import { cellText, type PageWriter, type Row, type WriterOptions } from './types.js';

/** A table's options: it is drawn for a terminal (or its pipe or pager), so it needs an Output. */
type TableOptions = WriterOptions & { out: Output };
import { displayWidth, fitWidths, measured, truncate } from './width.js';
import { UUID_TEXT } from '../schema/codecs.js';

const GAP = 2;
const TIMESTAMP = 'timestamp with time zone';
/** Rows the table sizes its columns by before it prints anything (a terminal's first page is smaller). */
export const LAYOUT_ROWS = 200;
/** Widths a column of these types needs whatever its first rows hold. */
const TYPE_WIDTH: Record<string, number> = { uuid: 36, date: 10, boolean: 5 };

/**
 * An aligned table that streams: the column widths come from the header, the schema's types and
 * the first LAYOUT_ROWS rows; every row is then printed as it arrives, so time and memory are
 * linear in rows whatever their number. On a terminal it fits the width: long text is cut with
 * `…`, newlines show as `⏎`, trailing columns that cannot fit are dropped with a notice, and
 * timestamps read as relative times. Anywhere else every value is printed whole (a value wider
 * than its column's first rows pushes the rest of its line right; one with newlines takes lines).
 */
export function tableWriter(options: WriterOptions): PageWriter {
  if (!('isTTY' in options.out)) throw new Error('a table is written to an Output (a terminal, pipe or pager)');
  const opts = options as TableOptions;
  if (opts.single) return recordWriter(opts);
  const first: Row[] = [];
  let layout: Layout | null = null;
  const start = async () => {
    // measured: the width library loads only if some text is not printable ASCII (src/format/width.ts)
    const planned = await measured(() => {
      const l = planLayout(first, opts);
      return l && { layout: l, text: headLine(l, opts) + first.map((r) => rowLines(r, l, opts)).join('') };
    });
    if (!planned) return;
    layout = planned.layout;
    const { hidden } = layout;
    if (hidden.length) opts.notice?.(`${hidden.length} more field${hidden.length === 1 ? '' : 's'} not shown (${hidden.join(', ')}); choose with --select, or use -o json`);
    await opts.out.write(planned.text);
  };
  const firstRows = opts.firstRows ?? LAYOUT_ROWS;
  return {
    async write(rows) {
      let i = 0;
      while (!layout && i < rows.length) {
        first.push(rows[i++]);
        if (first.length >= firstRows) await start();
      }
      if (layout && i < rows.length) {
        const rest = rows.slice(i);
        await opts.out.write(await measured(() => rest.map((r) => rowLines(r, layout!, opts)).join('')));
      }
    },
    async end() {
      if (!layout) await start();
    },
  };
}

/** How a null looks in a table on a terminal: unlike an empty string, which stays blank. */
export const NULL_MARK = '∅';

function display(value: unknown, column: string, opts: TableOptions): string {
  const text = cellText(value);
  if (!opts.out.isTTY) return text;
  if (value === null) return NULL_MARK;
  if (opts.columnTypes?.[column] === TIMESTAMP && typeof value === 'string' && opts.now !== undefined) {
    return relativeTime(value, opts.now);
  }
  return text.replace(/\r?\n/g, '⏎').replace(/\t/g, ' ');
}

/** The columns shown, their widths (null: off a terminal, nothing is cut), and how ids are cut. */
interface Layout {
  columns: string[];
  widths: number[];
  cut: boolean;
  /** Characters kept of each id column's uuids (0: whole). */
  idLength: number[];
  /** Trailing columns that did not fit the terminal (a notice names them). */
  hidden: string[];
}

const isIdColumn = (c: string, opts: TableOptions) => c === 'id' || c.endsWith('.id') || opts.columnTypes?.[c] === 'uuid';

/** The widest cell of each column (one pass, no spread: safe at any row count). */
function naturalWidths(columns: string[], cells: string[][], opts: TableOptions): number[] {
  return columns.map((c, i) => {
    let w = Math.max(displayWidth(c), TYPE_WIDTH[opts.columnTypes?.[c] ?? ''] ?? 0);
    for (const row of cells) for (const line of row[i].split('\n')) w = Math.max(w, displayWidth(line));
    return w;
  });
}

/** Sizes the table by its first rows: columns the caller named first, then any others the rows carry. */
function planLayout(rows: Row[], opts: TableOptions): Layout | null {
  const present = new Set<string>();
  for (const r of rows) for (const k of Object.keys(r)) present.add(k);
  let columns = [...new Set([...(opts.columns ?? []).filter((c) => present.has(c)), ...present])];
  if (columns.length === 0) return null;
  let cells = rows.map((r) => columns.map((c) => display(r[c], c, opts)));
  const idLength = columns.map(() => 0);
  if (!(opts.out.isTTY && opts.out.columns > 0)) return { columns, widths: naturalWidths(columns, cells, opts), cut: false, idLength, hidden: [] };
  let natural = naturalWidths(columns, cells, opts);
  // Ids are for copying: never cut them, only abbreviate them (a prefix `get` accepts) when
  // the whole table does not fit.
  const fixed = columns.map((c) => isIdColumn(c, opts));
  if (natural.reduce((sum, w) => sum + w + GAP, -GAP) > opts.out.columns) {
    fixed.forEach((isId, i) => {
      if (isId) idLength[i] = abbreviationLength(cells.map((row) => row[i]));
    });
    cells = cells.map((row) => row.map((v, i) => shortId(v, idLength[i])));
    natural = naturalWidths(columns, cells, opts).map((w, i) => (idLength[i] ? Math.min(w, idLength[i] + 1) : w));
  }
  const widths = fitWidths(natural, opts.out.columns, GAP, fixed);
  const hidden = columns.slice(widths.length);
  columns = columns.slice(0, widths.length);
  return { columns, widths, cut: true, idLength, hidden };
}

function headLine(layout: Layout, opts: TableOptions): string {
  const s = style(opts.out.color);
  const names = layout.columns.map((c, i) => (layout.cut ? truncate(c, layout.widths[i]) : c));
  return line(names.map((n, i) => (i === names.length - 1 ? s.bold(n) : s.bold(n) + pad(n, layout.widths[i]))));
}

const SPACES = ' '.repeat(256);
/** The spaces that bring `text` to `width` cells (a slice of one string: this runs for every cell). */
const pad = (text: string, width: number) => {
  const n = width - displayWidth(text);
  return n <= 0 ? '' : n <= SPACES.length ? SPACES.slice(0, n) : ' '.repeat(n);
};
const line = (cells: string[]) => `${cells.join(' '.repeat(GAP)).trimEnd()}\n`;

/** One row's line (off a terminal, a cell with newlines makes it several). */
function rowLines(row: Row, layout: Layout, opts: TableOptions): string {
  const { columns, widths } = layout;
  const cells = columns.map((c, i) => {
    const text = shortId(display(row[c], c, opts), layout.idLength[i]);
    return layout.cut ? truncate(text, widths[i]) : text;
  });
  if (!cells.some((c) => c.includes('\n'))) return line(cells.map((c, i) => (i === cells.length - 1 ? c : c + pad(c, widths[i]))));
  const split = cells.map((c) => c.split(/\r?\n/));
  const height = Math.max(...split.map((s) => s.length));
  let out = '';
  for (let k = 0; k < height; k++) out += line(split.map((s, i) => (s[k] ?? '') + (i === split.length - 1 ? '' : pad(s[k] ?? '', widths[i]))));
  return out;
}

/** A uuid cut to `n` characters and `…` (0, or not a uuid: unchanged). */
const shortId = (v: string, n: number) => (n > 0 && UUID_TEXT.test(v) ? `${v.slice(0, n)}…` : v);

/**
 * How many characters of a column's uuids to keep: the shortest prefix that tells them apart (as
 * git abbreviates commits) plus four hex digits, at least 8; 0 when that is nearly the whole id.
 */
export function abbreviationLength(ids: string[]): number {
  const distinct = [...new Set(ids.filter((v) => UUID_TEXT.test(v)))];
  let n = 1;
  while (n < 36 && new Set(distinct.map((v) => v.slice(0, n).toLowerCase())).size < distinct.length) n++;
  // Four more hex digits than the rows shown need, so that rows not shown (other pages, the rest
  // of the collection) are unlikely to share the prefix; never fewer than 8 characters.
  for (let extra = 0; extra < 4 && n < 36; n++) if (distinct.some((v) => v[n] !== '-')) extra++;
  n = Math.max(n, 8);
  return n >= 35 ? 0 : n;
}

/**
 * The uuids of one column cut to a prefix `get` accepts, followed by `…` (see abbreviationLength).
 * A column whose ids only differ at the end stays whole.
 * @example abbreviate(['1ab00001-ce6c-400d-…', '1ab00001-1174-45bb-…']) // ['1ab00001-ce6c-4…', '1ab00001-1174-4…']
 */
export function abbreviate(ids: string[]): string[] {
  const n = abbreviationLength(ids);
  return ids.map((v) => shortId(v, n));
}

/** `get`'s view of one record: field/value pairs, the values cut to the terminal's width. */
function recordWriter(opts: TableOptions): PageWriter {
  let row: Row | null = null;
  return {
    async write(rows) {
      row ??= rows[0] ?? null;
    },
    async end() {
      const keys = Object.keys(row ?? {});
      if (keys.length === 0) return;
      await opts.out.write(await measured(() => recordText(row!, keys, opts)));
    },
  };
}

/** The field/value lines of one record. */
function recordText(row: Row, keys: string[], opts: TableOptions): string {
  let keyWidth = 0;
  for (const k of keys) keyWidth = Math.max(keyWidth, displayWidth(k));
  const s = style(opts.out.color);
  const valueWidth = opts.out.isTTY && opts.out.columns > 0 ? Math.max(opts.out.columns - keyWidth - GAP, 10) : Infinity;
  let out = '';
  for (const k of keys) {
    const v = display(row[k], k, opts);
    const lines = (valueWidth === Infinity ? v : truncate(v, valueWidth)).split(/\r?\n/);
    lines.forEach((l, i) => (out += line([(i === 0 ? s.bold(k) + pad(k, keyWidth) : ' '.repeat(keyWidth)), l])));
  }
  return out;
}
