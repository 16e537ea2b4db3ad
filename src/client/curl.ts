import type { ClientRequest } from './client.js';

/**
 * Quotes a word for a POSIX shell.
 * @example shellQuote("it's") // "'it'\\''s'"
 */
export function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

const SECRET_HEADER = /^(authorization|apikey|api-key|x-api-key|cookie|proxy-authorization)$|token|secret/i;

/** A header value safe to print: credentials become `<redacted>` (the scheme of Authorization kept). */
export function redactHeader(name: string, value: string): string {
  if (!SECRET_HEADER.test(name)) return value;
  const scheme = /^(Bearer|Basic)\s+/i.exec(value);
  return scheme ? `${scheme[1]} <redacted>` : '<redacted>';
}

/**
 * The request as a curl command line, credentials redacted.
 * @example toCurl('http://h/artists?limit=1', { method: 'GET', path: '/artists' }, { accept: 'application/json' })
 * // "curl -X GET 'http://h/artists?limit=1' -H 'accept: application/json'"
 */
export function toCurl(url: string, req: ClientRequest, headers: Record<string, string>): string {
  const parts = ['curl', '-X', req.method, shellQuote(url)];
  if (req.method === 'HEAD') parts.splice(1, 2, '--head');
  for (const [k, v] of Object.entries(headers)) {
    if (k === 'user-agent') continue;
    parts.push('-H', shellQuote(`${k}: ${redactHeader(k, v)}`));
  }
  if (req.body !== undefined) {
    const body = typeof req.body === 'string' ? req.body : Buffer.from(req.body).toString('utf8');
    parts.push('--data-binary', shellQuote(body));
  }
  return parts.join(' ');
}
