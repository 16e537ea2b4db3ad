import { isIP } from 'node:net';

/**
 * What counts as this machine's loopback, for the three places that ask: the service refusing to
 * listen off loopback without authentication (server/listen.ts), a private holder refusing a
 * foreign `Host` (holder/guard.ts, against DNS rebinding) and the proxy rule that always reaches
 * loopback directly (client/proxy.ts). One predicate on a host name or address, and one parser
 * that takes a `Host` header value apart; each caller says which forms it takes.
 */

/**
 * The host of a `Host` header value (or a URL's authority without user info): lowercased, an IPv6
 * address without its brackets, the port (up to five digits) dropped; null when the value is not
 * `name[:port]` or `[address][:port]` (an IPv6 address without brackets is not a host).
 * @example hostOfHeader(' LOCALHOST:3000 ') // 'localhost'
 * @example hostOfHeader('[::1]:8080') // '::1'
 * @example hostOfHeader('::1') // null
 */
export function hostOfHeader(value: string | undefined): string | null {
  if (value === undefined) return null;
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]+))(?::\d{1,5})?$/.exec(value.trim());
  return m ? (m[1] ?? m[2]).toLowerCase() : null;
}

/**
 * Whether a host name or address (as it is: no brackets, no port, no case folding) names this
 * machine's loopback: `localhost`, `::1`, or an IPv4 address in 127.0.0.0/8 written as four
 * decimal numbers of 0–255 (`127.1`, `0x7f.0.0.1` or `127.000.0.1` are not: a URL parser rewrites
 * them, but here they are only names). With `subdomains`, `*.localhost` too (RFC 6761 keeps that
 * name on this machine; only the proxy rule takes it).
 * @example isLoopbackName('127.0.0.1') // true
 * @example isLoopbackName('127.0.0.1.evil.com') // false
 * @example isLoopbackName('app.localhost', { subdomains: true }) // true
 */
export function isLoopbackName(name: string, opts: { subdomains?: boolean } = {}): boolean {
  if (name === 'localhost' || name === '::1') return true;
  if (opts.subdomains && name.endsWith('.localhost')) return true;
  return isIP(name) === 4 && name.startsWith('127.');
}
