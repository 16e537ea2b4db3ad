import { ImportError } from '../types.js';

/** A `--date-format`: turns a date cell written that way into an ISO date. */
export interface DateFormat {
  /** The format as given, upper-cased (`DD/MM/YYYY`). */
  readonly spec: string;
  /** The cell as `YYYY-MM-DD`, or an error naming the cell and the format. ISO cells pass as they are. */
  convert(text: string): { iso: string } | { error: string };
}

const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;

/** The formats `--date-format` names in help and messages. */
export const DATE_FORMAT_EXAMPLES = ['DD/MM/YYYY', 'MM/DD/YYYY', 'DD.MM.YYYY', 'DD-MM-YYYY', 'YYYY/MM/DD'];

function validDate(y: number, m: number, d: number): boolean {
  if (m < 1 || m > 12 || d < 1) return false;
  const days = new Date(Date.UTC(y, m, 0)).getUTCDate();
  return d <= days;
}

const pad = (n: number, w: number) => String(n).padStart(w, '0');

/**
 * Parses a `--date-format`: day (`DD` or `D`), month (`MM` or `M`) and a four-digit year (`YYYY`)
 * in any order, separated by `/`, `.`, `-` or a space. Both `DD` and `D` accept one or two digits.
 * @example parseDateFormat('DD/MM/YYYY').convert('03/04/2024') // { iso: '2024-04-03' }
 */
export function parseDateFormat(spec: string): DateFormat {
  const upper = spec.trim().toUpperCase();
  const parts = upper.split(/([/.\- ])/);
  const order: ('D' | 'M' | 'Y')[] = [];
  let pattern = '^';
  for (const p of parts) {
    if (p === '/' || p === '.' || p === '-' || p === ' ') pattern += `\\${p}`;
    else if (p === 'DD' || p === 'D') (order.push('D'), (pattern += '(\\d{1,2})'));
    else if (p === 'MM' || p === 'M') (order.push('M'), (pattern += '(\\d{1,2})'));
    else if (p === 'YYYY') (order.push('Y'), (pattern += '(\\d{4})'));
    else throw new ImportError(`--date-format "${spec}" is not a date format: use day, month and year like ${DATE_FORMAT_EXAMPLES.join(', ')}`, 'usage');
  }
  if (order.length !== 3 || new Set(order).size !== 3) {
    throw new ImportError(`--date-format "${spec}" needs a day, a month and a four-digit year once each (e.g. ${DATE_FORMAT_EXAMPLES[0]})`, 'usage');
  }
  const re = new RegExp(`${pattern}$`);
  return {
    spec: upper,
    convert(text) {
      const t = text.trim();
      if (ISO_DATE.test(t)) return { iso: t };
      const m = re.exec(t);
      if (!m) return { error: `"${text}" is not a date written ${upper}` };
      const v = { D: 0, M: 0, Y: 0 };
      order.forEach((k, i) => (v[k] = Number(m[i + 1])));
      if (!validDate(v.Y, v.M, v.D)) return { error: `"${text}" is not a date (read as ${upper}: day ${v.D}, month ${v.M})` };
      return { iso: `${pad(v.Y, 4)}-${pad(v.M, 2)}-${pad(v.D, 2)}` };
    },
  };
}

const DAY_MONTH = /^(\d{1,2})([/.\-])(\d{1,2})\2(\d{4})$/;

/**
 * Which order a date written with two small numbers first must be in: `day` when the first is over
 * 12 (24/12/1975), `month` when the second is, null when either reading works or it is no such date.
 * @example dateOrder('24/12/1975') // 'day'
 */
export function dateOrder(text: string): 'day' | 'month' | null {
  const m = DAY_MONTH.exec(text.trim());
  if (!m) return null;
  const [a, b] = [Number(m[1]), Number(m[3])];
  if (a > 12 && a <= 31 && b >= 1 && b <= 12) return 'day';
  if (b > 12 && b <= 31 && a >= 1 && a <= 12) return 'month';
  return null;
}

/**
 * Without `--date-format`, a date cell that reads two ways (`03/04/2024`: 3 April or March 4) is
 * never guessed: this returns the message refusing the file, naming both flags. Null for any
 * other cell: ISO dates, and day-month dates that read one way only (`25/12/2024`), which the
 * service's rules reject row by row as before ("use YYYY-MM-DD").
 * @example unreadableDate('03/04/2024', 'birthdate', 7) // 'line 7: the date "03/04/2024" … could be day 3 of month 4 or month 3, day 4 …'
 */
export function unreadableDate(text: string, column: string, line: number): string | null {
  const m = DAY_MONTH.exec(text.trim());
  if (!m) return null;
  const [a, sep, b] = [Number(m[1]), m[2], Number(m[3])];
  if (a > 12 || b > 12 || a === b || a === 0 || b === 0) return null;
  const flags = `--date-format DD${sep}MM${sep}YYYY or --date-format MM${sep}DD${sep}YYYY`;
  return `line ${line}: the date "${text}" in column "${column}" could be day ${a} of month ${b} or month ${a}, day ${b}: say how dates are written with ${flags}.`;
}
