/**
 * The grammar stage's error. `code`/`status` default to PostgREST's query-string parse error
 * (PGRST100, 400); `message` and `details` carry PostgREST's exact texts, e.g.
 * message `"failed to parse filter (0)" (line 1, column 1)`,
 * details `unexpected "0" expecting "not" or operator (eq, gt, ...)`.
 */
export class GrammarError extends Error {
  code = 'PGRST100';
  status = 400;
  details: string | null;
  hint: string | null;

  constructor(message: string, details: string | null = null, opts: { code?: string; status?: number; hint?: string | null } = {}) {
    super(message);
    this.name = 'GrammarError';
    this.details = details;
    this.hint = opts.hint ?? null;
    if (opts.code !== undefined) this.code = opts.code;
    if (opts.status !== undefined) this.status = opts.status;
  }
}

/** PostgREST raises this (PGRST123) when a select uses `count()`/`col.sum()` and aggregates are disabled (the v12 default). */
export function aggregatesNotAllowed(): GrammarError {
  return new GrammarError('Use of aggregate functions is not allowed', null, { code: 'PGRST123' });
}
