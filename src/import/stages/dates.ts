import type { DateFormat } from '../date-format.js';
import { unreadableDate } from '../date-format.js';
import type { FieldResolver } from '../mapping.js';
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

  /** Without `--date-format`: throws the refusal for a day-and-month-first date cell. */
  refuse(rec: SourceRecord): void {
    if (this.format || rec.error) return;
    for (const [key, text] of this.cells(rec)) {
      const why = unreadableDate(text, key, rec.line);
      if (why) throw new ImportError(`${this.inputName}: ${why} Nothing was imported.`, 'usage');
    }
  }

  /**
   * The record with its date cells as ISO dates: an xlsx cell holding a plain number as the Excel
   * serial date it stands for, and with `--date-format` a cell written that way; or the fault of
   * the first that is not a date in the format.
   */
  convert(rec: SourceRecord): SourceRecord | RowFault {
    const format = this.format;
    if ((!format && !rec.serialDate) || rec.error) return rec;
    let cells: string[] | null = null;
    let values: Record<string, unknown> | null = null;
    for (const [key, text, i] of this.cells(rec)) {
      const serial = i >= 0 ? rec.serialDate?.(i) : undefined;
      const r = serial !== undefined ? { iso: serial } : format ? format.convert(text) : { iso: text };
      if ('error' in r) return { code: '22007', message: `column "${key}": ${r.error}` };
      if (r.iso === text) continue;
      if (i >= 0) (cells ??= [...rec.cells!])[i] = r.iso;
      else (values ??= { ...rec.values })[key] = r.iso;
    }
    if (!cells && !values) return rec;
    return new Converted(rec.index, rec.line, cells ?? rec.cells, rec.headers, values);
  }
}
