/**
 * Relative dates in filters: `today`, `yesterday`, `tomorrow`, `now`, and offsets such as `-30d`,
 * `-2y`, `+1w`, `now-6h`, `today-3mo`, turned into the absolute value the service is sent (so a
 * plain PostgREST reads it, and `--dry-run` shows it). Days, weeks, months and years count in the
 * local calendar (`-1mo` on 31 March is 3 March or 2 March, as Date does); hours, minutes and
 * seconds count elapsed time.
 */

const UNITS = ['y', 'mo', 'w', 'd', 'h', 'min', 's'] as const;
type Unit = (typeof UNITS)[number];

const PATTERN = /^(today|yesterday|tomorrow|now)?(?:\s*([+-])\s*(\d+)\s*(y|mo|w|d|h|min|s))?$/i;

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

/**
 * The absolute value of a relative date for a `date` or `timestamp` field, or null when `text` is
 * not a relative date (it is then checked as an ordinary value).
 * @example resolveRelativeDate('-30d', 'date', Date.parse('2026-11-25T10:00:00')) // '2026-10-26'
 * @example resolveRelativeDate('now-6h', 'timestamp', Date.parse('2026-11-25T10:00:00Z')) // '2026-11-25T04:00:00.000Z'
 */
export function resolveRelativeDate(text: string, kind: 'date' | 'timestamp', now: number): string | null {
  const m = PATTERN.exec(text.trim());
  if (!m || (!m[1] && !m[2])) return null;
  const anchor = (m[1] ?? (kind === 'date' ? 'today' : 'now')).toLowerCase();
  let base = new Date(now);
  if (anchor !== 'now') {
    base = new Date(base.getFullYear(), base.getMonth(), base.getDate());
    if (anchor === 'yesterday') base.setDate(base.getDate() - 1);
    if (anchor === 'tomorrow') base.setDate(base.getDate() + 1);
  }
  const at = m[2] ? shifted(base, m[2] === '-' ? -1 : 1, Number(m[3]), m[4].toLowerCase() as Unit) : base;
  return kind === 'date' ? localDate(at) : at.toISOString();
}

/** What the relative forms look like, for hints. */
export const RELATIVE_DATE_HELP = 'today, yesterday, tomorrow, now, -30d, -2w, -3mo, -2y, now-6h, today-1y';
