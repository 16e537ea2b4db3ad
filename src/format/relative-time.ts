const UNITS: Array<[string, number]> = [
  ['year', 365 * 24 * 3600], ['month', 30 * 24 * 3600], ['day', 24 * 3600], ['hour', 3600], ['minute', 60],
];

/**
 * A timestamp as people say it ("3 minutes ago", "in 2 days"); the input unchanged when it is not a date.
 * @example relativeTime('2024-01-01T00:00:00Z', Date.parse('2024-01-01T00:05:00Z')) // '5 minutes ago'
 */
export function relativeTime(iso: string, now: number): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  const secs = Math.round((now - t) / 1000);
  const abs = Math.abs(secs);
  if (abs < 45) return 'just now';
  for (const [unit, size] of UNITS) {
    if (abs >= size * 0.95) {
      const n = Math.max(1, Math.round(abs / size));
      const label = `${n} ${unit}${n === 1 ? '' : 's'}`;
      return secs >= 0 ? `${label} ago` : `in ${label}`;
    }
  }
  return secs >= 0 ? 'just now' : 'in a minute';
}
