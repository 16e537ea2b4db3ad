import type { Style } from '../../io/style.js';
import { truncate } from '../../format/width.js';
import { valueText } from './fields.js';

/** One line of the summary: a field, what it was (update only) and what it will be. */
export interface SummaryRow {
  field: string;
  before?: unknown;
  after: unknown;
  /** How to show `after` instead of its raw value (a label's name beside its id). */
  shown?: string;
  /** How to show `before` instead of its raw value. */
  shownBefore?: string;
}

/** A value on one line, cut to `width` cells (never inside a grapheme cluster: src/format/width.ts). */
const cut = (s: string, width: number) => truncate(s.replace(/\r?\n/g, '⏎'), Math.max(2, width));

/** A value for the summary, cut to `width`; empty values dimmed. */
function show(v: unknown, shown: string | undefined, width: number, s: Style): string {
  if (shown !== undefined) return cut(shown, width);
  if (v === null || v === undefined) return s.dim('(empty)');
  if (v === '') return s.dim('""');
  return cut(valueText(v), width);
}

/**
 * The table shown before anything is sent: aligned field names, values cut to the terminal
 * width, and for an update the old value beside the new one.
 */
export function renderSummary(title: string, rows: SummaryRow[], s: Style, columns: number, footer?: string): string {
  const width = Math.max(...rows.map((r) => r.field.length), 5);
  const room = Math.max(20, (columns || 80) - width - 6);
  const lines = [s.bold(title)];
  if (rows.length === 0) lines.push(`  ${s.dim('(no fields given: every field takes its default)')}`);
  for (const r of rows) {
    if ('before' in r) {
      const half = Math.max(10, Math.floor((room - 3) / 2));
      lines.push(`  ${r.field.padEnd(width)}  ${show(r.before, r.shownBefore, half, s)} → ${show(r.after, r.shown, half, s)}`);
    } else {
      lines.push(`  ${r.field.padEnd(width)}  ${show(r.after, r.shown, room, s)}`);
    }
  }
  if (footer) lines.push(s.dim(footer));
  return `${lines.join('\n')}\n`;
}
