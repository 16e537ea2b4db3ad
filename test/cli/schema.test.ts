import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApiDocument } from '../../src/server/openapi.js';
import { startServer } from '../../src/server/listen.js';
import type { Store } from '../../src/store/store.js';
import { makePGliteStore, tempDir } from '../support/stores.js';
import { runCli } from './support.js';

let store: Store;
let server: { url: string; close(): Promise<void> };

beforeAll(async () => {
  store = await makePGliteStore();
  server = await startServer({ store, port: 0 });
});

afterAll(async () => {
  await server.close();
  await store.close();
});

const rootFetches = (err: string, url: string) => err.split('\n').filter((l) => l.startsWith(`GET ${url}/ →`)).length;

describe("the service's root description", () => {
  it('is fetched once per URL, cached, and re-read with --refresh-schema', async () => {
    const cache = tempDir('schema-cache-');
    const env = { XDG_CACHE_HOME: cache };
    const first = await runCli(['--url', server.url, '-v', 'labels', 'list'], { env });
    expect(first.code).toBe(0);
    expect(rootFetches(first.err, server.url)).toBe(1);
    const second = await runCli(['--url', server.url, '-v', 'labels', 'list'], { env });
    expect(rootFetches(second.err, server.url)).toBe(0);
    const refreshed = await runCli(['--url', server.url, '-v', '--refresh-schema', 'labels', 'list'], { env });
    expect(rootFetches(refreshed.err, server.url)).toBe(1);
  });

  it('is not fetched under --dry-run, which sends nothing', async () => {
    const dry = await runCli(['--url', server.url, '--dry-run', '-v', 'labels', 'list', '--where', 'name=x']);
    expect(dry.err).toBe('');
    expect(dry.out).toMatch(/^curl -X GET /);
  });
});

describe('a service reporting another interface version (a stand-in server: a different version cannot be produced otherwise)', () => {
  let other: Server;
  let url: string;

  beforeAll(async () => {
    const doc = openApiDocument();
    (doc.info as { version: string }).version = '12.4.0';
    other = createServer((req, res) => {
      if (req.url === '/') res.writeHead(200, { 'Content-Type': 'application/openapi+json; charset=utf-8' }).end(JSON.stringify(doc));
      else res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Range': '*/*' }).end('[]');
    });
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((r) => other.close(r));
  });

  it('warns once, naming both versions and the changelog', async () => {
    const env = { XDG_CACHE_HOME: tempDir('version-cache-') };
    const first = await runCli(['--url', url, 'labels', 'list'], { env });
    expect(first.code).toBe(0);
    expect(first.err).toMatch(/warning: .*reports interface version 12\.4\.0; this tool was built for 12\.2\.3.*catalog changelog/);
    const again = await runCli(['--url', url, 'labels', 'list'], { env });
    expect(again.err).toBe('');
  });

  it("names a removed field (artists' slug) when someone asks for it", async () => {
    const r = await runCli(['--url', url, 'artists', 'list', '--select', 'stage_name,slug']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/the field 'slug' was removed from artists in interface 12\.2\.3/);
  });
});
