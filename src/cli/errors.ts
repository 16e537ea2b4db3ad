import { ConnectionError, PlainHttpError, ProxySettingError, ServiceError, TimeoutError } from '../client/errors.js';
import { ImportError, nextStepOf } from '../import/types.js';
import type { Style } from '../io/style.js';

/** Exit codes, documented in `catalog --help` and the README. */
export const EXIT = { ok: 0, service: 1, usage: 2, partial: 3, auth: 4, findings: 5, interrupted: 130 } as const;

/** The command line was wrong: bad flag, unknown field, bad value, missing confirmation. Exit 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
  constructor(
    message: string,
    readonly hint?: string,
  ) {
    super(message);
  }
}

/** The record asked for does not exist. Exit 1. */
export class NotFoundError extends Error {
  override readonly name = 'NotFoundError';
}

/** Some rows of a bulk operation failed while others went in (import). Exit 3. */
export class PartialFailure extends Error {
  override readonly name = 'PartialFailure';
}

/** A command stopped on SIGINT/SIGTERM after leaving things resumable (import: a checkpoint) or clean (export). Exit 130. */
export class Interrupted extends Error {
  override readonly name = 'Interrupted';
}

/** `catalog check` found what --fail-on counts: not a failure of the tool, but CI must see it. Exit 5. */
export class FindingsFound extends Error {
  override readonly name = 'FindingsFound';
}

interface CommanderLike {
  code: string;
  exitCode: number;
}

const isCommanderError = (err: unknown): err is CommanderLike =>
  typeof err === 'object' && err !== null && typeof (err as CommanderLike).code === 'string' && (err as CommanderLike).code.startsWith('commander.');

/** A grammar error thrown while compiling flags (duck-typed so this module stays light). */
const isGrammarError = (err: unknown) => err instanceof Error && !(err instanceof ServiceError) && (err as { code?: string }).code === 'PGRST100';

/** The one place that maps an error to an exit code. */
export function exitCodeFor(err: unknown): number {
  if (isCommanderError(err)) return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
  // a data directory, lock or log that is not safely the user's (src/holder/lock.ts): fix it, then run again;
  // https:// to a plain-HTTP server: the URL given is wrong, as an unparseable one is
  if (err instanceof UsageError || isGrammarError(err) || err instanceof ProxySettingError || err instanceof PlainHttpError || (err instanceof Error && err.name === 'UnsafeDirError')) return EXIT.usage;
  // the import engine says whose fault (a flag, a header, the wrong file: usage); the exit code is decided here
  if (err instanceof ImportError) return err.kind === 'usage' ? EXIT.usage : EXIT.service;
  if (err instanceof PartialFailure) return EXIT.partial;
  if (err instanceof FindingsFound) return EXIT.findings;
  // An interrupted command (Ctrl-C during an import, after its checkpoint) exits as a shell expects.
  if (err instanceof Interrupted) return EXIT.interrupted;
  if (err instanceof ServiceError) return err.status === 401 || err.status === 403 ? EXIT.auth : EXIT.service;
  // a paged read refused (client/pages.ts ExportError, matched by name: that module stays out of every command's start)
  if (err instanceof Error && err.name === 'ExportError') return [401, 403].includes((err as Error & { status?: number }).status ?? 0) ? EXIT.auth : EXIT.service;
  return EXIT.service;
}

/** What to tell the user about an error, as lines for stderr (without trailing newline). */
export function describeError(err: unknown, s: Style, opts: { tokenGiven?: boolean; verbose?: boolean } = {}): string[] {
  const lines = describeOnly(err, s, opts);
  const next = nextStepOf(err);
  return next ? [...lines, `  ${s.dim('hint:')} ${next}`] : lines;
}

function describeOnly(err: unknown, s: Style, opts: { tokenGiven?: boolean; verbose?: boolean }): string[] {
  const head = (msg: string) => `${s.red('error:')} ${msg}`;
  const hint = (h: string) => `  ${s.dim('hint:')} ${h}`;
  if (err instanceof UsageError) return [head(err.message), ...(err.hint ? [hint(err.hint)] : [])];
  if (err instanceof FindingsFound) return [`${s.red('check failed:')} ${err.message}`];
  if (isGrammarError(err)) {
    const e = err as Error & { details?: string | null; hint?: string | null };
    return [head(e.message), ...(e.details ? [`  ${s.dim('details:')} ${e.details}`] : []), ...(e.hint ? [hint(e.hint)] : [])];
  }
  if (err instanceof TimeoutError) {
    return [head(err.message), hint(`pass --timeout SECONDS (or set CATALOG_TIMEOUT) to wait longer than ${err.seconds} s; or is --url / CATALOG_URL the service?`)];
  }
  if (err instanceof ProxySettingError) return [head(err.message), hint('check HTTPS_PROXY, HTTP_PROXY and ALL_PROXY (and their lowercase forms)')];
  if (err instanceof ConnectionError && err.via) {
    return [head(err.message), hint(`check HTTPS_PROXY / HTTP_PROXY (or list the service's host in NO_PROXY to reach it directly); the service is ${err.url}`)];
  }
  if (err instanceof ConnectionError) {
    if (err.unsure) return [head(err.message), hint(`look at what is there (catalog … list, get) before sending it again`)];
    return [head(err.message), hint(`is the service running? Start one with \`catalog serve\`, or check --url / CATALOG_URL (now ${err.url})`)];
  }
  if (err instanceof ServiceError) {
    const code = [err.code, `HTTP ${err.status}`].filter(Boolean).join(', ');
    const lines = [head(`${err.message} (${code})`)];
    if (err.details) lines.push(`  ${s.dim('details:')} ${err.details}`);
    if (err.hint) lines.push(hint(err.hint));
    if (err.status === 401) {
      lines.push(hint(opts.tokenGiven ? 'the service rejected the token: check --token / CATALOG_TOKEN or the profile' : 'this needs credentials: pass --token (or CATALOG_TOKEN), or use a --profile that has one'));
    } else if (err.status === 403) {
      lines.push(hint('the token is valid but its role may not do this; ask for a token with more rights'));
    }
    if (opts.verbose && err.request) lines.push(`  ${s.dim('request:')} ${err.request}`);
    return lines;
  }
  if (err instanceof NotFoundError || err instanceof PartialFailure) return [head(err.message)];
  // An interrupt the user asked for (Ctrl-C) is not an error: say what happened, without "error:".
  if (err instanceof Interrupted) return [err.message];
  const e = err instanceof Error ? err : new Error(String(err));
  return [head(e.message), ...(opts.verbose && e.stack ? [s.dim(e.stack)] : [])];
}
