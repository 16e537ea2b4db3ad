import { parsePrefer, renderPrefer } from '../grammar/prefer.js';
import { parseContentRange, renderRange } from '../grammar/range.js';
import type { Preferences } from '../grammar/types.js';
import type { HttpRequest, ServiceClient } from './transport.js';

/** One page of a paged read. */
export interface Page {
  rows: Record<string, unknown>[];
  /** Offset of the first row. */
  from: number;
  /** Total rows the filter matches, when the service counted them. */
  total: number | null;
}

/**
 * Adds preferences to a request's Prefer header (parsed and rendered by the grammar).
 * @example withPrefer({ Prefer: 'return=minimal' }, { count: 'exact' }) // { Prefer: 'return=minimal, count=exact' }
 */
export function withPrefer(headers: Record<string, string> | undefined, prefs: Partial<Preferences>): Record<string, string> {
  const h = { ...(headers ?? {}) };
  const key = Object.keys(h).find((k) => k.toLowerCase() === 'prefer');
  const { invalid: _, ...had } = parsePrefer(key ? h[key] : null);
  if (key) delete h[key];
  h.Prefer = renderPrefer({ ...had, ...prefs });
  return h;
}

/**
 * Reads every row of a GET with the Range header, `pageSize` rows at a time, starting at
 * `offset`. The first page asks for an exact count; reading stops when the Content-Range total
 * is reached (or, when the service gives no total, at the first short page).
 */
export async function* pages(client: Pick<ServiceClient, 'request'>, req: HttpRequest, pageSize: number, offset = 0): AsyncGenerator<Page> {
  let from = offset;
  let total: number | null = null;
  for (let first = true; ; first = false) {
    const headers = { ...(first ? withPrefer(req.headers, { count: 'exact' }) : req.headers), Range: renderRange({ from, to: from + pageSize - 1 }) };
    const res = await client.request({ ...req, headers });
    const rows = JSON.parse(res.body || '[]') as Record<string, unknown>[];
    if (first) total = parseContentRange(res.headers['content-range'] ?? null)?.total ?? null;
    yield { rows, from, total };
    from += rows.length;
    if (rows.length === 0 || (total !== null ? from >= total : rows.length < pageSize)) return;
  }
}
