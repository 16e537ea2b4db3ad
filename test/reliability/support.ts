import { createServer as createNetServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A TCP proxy on a loopback port in front of another address (PostgreSQL), which a test can cut
 * (every open connection reset, new ones closed at once) and restore: an outage of the database
 * without touching the database.
 */
export interface Proxy {
  port: number;
  /** The URL with host and port replaced by the proxy's. */
  via(url: string): string;
  cut(): void;
  restore(): void;
  /** Connections refused while cut. */
  refused(): number;
  close(): Promise<void>;
}

export async function startProxy(targetHost: string, targetPort: number): Promise<Proxy> {
  const open = new Set<Socket>();
  let down = false;
  let refused = 0;
  const server: Server = createNetServer((client) => {
    if (down) {
      refused++;
      client.destroy();
      return;
    }
    const upstream = connect(targetPort, targetHost);
    open.add(client);
    open.add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    via(url) {
      const u = new URL(url);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      return u.href;
    },
    cut() {
      down = true;
      for (const s of open) s.resetAndDestroy();
      open.clear();
    },
    restore() {
      down = false;
    },
    refused: () => refused,
    close() {
      for (const s of open) s.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** A free TCP port on loopback (bound and released). */
export async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Polls a check until it holds (test/support/patience.ts: bounded by PATIENCE_MS, never a speed check). */
export { eventually } from '../support/patience.js';

/**
 * A TCP proxy in front of a service that loses the answers to the first `lose` POSTs: the request
 * reaches the service (which runs it), and when its answer starts to come back the client's
 * connection is reset instead — what a client sees when the holder dies right after its commit.
 * Other requests (the CLI's schema read) pass both ways.
 */
export async function startAnswerLosingProxy(targetPort: number, lose: number): Promise<{ url: string; lost: () => number; close(): Promise<void> }> {
  let lost = 0;
  let losing = 0;
  const open = new Set<Socket>();
  const server: Server = createNetServer((client) => {
    const upstream = connect(targetPort, '127.0.0.1');
    open.add(client).add(upstream);
    let loseNext = false;
    const drop = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.on('data', (chunk: Buffer) => {
      if (losing < lose && chunk.subarray(0, 5).toString() === 'POST ') {
        losing++;
        loseNext = true;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (!loseNext) return void client.write(chunk);
      lost++;
      client.resetAndDestroy();
      upstream.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    lost: () => lost,
    close() {
      for (const s of open) s.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
