import { BlockList, isIP } from 'node:net';
import { isLoopbackName } from '../shared/loopback.js';
import { ProxySettingError } from './errors.js';

/**
 * The proxy a request to `target` goes through, read from the environment as curl reads it, or
 * null for a direct connection:
 * - `http_proxy` for http URLs, `https_proxy` for https ones, then `all_proxy`; each in lowercase
 *   first, then uppercase (`HTTP_PROXY` only outside a CGI script, where a request's `Proxy:`
 *   header would become it: "httpoxy"). An empty value is unset.
 * - A proxy without a scheme is `http://`; without a port, 1080 (curl's default; 443 for https://).
 * - `no_proxy`/`NO_PROXY`, as curl, Go and undici read it: `*` (every host), or a list (commas or
 *   spaces) of host names, `.domain` and `*.domain` (the domain and its subdomains, as curl
 *   matches a leading dot), IP addresses and CIDR ranges, each optionally with `:port`
 *   (`[::1]:8080` for IPv6), which then only matches requests to that port.
 * Unlike curl, loopback (`localhost`, `*.localhost`, 127.0.0.0/8, ::1; src/shared/loopback.ts) is
 * always reached directly, as Go's and npm's clients do: a service on this machine is never behind
 * a remote proxy, and the embedded catalog's holder listens there.
 * @example proxyFor(new URL('https://api.example.com'), { HTTPS_PROXY: 'proxy.corp:3128' })?.href // 'http://proxy.corp:3128/'
 */
export function proxyFor(target: URL, env: Record<string, string | undefined>): URL | null {
  const host = bare(target.hostname);
  if (isLoopbackName(host, { subdomains: true })) return null;
  const scheme = target.protocol === 'https:' ? 'https' : 'http';
  const read = (name: string) => env[name] || undefined;
  const upperHttp = scheme === 'http' && env.REQUEST_METHOD ? undefined : read(`${scheme.toUpperCase()}_PROXY`);
  const raw = read(`${scheme}_proxy`) ?? upperHttp ?? read('all_proxy') ?? read('ALL_PROXY');
  if (!raw) return null;
  const port = Number(target.port) || (scheme === 'https' ? 443 : 80);
  if (bypassed(host, port, read('no_proxy') ?? read('NO_PROXY') ?? '')) return null;
  return parseProxy(raw);
}

/** A proxy setting as a URL: scheme http:// when none is given, curl's default ports. */
export function parseProxy(raw: string): URL {
  const text = /^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `http://${raw}`;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ProxySettingError(`the proxy setting ${JSON.stringify(maskPassword(raw))} is not a URL (expected e.g. http://proxy.example.com:3128)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ProxySettingError(`the proxy ${redact(url)} uses ${url.protocol.slice(0, -1)}, which catalog does not speak: give an http:// or https:// proxy`);
  }
  // URL drops a port that is the scheme's default (http://p:80): look at what was written.
  const written = /^[a-z][a-z0-9+.-]*:\/\/(?:[^@/]*@)?(?:\[[^\]]*\]|[^:/?#]*):\d/i.test(text);
  if (!written && url.protocol === 'http:') url.port = '1080';
  return url;
}

/**
 * A proxy setting that is not a URL, as it may be shown: whatever stands between the user name's
 * `:` and the last `@` before the host is masked.
 * @example maskPassword('http://ana:s3cret@proxy:bad') // 'http://ana:***@proxy:bad'
 */
export function maskPassword(raw: string): string {
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(raw)?.[0] ?? '';
  const rest = raw.slice(scheme.length);
  const at = rest.lastIndexOf('@');
  const colon = rest.indexOf(':');
  if (at < 0 || colon < 0 || colon > at) return raw;
  return `${scheme}${rest.slice(0, colon)}:***${rest.slice(at)}`;
}

/** The proxy URL as it may be shown: without its password. */
export function redact(proxy: URL): string {
  const u = new URL(proxy.href);
  if (u.password) u.password = '***';
  return u.href.replace(/\/$/, '');
}

/** The `Proxy-Authorization` header for a proxy URL with credentials (percent-decoded, as curl does). */
export function proxyAuthorization(proxy: URL): Record<string, string> {
  if (!proxy.username && !proxy.password) return {};
  const creds = `${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`;
  return { 'proxy-authorization': `Basic ${Buffer.from(creds).toString('base64')}` };
}

/** A host name or address without IPv6 brackets or a trailing dot, lowercased. */
function bare(host: string): string {
  return host.replace(/^\[|\]$/g, '').replace(/\.$/, '').toLowerCase();
}

/** One NO_PROXY entry: a name (without `*.` or `.`), an address or CIDR range, and its port (0: any). */
interface NoProxyEntry {
  name: string;
  bits: string | undefined;
  port: number;
}

/**
 * A NO_PROXY entry read: `host`, `.domain`, `*.domain`, `10.0.0.0/8`, `host:8080`, `[::1]:8080`.
 * @example noProxyEntry('*.example.com:8443') // { name: 'example.com', bits: undefined, port: 8443 }
 */
export function noProxyEntry(entry: string): NoProxyEntry {
  const [addrPort, bits] = entry.split('/');
  let addr = addrPort ?? '';
  let port = 0;
  const bracketed = /^\[([^\]]*)\](?::(\d+))?$/.exec(addr);
  const withPort = /^([^:]*):(\d+)$/.exec(addr);
  if (bracketed) [addr, port] = [bracketed[1], Number(bracketed[2] ?? 0)];
  else if (withPort) [addr, port] = [withPort[1], Number(withPort[2])];
  return { name: bare(addr).replace(/^\*?\.+/, ''), bits, port };
}

/** Whether NO_PROXY names the host and port (see proxyFor). */
function bypassed(host: string, port: number, noProxy: string): boolean {
  const hostIp = isIP(host);
  for (const raw of noProxy.split(/[,\s]+/)) {
    const entry = raw.trim();
    if (!entry) continue;
    if (entry === '*') return true;
    const { name, bits, port: only } = noProxyEntry(entry);
    if (!name || (only && only !== port)) continue;
    const entryIp = isIP(name);
    if (entryIp) {
      if (hostIp !== entryIp) continue;
      const list = new BlockList();
      const family = entryIp === 4 ? 'ipv4' : 'ipv6';
      const prefix = bits === undefined ? (entryIp === 4 ? 32 : 128) : Number(bits);
      if (!Number.isInteger(prefix)) continue;
      list.addSubnet(name, prefix, family);
      if (list.check(host, family)) return true;
    } else if (host === name || host.endsWith(`.${name}`)) {
      return true;
    }
  }
  return false;
}
