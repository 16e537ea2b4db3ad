import { describe, expect, it } from 'vitest';
import { resolveRelativeDate } from '../../src/cli/flags/relative-date.js';

const NOW = new Date(2026, 10, 25, 10, 30, 0).getTime(); // 25 Nov 2026, 10:30 local time

describe('relative dates', () => {
  it.each([
    ['today', '2026-11-25'],
    ['yesterday', '2026-11-24'],
    ['tomorrow', '2026-11-26'],
    ['-30d', '2026-10-26'],
    ['-2y', '2024-11-25'],
    ['-2w', '2026-11-11'],
    ['-3mo', '2026-08-25'],
    ['today-1y', '2025-11-25'],
    ['+7d', '2026-12-02'],
    ['now-6h', '2026-11-25'],
    ['now-11h', '2026-11-24'],
    ['this-month', '2026-11-01'],
    ['last-month', '2026-10-01'],
    ['this-year', '2026-01-01'],
    ['last-year', '2025-01-01'],
    ['This_Year', '2026-01-01'],
    ['this-month-1mo', '2026-10-01'],
    ['last-year+6mo', '2025-07-01'],
  ])('%s on a date field is %s', (text, date) => {
    expect(resolveRelativeDate(text, 'date', NOW)).toBe(date);
  });

  it('on a timestamp field: now-6h is six hours before now, today is local midnight', () => {
    expect(resolveRelativeDate('now-6h', 'timestamp', NOW)).toBe(new Date(NOW - 6 * 3_600_000).toISOString());
    expect(resolveRelativeDate('now', 'timestamp', NOW)).toBe(new Date(NOW).toISOString());
    expect(resolveRelativeDate('today', 'timestamp', NOW)).toBe(new Date(2026, 10, 25).toISOString());
    expect(resolveRelativeDate('-30d', 'timestamp', NOW)).toBe(new Date(2026, 9, 26, 10, 30).toISOString());
  });

  it('periods start at local midnight on a timestamp field, and January rolls back a year', () => {
    expect(resolveRelativeDate('this-year', 'timestamp', NOW)).toBe(new Date(2026, 0, 1).toISOString());
    expect(resolveRelativeDate('this-month', 'timestamp', NOW)).toBe(new Date(2026, 10, 1).toISOString());
    const january = new Date(2027, 0, 15, 9).getTime();
    expect(resolveRelativeDate('last-month', 'date', january)).toBe('2026-12-01');
    expect(resolveRelativeDate('last-year', 'date', january)).toBe('2026-01-01');
  });

  it.each(['2024-01-01', 'someday', 'this-week', 'next-year', 'thisyear', '30d', '-30', 'now-', '-5x', ''])('%s is not a relative date', (text) => {
    expect(resolveRelativeDate(text, 'date', NOW)).toBeNull();
  });
});
