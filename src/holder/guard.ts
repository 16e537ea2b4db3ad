import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { COPY_CSV, MEDIA, parseMediaType } from '../grammar/media.js';
import { hostOfHeader, isLoopbackName } from '../shared/loopback.js';
import { KEY_HEADER } from './lock.js';

/**
 * The door of a private holder: the background holder of an embedded catalog (and a command that
 * serves the catalog itself for its lifetime) answers only its owner's commands. It listens on
 * loopback TCP and asks every request for a random credential that lives only in the directory's
 * lock, a 0600 file in a 0700 directory: another Unix user cannot read it, and a web page cannot
 * send it (a custom header needs a CORS preflight, which a private holder never grants). A `Host`
 * that is not a loopback name (DNS rebinding) is refused first, and writes take only the bodies
 * the CLI sends (JSON and the COPY type), never a form or text/plain that a page can POST across
 * sites without asking.
 *
 * Loopback TCP rather than a Unix socket: commands, messages, `--dry-run` curl lines and the
 * client's keep-alive pool all speak URLs, a socket path is bounded to 107 bytes (a deep data
 * directory would not fit), and reading the key costs nothing, for it is in the lock every
 * command reads anyway. Measured: a later command against a warm holder is no slower.
 */

/** A new credential: 256 random bits. */
export function newHolderKey(): string {
  return randomBytes(32).toString('base64url');
}

/** Why a request is refused before the app sees it (PostgREST's error body shape). */
export interface Refusal {
  status: number;
  code: string;
  message: string;
  details: string;
}

/** Whether a `Host` header names this machine's loopback (a port allowed): `localhost`, `127.x.x.x`, `[::1]`. */
export function isLoopbackHost(host: string | undefined): boolean {
  const name = hostOfHeader(host);
  return name !== null && isLoopbackName(name);
}

/** Compares two credentials in constant time. */
function sameKey(given: string, key: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(key);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The bodies a private holder takes: what the CLI sends. */
const BODY_TYPES = new Set<string>([MEDIA.json, COPY_CSV]);

/** Whether a request carries a body (or says it will). */
const hasBody = (headers: IncomingHttpHeaders) => (headers['content-length'] !== undefined && headers['content-length'] !== '0') || headers['transfer-encoding'] !== undefined;

/**
 * Why a private holder refuses this request, or null when it may go on: a foreign `Host` (400), no
 * or another credential (401), a write whose body is not JSON or COPY (415).
 * @example privateRefusal({ method: 'GET', headers: { host: 'evil.example' } }, k)?.status // 400
 */
export function privateRefusal(req: { method?: string; headers: IncomingHttpHeaders }, key: string): Refusal | null {
  const { headers } = req;
  if (!isLoopbackHost(headers.host)) {
    return { status: 400, code: 'PGRST400', message: 'Bad Request', details: 'This catalog holder answers only requests addressed to localhost, 127.0.0.1 or [::1].' };
  }
  const given = headers[KEY_HEADER];
  if (typeof given !== 'string' || !sameKey(given, key)) {
    return { status: 401, code: 'PGRST302', message: 'Anonymous access is disabled', details: "This catalog holder answers only its owner's catalog commands." };
  }
  const method = (req.method ?? 'GET').toUpperCase();
  if (method === 'POST' || method === 'PATCH' || method === 'PUT' || hasBody(headers)) {
    const type = headers['content-type'];
    if (type === undefined || !BODY_TYPES.has(parseMediaType(type).type)) {
      return { status: 415, code: 'PGRST102', message: `Content-Type not acceptable: ${type ?? '(none)'}`, details: `This catalog holder takes ${[...BODY_TYPES].join(' or ')} bodies.` };
    }
  }
  return null;
}

/** An answer's headers without CORS: a private holder grants no web page anything. */
export function withoutCors(headers: Record<string, string>): Record<string, string> {
  for (const name of Object.keys(headers)) if (name.toLowerCase().startsWith('access-control-')) delete headers[name];
  return headers;
}

/** The app of a private holder: its answers carry no CORS headers (preflights included). */
export function privateApp<A extends { reply(req: never): Promise<{ headers: Record<string, string> }> }>(app: A): A {
  return {
    ...app,
    async reply(req: never) {
      const answer = await app.reply(req);
      withoutCors(answer.headers);
      return answer;
    },
  };
}
