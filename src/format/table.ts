import { style } from '../io/style.js';
import { relativeTime } from './relative-time.js';
import { cellText, type Row, type RowWriter, type WriterOptions } from './types.js';
import { displayWidth, fitWidths, truncate } from './width.js';

const GAP = 2;
const BORDERLESS = {
  top: '', 'top-mid': '', 'top-left': '', 'top-right': '', bottom: '', 'bottom-mid': '', 'bottom-left': '', 'bottom-right': '',
  left: '', 'left-mid': '', mid: '', 'mid-mid': '', right: '', 'right-mid': '', middle: ' '.repeat(GAP),
};
const TIMESTAMP = 'timestamp with time zone';

/**
 * An aligned table (cli-table3, loaded on first use). It needs every row before it can size the
 * columns, so it is the one writer that buffers. On a terminal it fits the width: long text is
 * cut with `…`, newlines show as `⏎`, trailing columns that cannot fit are dropped with a notice,
 * and timestamps read as relative times. Anywhere else every value is printed whole.
 */
export function tableWriter(opts: WriterOptions): RowWriter {
  const rows: Row[] = [];
  return {
    async write(row) {
      rows.push(row);
    },
    async end() {
      const text = opts.single ? await renderRecord(rows[0] ?? {}, opts) : await renderTable(rows, opts);
      if (text) await opts.out.write(`${text}\n`);
    },
  };
}

/** How a null looks in a table on a terminal: unlike an empty string, which stays blank. */
export const NULL_MARK = '∅';

function display(value: unknown, column: string, opts: WriterOptions): string {
  const text = cellText(value);
  if (!opts.out.isTTY) return text;
  if (value === null) return NULL_MARK;
  if (opts.columnTypes?.[column] === TIMESTAMP && typeof value === 'string' && opts.now !== undefined) {
    return relativeTime(value, opts.now);
  }
  return text.replace(/\r?\n/g, '⏎').replace(/\t/g, ' ');
}

async function render(head: string[] | null, body: string[][], opts: WriterOptions): Promise<string> {
  const { default: Table } = await import('cli-table3');
  const s = style(opts.out.color);
  const table = new Table({
    head: head ? head.map((h) => s.bold(h)) : [],
    chars: BORDERLESS,
    style: { head: [], border: [], 'padding-left': 0, 'padding-right': 0 },
  });
  for (const r of body) table.push(r);
  return table
    .toString()
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n');
}

async function renderTable(rows: Row[], opts: WriterOptions): Promise<string> {
  // Columns the caller named come first (in its priority order), then any others the rows carry.
  const present = new Set(rows.flatMap((r) => Object.keys(r)));
  let columns = [...new Set([...(opts.columns ?? []).filter((c) => present.has(c)), ...present])];
  if (columns.length === 0) return '';
  let cells = rows.map((r) => columns.map((c) => display(r[c], c, opts)));
  if (opts.out.isTTY && opts.out.columns > 0) {
    const widthsOf = () => columns.map((c, i) => Math.max(displayWidth(c), ...cells.map((row) => displayWidth(row[i]))));
    let natural = widthsOf();
    // Ids are for copying: never cut them, only abbreviate them (a prefix `get` accepts) when
    // the whole table does not fit.
    const fixed = columns.map((c) => c === 'id' || c.endsWith('.id') || opts.columnTypes?.[c] === 'uuid');
    if (natural.reduce((sum, w) => sum + w + GAP, -GAP) > opts.out.columns) {
      cells = abbreviateIds(cells, fixed);
      natural = widthsOf();
    }
    const widths = fitWidths(natural, opts.out.columns, GAP, fixed);
    if (widths.length < columns.length) {
      const hidden = columns.slice(widths.length);
      opts.notice?.(`${hidden.length} more field${hidden.length === 1 ? '' : 's'} not shown (${hidden.join(', ')}); choose with --select, or use -o json`);
      columns = columns.slice(0, widths.length);
    }
    cells = cells.map((row) => widths.map((w, i) => truncate(row[i], w)));
    return render(columns.map((c, i) => truncate(c, widths[i])), cells, opts);
  }
  return render(columns, cells, opts);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The uuids of one column cut to a prefix `get` accepts, followed by `…`: the shortest that tells
 * them apart (as git abbreviates commits) plus four hex digits, at least 8 characters. A column
 * whose ids only differ at the end stays whole.
 * @example abbreviate(['1ab00001-ce6c-400d-…', '1ab00001-1174-45bb-…']) // ['1ab00001-ce6c-4…', '1ab00001-1174-4…']
 */
export function abbreviate(ids: string[]): string[] {
  const distinct = [...new Set(ids.filter((v) => UUID.test(v)))];
  let n = 1;
  while (n < 36 && new Set(distinct.map((v) => v.slice(0, n).toLowerCase())).size < distinct.length) n++;
  // Four more hex digits than the rows shown need, so that rows not shown (other pages, the rest
  // of the collection) are unlikely to share the prefix; never fewer than 8 characters.
  for (let extra = 0; extra < 4 && n < 36; n++) if (distinct.some((v) => v[n] !== '-')) extra++;
  n = Math.max(n, 8);
  if (n >= 35) return ids;
  return ids.map((v) => (UUID.test(v) ? `${v.slice(0, n)}…` : v));
}

/** The table's cells with the uuids of the id columns abbreviated. */
function abbreviateIds(cells: string[][], idColumns: boolean[]): string[][] {
  const out = cells.map((row) => [...row]);
  idColumns.forEach((isId, i) => {
    if (!isId) return;
    const short = abbreviate(cells.map((row) => row[i]));
    out.forEach((row, r) => (row[i] = short[r]));
  });
  return out;
}

async function renderRecord(row: Row, opts: WriterOptions): Promise<string> {
  const keys = Object.keys(row);
  if (keys.length === 0) return '';
  const keyWidth = Math.max(...keys.map(displayWidth));
  const s = style(opts.out.color);
  const valueWidth = opts.out.isTTY && opts.out.columns > 0 ? Math.max(opts.out.columns - keyWidth - GAP, 10) : Infinity;
  const body = keys.map((k) => {
    const v = display(row[k], k, opts);
    return [s.bold(k), valueWidth === Infinity ? v : truncate(v, valueWidth)];
  });
  return render(null, body, opts);
}
