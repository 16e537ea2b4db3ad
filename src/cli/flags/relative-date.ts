/**
 * Relative dates in filters: `today`, `yesterday`, `tomorrow`, `now`, the first day of a calendar
 * period (`this-month`, `last-month`, `this-year`, `last-year`: `release_date>=this-year`,
 * `release_date>=last-year` with `release_date<this-year` for last year's), and offsets such as
 * `-30d`, `-2y`, `+1w`, `now-6h`, `today-3mo`, `this-month-1mo`, turned into the absolute value the
 * service is sent (so a plain PostgREST reads it, and `--dry-run` shows it). Days, weeks, months and years count in the
 * local calendar (`-1mo` on 31 March is 3 March or 2 March, as Date does); hours, minutes and
 * seconds count elapsed time.
 */

const UNITS = ['y', 'mo', 'w', 'd', 'h', 'min', 's'] as const;
type Unit = (typeof UNITS)[number];

const PATTERN = /^(today|yesterday|tomorrow|now|(?:this|last)[-_ ](?:month|year))?(?:\s*([+-])\s*(\d+)\s*(y|mo|w|d|h|min|s))?$/i;

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** A local calendar date as YYYY-MM-DD. */
function localDate(d: Date): string {
  return `${pad(d.getFullYear(), 4)}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

function shifted(base: Date, sign: number, n: number, unit: Unit): Date {
  const d = new Date(base.getTime());
  switch (unit) {
    case 'y':
      d.setFullYear(d.getFullYear() + sign * n);
      break;
    case 'mo':
      d.setMonth(d.getMonth() + sign * n);
      break;
    case 'w':
      d.setDate(d.getDate() + sign * 7 * n);
      break;
    case 'd':
      d.setDate(d.getDate() + sign * n);
      break;
    default:
      d.setTime(d.getTime() + sign * n * (unit === 'h' ? 3_600_000 : unit === 'min' ? 60_000 : 1000));
  }
  return d;
}

/** The moment a relative date's word names (local midnight, or the first day of the month or year). */
function anchorDate(anchor: string, now: Date): Date {
  if (anchor === 'now') return now;
  const y = now.getFullYear();
  const mo = now.getMonth();
  switch (anchor) {
    case 'this-month':
      return new Date(y, mo, 1);
    case 'last-month':
      return new Date(y, mo - 1, 1);
    case 'this-year':
      return new Date(y, 0, 1);
    case 'last-year':
      return new Date(y - 1, 0, 1);
    default:
      return new Date(y, mo, now.getDate() + (anchor === 'yesterday' ? -1 : anchor === 'tomorrow' ? 1 : 0));
  }
}

/**
 * The absolute value of a relative date for a `date` or `timestamp` field, or null when `text` is
 * not a relative date (it is then checked as an ordinary value).
 * @example resolveRelativeDate('-30d', 'date', Date.parse('2026-11-25T10:00:00')) // '2026-10-26'
 * @example resolveRelativeDate('now-6h', 'timestamp', Date.parse('2026-11-25T10:00:00Z')) // '2026-11-25T04:00:00.000Z'
 * @example resolveRelativeDate('last-year', 'date', Date.parse('2026-11-25T10:00:00')) // '2025-01-01'
 */
export function resolveRelativeDate(text: string, kind: 'date' | 'timestamp', now: number): string | null {
  const m = PATTERN.exec(text.trim());
  if (!m || (!m[1] && !m[2])) return null;
  const anchor = (m[1] ?? (kind === 'date' ? 'today' : 'now')).toLowerCase().replace(/[_ ]/, '-');
  const base = anchorDate(anchor, new Date(now));
  const at = m[2] ? shifted(base, m[2] === '-' ? -1 : 1, Number(m[3]), m[4].toLowerCase() as Unit) : base;
  return kind === 'date' ? localDate(at) : at.toISOString();
}

/** What the relative forms look like, for hints. */
export const RELATIVE_DATE_HELP = 'today, yesterday, tomorrow, now, this-month, last-month, this-year, last-year, -30d, -2w, -3mo, -2y, now-6h, today-1y';
