import { ImportError, type SourceRecord } from '../types.js';
import { MAX_RECORD_BYTES } from './input.js';
import type { Merge } from './xlsx-bounds.js';
import { columnName, Kind, type SheetRow } from './xlsx-sheet.js';

/**
 * Workbooks as people make them: a title above the header, notes on the first sheet, cells merged
 * down a column. The header is the first row with cells, or the row `--header-row` names (rows
 * above it are skipped); when that row looks like a title, what the header then is refused
 * for (an unknown field, an empty header cell) says which row seems to be the header. Merged
 * cells are filled: each cell of a range merged down one column takes the range's value (what
 * the sheet shows); a merged range spanning columns in the data, or joining the header to the
 * rows below, is refused, naming it, since which field it belongs to is a guess.
 */

/** Rows looked at after the first row with cells, to tell a title from a header. */
const LOOKAHEAD_ROWS = 10;
/** …and at most this much of their text. */
const LOOKAHEAD_CHARS = 1024 * 1024;

/** A data row laid out to the header's width: its cells in place, cells past the width after them (no gap kept), and how wide it was. */
export interface LaidOut {
  cells: string[];
  kinds: Kind[];
  /** One past the row's last non-empty column. */
  found: number;
}

/**
 * A sparse sheet row as cells in place, `width` wide: the cost is the width plus the row's own
 * cells, never the column of a stray far cell (a cell at XFD adds one cell, not 16,384).
 */
export function layOut(row: SheetRow, width: number): LaidOut {
  const cells: string[] = new Array<string>(width).fill('');
  const kinds: Kind[] = [];
  let found = 0;
  for (let i = 0; i < row.cols.length; i++) {
    const col = row.cols[i];
    found = Math.max(found, col + 1);
    if (col < width) {
      cells[col] = row.texts[i];
      if (row.kinds[i] !== Kind.Text) kinds[col] = row.kinds[i];
    } else cells.push(row.texts[i]);
  }
  return { cells, kinds, found };
}

/**
 * The row that seems to be the header when `head` looks like a title: the first row below it
 * with more cells, all text, side by side, none repeated; else null.
 * @example headerBelow(row 1: "Catalog 2024", [row 2: empty, row 3: title, isrc_code]) // row 3
 */
function headerBelow(head: SheetRow, below: SheetRow[]): SheetRow | null {
  const wider = below.find((r) => r.cols.length > head.cols.length);
  if (!wider) return null;
  const cols = [...wider.cols].sort((a, b) => a - b);
  const side = cols[cols.length - 1] - cols[0] + 1 === cols.length;
  return side && wider.kinds.every((k) => k === Kind.Text) && new Set(wider.texts).size === wider.texts.length ? wider : null;
}

/** Fills merged cells down their column in the data rows; see the module comment. */
export class MergeFill {
  private ranges: Merge[] = [];
  private next = 0;
  private active: Array<{ m: Merge; value: string; kind: Kind | undefined }> = [];

  constructor(
    private readonly merges: Merge[],
    private readonly name: string,
    private readonly sheet: string,
  ) {}

  /** The merged range a cell is part of (0-based column). */
  covering(row: number, col: number): Merge | undefined {
    return this.merges.find((m) => m.top <= row && row <= m.bottom && m.left <= col && col <= m.right);
  }

  /**
   * The header is row `header`, `width` cells wide: the merges below it are checked and readied.
   * Merges wholly right of the header hold no field and are left alone; merges that overlap are
   * refused, as Excel refuses them, so at most one range fills a cell.
   */
  start(header: number, width: number): void {
    const data = this.merges.filter((m) => m.bottom > header && m.left < width);
    const list = (ms: Merge[]) => ms.slice(0, 5).map((m) => m.ref).join(', ') + (ms.length > 5 ? ` and ${ms.length - 5} more` : '');
    const refuse = (ms: Merge[], why: string) => new ImportError(`${this.name}: the merged cells ${list(ms)} (sheet "${this.sheet}") ${why}. Nothing was imported.`, 'usage');
    const joined = data.filter((m) => m.top <= header);
    if (joined.length) throw refuse(joined, `join the header row (row ${header}) to the rows below: unmerge them, then import again`);
    const wide = data.filter((m) => m.right > m.left);
    if (wide.length) {
      throw refuse(wide, 'span several columns of data, so which field holds the value is unclear: unmerge them and put the value in its column, then import again (cells merged down one column are filled)');
    }
    const byPlace = [...data].sort((a, b) => a.left - b.left || a.top - b.top);
    const overlap = byPlace.filter((m, i) => i > 0 && byPlace[i - 1].left === m.left && byPlace[i - 1].bottom >= m.top);
    if (overlap.length) throw refuse(overlap, 'overlap other merged cells, which no spreadsheet program writes: the file is damaged');
    this.ranges = data.sort((a, b) => a.top - b.top);
  }

