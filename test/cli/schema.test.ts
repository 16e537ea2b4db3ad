import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { schemaCacheFile } from '../../src/cli/schema/load.js';
import { openApiDocument } from '../../src/server/openapi.js';
import { tempDir } from '../support/stores.js';
import { runCli, useTestService } from './support.js';

const service = useTestService();

const rootFetches = (err: string, url: string) => err.split('\n').filter((l) => l.startsWith(`GET ${url}/ →`)).length;

describe("the service's root description", () => {
  it('is fetched once per URL, cached, and re-read with --refresh-schema', async () => {
    const cache = tempDir('schema-cache-');
    const env = { XDG_CACHE_HOME: cache };
    const first = await runCli(['--url', service.url, '-v', 'labels', 'list'], { env });
    expect(first.code).toBe(0);
    expect(rootFetches(first.err, service.url)).toBe(1);
    const second = await runCli(['--url', service.url, '-v', 'labels', 'list'], { env });
    expect(rootFetches(second.err, service.url)).toBe(0);
    const refreshed = await runCli(['--url', service.url, '-v', '--refresh-schema', 'labels', 'list'], { env });
    expect(rootFetches(refreshed.err, service.url)).toBe(1);
  });

  it('is cached in one file per URL (a trailing slash names the same service)', () => {
    const files = ['http://127.0.0.1:3000', 'http://127.0.0.1:3001', 'http://localhost:3000', 'https://a.example/rest/v1'].map((u) => schemaCacheFile('/c', u));
    expect(new Set(files).size).toBe(4);
    expect(schemaCacheFile('/c', 'http://127.0.0.1:3000/')).toBe(files[0]);
    expect(files[0]).toMatch(/^\/c\/schema\/[0-9a-f]{16}\.json$/);
  });

  it('is not fetched under --dry-run, which sends nothing', async () => {
    const dry = await runCli(['--url', service.url, '--dry-run', '-v', 'labels', 'list', '--where', 'name=x']);
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
