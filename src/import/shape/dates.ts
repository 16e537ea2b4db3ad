import type { DateFormat } from './date-format.js';
import { dateOrder, unreadableDate } from './date-format.js';
import type { FieldResolver } from './mapping.js';
import { ImportError, type SourceRecord } from '../types.js';
import type { RowFault } from './check.js';

/** A record with some cells replaced (dates written the `--date-format` way, now ISO). */
class Converted implements SourceRecord {
  constructor(
    readonly index: number,
    readonly line: number,
    readonly cells: string[] | undefined,
    readonly headers: string[] | undefined,
    private readonly vals: Record<string, unknown> | null,
  ) {}

  get values(): Record<string, unknown> {
    if (this.vals) return this.vals;
    const out: Record<string, unknown> = {};
    const h = this.headers ?? [];
    for (let i = 0; i < h.length; i++) out[h[i]] = this.cells?.[i];
    return out;
  }
}

/**
 * The date stage of shaping: with `--date-format`, date columns' cells written that way become ISO
 * dates (a cell that is not a date in that form rejects its row, naming it); without it, a cell
 * written day-and-month first (`03/04/2024`) refuses the whole import (`refuse`, called by the
 * scan pass before anything is sent): such a date is never guessed.
 */
export class DateCells {
  private indexes: number[] | null = null;
  private forHeaders: string[] | null = null;

  constructor(
    private readonly resolver: FieldResolver,
    readonly format: DateFormat | null,
    private readonly inputName: string,
  ) {}

  /** Positions of the date columns among a header row (cached per header row). */
  private dateIndexes(headers: string[]): number[] {
    if (this.forHeaders !== headers) {
      this.forHeaders = headers;
      this.indexes = [];
      headers.forEach((h, i) => {
        if (this.resolver.resolve(h)?.type === 'date') this.indexes!.push(i);
      });
    }
    return this.indexes!;
  }

  /** The date cells of a record: [source key, text]. */
  private *cells(rec: SourceRecord): Generator<[string, string, number]> {
    if (rec.cells && rec.headers) {
      for (const i of this.dateIndexes(rec.headers)) {
        const t = rec.cells[i];
        if (typeof t === 'string' && t !== '') yield [rec.headers[i], t, i];
      }
      return;
    }
    for (const key in rec.values) {
      const v = rec.values[key];
      if (typeof v === 'string' && v !== '' && this.resolver.resolve(key)?.type === 'date') yield [key, v, -1];
    }
  }

  /** Per date column: its first cell that reads either way, and a cell that can only be day first or month first. */
  private readonly seen = new Map<string, { ambiguous?: string; day?: [string, number]; month?: [string, number] }>();

  /**
   * Without `--date-format`, during the scan: notes each date column's first day-or-month cell and
   * the cells that settle its order (24/12/1975 is day first). `settle()` then refuses the import.
   */
  refuse(rec: SourceRecord): void {
    if (this.format || rec.error) return;
    for (const [key, text] of this.cells(rec)) {
      const order = dateOrder(text);
      const why = order ? null : unreadableDate(text, key, rec.line);
      if (!order && !why) continue;
      const col = this.seen.get(key) ?? {};
      if (order) col[order] ??= [text, rec.line];
      else col.ambiguous ??= why!;
      this.seen.set(key, col);
    }
  }

  /**
   * After the scan: a column with a cell that reads either way refuses the import before anything
   * is sent (a date is never guessed), naming the cell and, when the column holds one, a cell that
   * settles the order (`24/12/1975` elsewhere in it: it is written day first) and the flag to pass.
   */
  settle(): void {
    for (const col of this.seen.values()) {
      if (!col.ambiguous) continue;
      const [settled, order] = col.day && !col.month ? [col.day, 'day'] : col.month && !col.day ? [col.month, 'month'] : [null, null];
      const sep = /\d([/.\-])\d/.exec(settled?.[0] ?? '')?.[1] ?? '/';
      const evidence = settled
        ? ` The same column has "${settled[0]}" (line ${settled[1]}), which can only be ${order} first: pass --date-format ${order === 'day' ? `DD${sep}MM${sep}YYYY` : `MM${sep}DD${sep}YYYY`}.`
        : '';
      throw new ImportError(`${this.inputName}: ${col.ambiguous} Nothing was imported.${evidence}`, 'usage');
    }
  }

  /**
   * The record with its date cells as ISO dates: an xlsx cell holding a plain number as the Excel
   * serial date it stands for, and with `--date-format` a cell written that way; or the fault of
   * the first that is not a date in the format (or an xlsx date-time whose time is not midnight).
   */
  convert(rec: SourceRecord): SourceRecord | RowFault {
    const format = this.format;
    if ((!format && !rec.dateOf) || rec.error) return rec;
    let cells: string[] | null = null;
    let values: Record<string, unknown> | null = null;
    for (const [key, text, i] of this.cells(rec)) {
      const cell = i >= 0 ? rec.dateOf?.(i) : undefined;
      const r = cell !== undefined ? (typeof cell === 'string' ? { iso: cell } : cell) : format ? format.convert(text) : { iso: text };
      if ('error' in r) return { code: '22007', message: `column "${key}": ${r.error}` };
      if (r.iso === text) continue;
      if (i >= 0) (cells ??= [...rec.cells!])[i] = r.iso;
      else (values ??= { ...rec.values })[key] = r.iso;
    }
    if (!cells && !values) return rec;
    return new Converted(rec.index, rec.line, cells ?? rec.cells, rec.headers, values);
  }
}
