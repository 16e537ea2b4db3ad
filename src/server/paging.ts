import type { Query, RangeHeader } from '../grammar/types.js';
import { ApiError } from './errors.js';

/**
 * Paging rules shared by the request stage (the checks PostgREST makes before it reads a body)
 * and the plan stage (the root window a read asks the database for).
 */

export function limitError(): ApiError {
  return new ApiError(416, 'PGRST103', 'Requested range not satisfiable', { details: 'Limit should be greater than or equal to zero.' });
}

/** The root page: limit/offset intersected with the Range header, capped by max rows. */
export function rootWindow(q: Query, range: RangeHeader | null, maxRows?: number): { limit?: number; offset: number } {
  const p = q.page.find((x) => x.path.length === 0);
  if (p?.limit !== undefined && p.limit < 0) throw limitError();
  let lower = p?.offset !== undefined && p.offset > 0 ? p.offset : 0;
  let upper = p?.limit !== undefined ? lower + p.limit - 1 : Infinity;
  if (range) {
    if (range.to !== undefined && range.from > range.to) {
      throw new ApiError(416, 'PGRST103', 'Requested range not satisfiable', {
        details: 'The lower boundary must be lower than or equal to the upper boundary in the Range header.',
      });
    }
    lower = Math.max(lower, range.from);
    upper = Math.min(upper, range.to ?? Infinity);
  }
  let limit = upper === Infinity ? undefined : Math.max(0, upper - lower + 1);
  if (maxRows !== undefined) limit = limit === undefined ? maxRows : Math.min(limit, maxRows);
  return { limit, offset: lower };
}

/**
 * The paging checks PostgREST makes before it reads the body (reference §1 step 6): the Range and
 * limit of a read (416), limit/offset on PUT (PGRST114), a limit without order on PATCH/DELETE (PGRST109).
 */
export function checkPaging(method: string, q: Query, range: RangeHeader | null): void {
  const rootPage = q.page.find((p) => p.path.length === 0);
  const hasPage = rootPage !== undefined && (rootPage.limit !== undefined || rootPage.offset !== undefined);
  if (method === 'GET' || method === 'HEAD') rootWindow(q, range);
  else if (method === 'PUT' && hasPage) throw new ApiError(400, 'PGRST114', 'limit/offset querystring parameters are not allowed for PUT');
  else if ((method === 'PATCH' || method === 'DELETE') && hasPage && !q.order.some((o) => o.path.length === 0 && o.terms.length > 0)) {
    throw new ApiError(400, 'PGRST109', "A 'limit' was applied without an explicit 'order'", { hint: "Apply an 'order' using unique column(s)" });
  }
}