  /** A data row with cells of its own, laid out: each merged range over it gives its cell the range's value. */
  apply(n: number, row: LaidOut): void {
    while (this.next < this.ranges.length && this.ranges[this.next].top <= n) {
      const m = this.ranges[this.next++];
      const own = m.top === n;
      this.active.push({ m, value: own ? row.cells[m.left] : '', kind: own ? row.kinds[m.left] : undefined });
    }
    if (this.active.length === 0) return;
    if (this.active.some((a) => a.m.bottom < n)) this.active = this.active.filter((a) => a.m.bottom >= n);
    for (const { m, value, kind } of this.active) {
      if (m.top === n) continue;
      row.cells[m.left] = value;
      if (kind === undefined) delete row.kinds[m.left];
      else row.kinds[m.left] = kind;
      if (value !== '') row.found = Math.max(row.found, m.left + 1);
    }
  }
}

/** How the header is found and records made. */
export interface HeaderOptions {
  name: string;
  headerRow?: number;
  date1904: boolean;
  fill: MergeFill;
  /** Said with a refused header: the workbook's other sheets. */
  advice?: string;
  make(index: number, line: number, row: LaidOut, headers: string[], date1904: boolean, advice: string | undefined): SourceRecord;
}

/** Takes a sheet's rows in order: finds the header, then makes every later row with cells a record. */
export class HeaderFinder {
  headers: string[] | null = null;
  private head: SheetRow | null = null;
  private pending: SheetRow[] = [];
  private pendingChars = 0;
  private index = 0;
  private advice: string | undefined;

  /** Records made so far. */
  get made(): number {
    return this.index;
  }

  constructor(private readonly o: HeaderOptions) {}

  *take(row: SheetRow): Generator<SourceRecord> {
    const length = row.texts.reduce((n, c) => n + c.length, 0);
    // a row of shared strings, each within the limit, can still add up past it
    if (length > MAX_RECORD_BYTES) throw new ImportError(`${this.o.name}: row ${row.number} is longer than 64 MiB, the largest record an import takes (the service's body limit)`, 'usage');
    if (this.headers) return yield* this.record(row);
    if (this.head) {
      this.pending.push(row);
      this.pendingChars += length;
      if (this.pending.length >= LOOKAHEAD_ROWS || this.pendingChars > LOOKAHEAD_CHARS) yield* this.settle();
      return;
    }
    const wanted = this.o.headerRow;
    if (wanted !== undefined && row.number < wanted) return; // a title, notes: above the header
    const empty = row.cols.length === 0 && !row.error;
    if (wanted !== undefined && (row.number > wanted || empty)) throw this.noHeader(wanted);
    if (empty) return;
    this.head = row;
  }

  /** The end of the sheet: a header still waiting for its lookahead is settled. */
  *finish(): Generator<SourceRecord> {
    if (this.head && !this.headers) yield* this.settle();
    if (!this.head && this.o.headerRow !== undefined) throw this.noHeader(this.o.headerRow);
  }

  private noHeader(wanted: number): ImportError {
    return new ImportError(`${this.o.name}: row ${wanted} of the sheet is empty, and --header-row ${wanted} names it as the header`, 'usage');
  }

  private *settle(): Generator<SourceRecord> {
    const head = this.head!;
    const below = headerBelow(head, this.pending);
    const title = below ? `Row ${head.number} looks like a title; the header seems to be row ${below.number}: pass --header-row ${below.number}.` : undefined;
    this.advice = [title, this.o.advice].filter(Boolean).join(' ') || undefined;
    this.headers = this.checkHeaders(head);
    this.o.fill.start(head.number, this.headers.length);
    const rows = this.pending;
    this.pending = [];
    for (const r of rows) yield* this.record(r);
  }

  private checkHeaders(row: SheetRow): string[] {
    const say = (msg: string) => new ImportError(this.advice ? `${msg}\n  hint: ${this.advice}` : msg, 'usage');
    if (row.error) throw say(`${this.o.name}: the header row (row ${row.number}): ${row.error}`);
    const headers = layOut(row, row.cols.reduce((w, c) => Math.max(w, c + 1), 0)).cells;
    const seen = new Set<string>();
    headers.forEach((h, i) => {
      if (h === '') {
        const m = this.o.fill.covering(row.number, i);
        throw say(`${this.o.name}: the header row (row ${row.number}) has an empty cell in column ${i + 1}${m ? ` (${columnName(i)}${row.number} is part of the merged cells ${m.ref})` : ''}`);
      }
      if (seen.has(h)) throw say(`${this.o.name}: the header "${h}" appears twice (row ${row.number})`);
      seen.add(h);
    });
    return headers;
  }

  private *record(row: SheetRow): Generator<SourceRecord> {
    if (row.cols.length === 0 && !row.error) return; // an empty row, like a blank line in CSV
    const headers = this.headers!;
    // Excel leaves empty cells out: a row has the header's width (its rejects line too)
    const laid = layOut(row, headers.length);
    this.o.fill.apply(row.number, laid);
    const rec = this.o.make(this.index++, row.number, laid, headers, this.o.date1904, this.advice);
    if (row.error) rec.error = row.error;
    else if (laid.found > headers.length) rec.error = `expected ${headers.length} cells as in the header row, found ${laid.found}`;
    yield rec;
  }
}
