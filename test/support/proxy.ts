import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import * as net from 'node:net';
import { join } from 'node:path';
import * as tls from 'node:tls';

/** Keeps the piped sockets to destroy at close; a peer's reset is not the test's error. */
function track(sockets: Set<Socket>, ...pair: Socket[]): void {
  for (const s of pair) {
    sockets.add(s);
    s.on('error', () => {});
    s.on('close', () => sockets.delete(s));
  }
}

/** A forward proxy on loopback for tests: plain requests with absolute URLs and CONNECT tunnels. */
export interface TestProxy {
  url: string;
  /** What it was asked, in order: `GET http://host:port/path` or `CONNECT host:port`, with `(407)` when refused. */
  seen: string[];
  close(): Promise<void>;
}

/**
 * Starts a tiny forward proxy on 127.0.0.1 (real sockets, no mock). `hosts` maps names that do not
 * resolve (catalog.test) to addresses, so a request that bypasses the proxy fails with ENOTFOUND
 * and one that reaches the service must have come through here. With `credentials` ("user:pass"),
 * a request without that Proxy-Authorization is answered 407.
 */
export async function startTestProxy(hosts: Record<string, string>, credentials?: string): Promise<TestProxy> {
  const seen: string[] = [];
  const sockets = new Set<Socket>();
  const allowed = (h: http.IncomingHttpHeaders) => !credentials || h['proxy-authorization'] === `Basic ${Buffer.from(credentials).toString('base64')}`;
  const server = http.createServer((req, res) => {
    const target = new URL(req.url ?? '/');
    const ok = allowed(req.headers);
    seen.push(`${req.method} ${target.href}${ok ? '' : ' (407)'}`);
    if (!ok) return void res.writeHead(407, { 'proxy-authenticate': 'Basic realm="test"', 'content-type': 'text/html' }).end('<h1>407</h1>');
    const headers = { ...req.headers };
    delete headers['proxy-authorization'];
    const upstream = http.request({ host: hosts[target.hostname] ?? target.hostname, port: target.port, path: target.pathname + target.search, method: req.method, headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  server.on('connect', (req: http.IncomingMessage, client: Socket) => {
    const ok = allowed(req.headers);
    seen.push(`CONNECT ${req.url}${ok ? '' : ' (407)'}`);
    if (!ok) return void client.end('HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="test"\r\nContent-Length: 0\r\n\r\n');
    const [host, port] = (req.url ?? '').split(/:(?=\d+$)/);
    const upstream = net.connect(Number(port), hosts[host ?? ''] ?? host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.pipe(client);
      client.pipe(upstream);
    });
    track(sockets, client, upstream);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: async () => {
      for (const s of sockets) s.destroy();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

/**
 * A TLS front on 127.0.0.1 for a plain HTTP service, with a certificate for `name` made by openssl
 * into `dir` (clients trust it through NODE_EXTRA_CA_CERTS=`cert`). Null when openssl is missing.
 */
export async function startTlsFront(name: string, dir: string, upstreamPort: number): Promise<{ port: number; cert: string; close(): Promise<void> } | null> {
  const key = join(dir, 'key.pem');
  const cert = join(dir, 'cert.pem');
  try {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '2', '-subj', `/CN=${name}`, '-addext', `subjectAltName=DNS:${name}`], { stdio: 'pipe' });
  } catch {
    return null;
  }
  const sockets = new Set<Socket>();
  const server = tls.createServer({ key: readFileSync(key), cert: readFileSync(cert) }, (front) => {
    const back = net.connect(upstreamPort, '127.0.0.1');
    front.pipe(back);
    back.pipe(front);
    track(sockets, front, back);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    cert,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}
