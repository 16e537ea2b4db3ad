import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appTransport, type HttpRequest, type Transport } from '../../src/client/transport.js';
import { createApp } from '../../src/server/app.js';
import type { Store } from '../../src/store/store.js';
import { makePGliteStore, tempDir } from '../support/stores.js';
import { runCli } from './support.js';

/** The CLI's commands on an in-process service: the context hands them a Transport, no socket, no port. */
describe('commands over an in-process Transport', () => {
  let store: Store;
  let transport: Transport & { requests: HttpRequest[] };
  beforeAll(async () => {
    store = await makePGliteStore();
    const app = appTransport(createApp({ store, log: () => {} }));
    const requests: HttpRequest[] = [];
    transport = { requests, send: (req) => (requests.push(req), app.send(req)), stream: (req) => (requests.push(req), app.stream!(req)) };
  });
  afterAll(async () => store.close());

  it('imports a file and lists it back, every request through the given transport', async () => {
    // count only this test's requests: the transport is shared with the file's other tests
    transport.requests.length = 0;
    const dir = tempDir('inproc-');
    const input = join(dir, 'labels.csv');
    writeFileSync(input, 'id,name\n1ab00000-0000-4000-8000-000000000001,Warp\n1ab00000-0000-4000-8000-000000000002,Ninja Tune\n');
    const imported = await runCli(['labels', 'import', input], { transport });
    expect(imported.err).toMatch(/labels\.csv → labels: 2 inserted, 0 updated/);
    expect(imported.code).toBe(0);
    const listed = await runCli(['labels', 'list', '-o', 'json', '--order', 'name'], { transport });
    expect(listed.code).toBe(0);
    expect((JSON.parse(listed.out) as Array<{ name: string }>).map((r) => r.name)).toEqual(['Ninja Tune', 'Warp']);
    expect(transport.requests.filter((r) => r.method === 'POST').length).toBeGreaterThan(0);
    expect(transport.requests.length).toBeGreaterThan(0);
    // the collection's requests, and the import's question and record of an unchanged re-run (docs/service.md)
    expect(transport.requests.every((r) => r.path === '/labels' || /^\/rpc\/catalog_import_run_(check|record)$/.test(r.path))).toBe(true);
    expect(transport.requests.filter((r) => r.path.startsWith('/rpc/')).length).toBe(2);
  });

  it('maps engine and service errors to exit codes in cli/errors.ts: usage 2, service 1', async () => {
    const dir = tempDir('inproc-');
    const unknown = join(dir, 'bad.csv');
    writeFileSync(unknown, 'id,nope\n1ab00000-0000-4000-8000-000000000003,x\n');
    const usage = await runCli(['labels', 'import', unknown], { transport });
    expect(usage.code).toBe(2);
    expect(usage.err).toMatch(/unknown field "nope" for labels/);
    const tracks = join(dir, 'tracks.csv');
    writeFileSync(tracks, 'isrc_code,track_title\nGBAAA0000001,One\n');
    // a dry run asks the service about a conflict key with no unique constraint, as the real run meets it
    const refused = await runCli(['tracks', 'import', tracks, '--on-conflict', 'isrc_code', '--dry-run'], { transport });
    expect(refused.err).toMatch(/no unique or exclusion constraint.*42P10/);
    expect(refused.code).toBe(1);
  });
});
