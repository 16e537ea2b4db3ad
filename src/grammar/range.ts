/**
 * The `Range` request header and the `Content-Range` response header (PostgREST 12.2.3, §6).
 */
import type { RangeHeader } from './types.js';

const RANGE = /^(\d+)-(\d*)$/;

/**
 * Parse `Range: from-to` / `from-`; null when absent or not of that exact form (`items=0-9` is ignored).
 * @example parseRange('10-19') // { from: 10, to: 19 }
 */
export function parseRange(header: string | null | undefined): RangeHeader | null {
  if (header == null) return null;
  const m = RANGE.exec(header);
  if (m === null) return null;
  const from = Number(m[1]);
  return m[2] === '' ? { from } : { from, to: Number(m[2]) };
}

/**
 * Render a `Range` header value.
 * @example renderRange({ from: 0, to: 24 }) // '0-24'
 */
export function renderRange(r: RangeHeader): string {
  return `${r.from}-${r.to ?? ''}`;
}

/**
 * `Content-Range` for a read: `offset-(offset+count-1)` when rows came back (and total is not 0), else `*`; `/total` or `/*`.
 * @example formatContentRange(2, 3, null) // '2-4/*'
 */
export function formatContentRange(offset: number, count: number, total: number | null): string {
  const range = count > 0 && total !== 0 ? `${offset}-${offset + count - 1}` : '*';
  return `${range}/${total === null ? '*' : total}`;
}

/**
 * Parse a `Content-Range` response header; null when absent or malformed.
 * @example parseContentRange('0-24/100') // { from: 0, to: 24, total: 100 }
 */
export function parseContentRange(h: string | null): { from?: number; to?: number; total?: number } | null {
  if (h == null) return null;
  const m = /^\s*(?:(\d+)-(\d+)|\*)\/(\d+|\*)\s*$/.exec(h);
  if (m === null) return null;
  const out: { from?: number; to?: number; total?: number } = {};
  if (m[1] !== undefined) {
    out.from = Number(m[1]);
    out.to = Number(m[2]);
  }
  if (m[3] !== '*') out.total = Number(m[3]);
  return out;
}
