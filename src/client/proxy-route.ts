import type { Agent as HttpAgent, ClientRequest, IncomingMessage, RequestOptions } from 'node:http';
import * as http from 'node:http';
import * as https from 'node:https';
import type { Duplex } from 'node:stream';
import * as tls from 'node:tls';
import { proxyAuthorization, redact } from './proxy.js';

/** Opens one exchange: node:http's `request(url, options, callback)` with the route's agent. */
export type Open = (url: string, options: RequestOptions, callback: (res: IncomingMessage) => void) => ClientRequest;

/** How requests reach a service through a proxy; `agent` is what close() destroys. */
export interface ProxyRoute {
  open: Open;
  agent: HttpAgent;
}

/** A proxy's refusal or a tunnel that could not be opened: a connection failure not worth retrying. */
function proxyError(proxy: URL, message: string, code = 'ECATALOG_PROXY'): NodeJS.ErrnoException {
  return Object.assign(new Error(`the proxy ${redact(proxy)} ${message}`), { code });
}

/**
 * The route to `target` through `proxy` (loaded only when a proxy is set: node:tls costs nothing
 * otherwise). An http:// service is asked through the proxy with the absolute URL as the path,
 * as curl does; an https:// one through a CONNECT tunnel, TLS end to end with the service, the
 * tunnels kept alive and pooled per service like direct connections.
 */
export function proxyRoute(target: URL, proxy: URL, maxSockets: number, connectTimeoutMs: number): ProxyRoute {
  const auth = proxyAuthorization(proxy);
  const viaTls = proxy.protocol === 'https:';
  if (target.protocol === 'https:') {
    const agent = new TunnelAgent(proxy, auth, connectTimeoutMs, { keepAlive: true, maxSockets });
    return { agent, open: (url, options, callback) => https.request(url, { ...options, agent }, callback) };
  }
  const agent = new (viaTls ? https.Agent : http.Agent)({ keepAlive: true, maxSockets });
  const request = viaTls ? https.request : http.request;
  const open: Open = (url, options, callback) =>
    request(proxy.origin, { ...options, agent, path: url, headers: { ...options.headers, host: new URL(url).host, ...auth } }, callback);
  return { agent, open };
}

/** An https agent whose connections are CONNECT tunnels through the proxy. */
class TunnelAgent extends https.Agent {
  constructor(
    private readonly proxy: URL,
    private readonly auth: Record<string, string>,
    private readonly connectTimeoutMs: number,
    options: https.AgentOptions,
  ) {
    super(options);
  }

  override createConnection(options: RequestOptions, callback?: (err: Error | null, stream: Duplex) => void): Duplex | null | undefined {
    const host = options.hostname ?? options.host ?? 'localhost';
    const port = Number(options.port) || 443;
    openTunnel(this.proxy, this.auth, host, port, this.connectTimeoutMs).then(
      (socket) => callback?.(null, tls.connect({ ...(options as tls.ConnectionOptions), socket, servername: (options as tls.ConnectionOptions).servername ?? host })),
      (err: Error) => callback?.(err, undefined as unknown as Duplex),
    );
    return undefined;
  }
}

/** `CONNECT host:port` through the proxy; resolves with the tunnel's socket once the proxy answers 200. */
function openTunnel(proxy: URL, auth: Record<string, string>, host: string, port: number, timeoutMs: number): Promise<Duplex> {
  const authority = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  const request = proxy.protocol === 'https:' ? https.request : http.request;
  return new Promise<Duplex>((resolve, reject) => {
    const req = request(proxy.origin, { method: 'CONNECT', path: authority, headers: { host: authority, ...auth }, agent: false });
    const timer = setTimeout(() => req.destroy(proxyError(proxy, `did not open a tunnel to ${authority} within ${timeoutMs / 1000} s`, 'ETIMEDOUT')), timeoutMs);
    req.once('connect', (res, socket, head) => {
      clearTimeout(timer);
      if (res.statusCode !== 200) {
        socket.destroy();
        reject(proxyError(proxy, `refused a tunnel to ${authority}: ${res.statusCode} ${res.statusMessage ?? ''}`.trim()));
        return;
      }
      if (head.length > 0) socket.unshift(head);
      resolve(socket);
    });
    req.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    req.end();
  });
}
