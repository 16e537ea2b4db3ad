/** Small statistics helpers for the bench (pure). */

/** The median of numbers (mean of the middle two for even counts); NaN for none. */
export function median(xs) {
  if (!xs.length) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** The p-th percentile (0–100) by nearest rank, e.g. percentile([..], 95). */
export function percentile(xs, p) {
  if (!xs.length) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * s.length);
  return s[Math.min(s.length - 1, Math.max(0, rank - 1))];
}

/** Human row counts: 10000 → "10k", 1000000 → "1M". */
export function fmtRows(n) {
  if (n >= 1e6 && n % 1e6 === 0) return `${n / 1e6}M`;
  if (n >= 1e3 && n % 1e3 === 0) return `${n / 1e3}k`;
  return String(n);
}

/** Rate with a k suffix: 43210 → "43.2k". */
export function fmtRate(x) {
  if (!Number.isFinite(x)) return '?';
  if (x >= 1e6) return `${(x / 1e6).toFixed(2)}M`;
  if (x >= 1e3) return `${(x / 1e3).toFixed(1)}k`;
  return x.toFixed(0);
}

/** Milliseconds as "850 ms" or "12.3 s". */
export function fmtMs(ms) {
  if (!Number.isFinite(ms)) return '?';
  if (ms < 10) return `${ms.toFixed(2)} ms`;
  if (ms < 1000) return `${ms.toFixed(0)} ms`;
  return `${(ms / 1000).toFixed(ms < 10000 ? 2 : 1)} s`;
}

/** KiB as "123 MB" (MiB, rounded). */
export function fmtKb(kb) {
  if (!Number.isFinite(kb)) return '?';
  return `${Math.round(kb / 1024)} MB`;
}
