import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runExport } from '../../src/cli/commands/export.js';
import { runImport } from '../../src/cli/commands/import.js';
import { appTransport, type Transport } from '../../src/client/transport.js';
import { tableByName } from '../../src/schema/catalog.js';
import { createApp } from '../../src/server/app.js';
import type { Store } from '../../src/store/store.js';
import { makePGliteStore, tempDir } from '../support/stores.js';
import { runCli, testContext } from './support.js';

/**
 * Issue 25: import, export and check work on the collections the service describes, with the
 * fields it describes, not the ones compiled into the binary. The service here is the real one in
 * process behind a small front that describes it otherwise: `studios` (a collection the binary
 * has no table for) served by the labels table, and labels with only `id` and `name` (its `*`
 * answering those), as a service with column privileges or an older interface would.
 */

const URL_ = 'http://catalog.local';

type Doc = { definitions: Record<string, { properties: Record<string, unknown>; required?: string[] }> };

/** The real app, described as `describe` edits its root description; `/studios` is served by `/labels`. */
function describedService(store: Store, edit: (doc: Doc) => void, narrowLabels = false): Transport {
  const app = createApp({ store, log: () => {} });
  return appTransport({
    async handle(req: Request): Promise<Response> {
      const url = new URL(req.url);
      if (url.pathname === '/' && req.method === 'GET') {
        const doc = (await (await app.handle(req)).json()) as Doc;
        edit(doc);
        return new Response(JSON.stringify(doc), { headers: { 'content-type': 'application/openapi+json; charset=utf-8' } });
      }
      if (url.pathname === '/studios') url.pathname = '/labels';
      else if (url.pathname === '/labels' && narrowLabels && req.method === 'GET' && !url.searchParams.has('select')) url.searchParams.set('select', 'id,name');
      const body = req.body ? await req.arrayBuffer() : undefined;
      return app.handle(new Request(url, { method: req.method, headers: req.headers, body }));
    },
  }, URL_);
}

/** A fresh catalog behind a service that also describes `/studios` (served by the labels table). */
async function studiosService(): Promise<{ store: Store; transport: Transport }> {
  const store = await makePGliteStore();
  return { store, transport: describedService(store, (doc) => void (doc.definitions.studios = doc.definitions.labels)) };
}

describe('a service that describes collections the binary does not have', () => {
  let store: Store;
  let transport: Transport;
  beforeAll(async () => {
    ({ store, transport } = await studiosService());
  });
  afterAll(async () => store.close());

  it('the binary has no studios table: what follows comes from the service alone', () => {
    expect(tableByName('studios')).toBeUndefined();
  });

  it('catalog import DIR takes studios.csv, and export writes it back with the service fields', async () => {
    const dir = join(tempDir('svc-model-'), 'in');
    mkdirSync(dir);
    writeFileSync(join(dir, 'studios.csv'), 'name\nSun Studio\nAbbey Road\n');
    const imported = await runCli(['import', dir], { transport, env: { CATALOG_URL: URL_ } });
    expect(imported.err).toMatch(/1 file: 2 inserted, 0 updated, 0 unchanged, 0 rejected/);
    expect(imported.code, imported.err).toBe(0);
    expect((await store.query<{ name: string }>('select name from labels order by name')).rows.map((r) => r.name)).toEqual(['Abbey Road', 'Sun Studio']);

    const t = testContext({ transport, env: { CATALOG_URL: URL_ } });
    const out = join(dir, '..', 'studios-out.csv');
    const n = await runExport({ collection: 'studios', file: out, order: 'name' } as Parameters<typeof runExport>[0], t.ctx);
    expect(n).toBe(2);
    const lines = readFileSync(out, 'utf8').trim().split('\n');
    expect(lines[0]).toBe('id,name,created,updated');
    expect(lines.slice(1).map((l) => l.split(',')[1])).toEqual(['Abbey Road', 'Sun Studio']);
  });

  it('catalog <collection> import runs on a collection only the service has', async () => {
    // a catalog of its own: the test above expects its two studios alone in the labels table
    const { store, transport } = await studiosService();
    try {
      const file = join(tempDir('svc-model-'), 'more.csv');
      writeFileSync(file, 'name\nElectric Lady\n');
      const t = testContext({ transport, env: { CATALOG_URL: URL_ } });
      const s = await runImport({ collection: 'studios', file } as Parameters<typeof runImport>[0], t.ctx);
      expect(s).toMatchObject({ table: 'studios', inserted: 1, rejected: 0 });
      expect((await store.query<{ n: number }>(`select count(*)::int as n from labels where name = 'Electric Lady'`)).rows[0].n).toBe(1);
    } finally {
      await store.close();
    }
  });
});

describe('catalog <collection> … for a collection only the service describes', () => {
  let store: Store;
  let transport: Transport;
  beforeAll(async () => {
    ({ store, transport } = await studiosService());
    await store.query(`insert into labels (name) values ('Sun Studio'), ('Abbey Road')`);
  });
  afterAll(async () => store.close());

  it('list, count and export are commands of it, built from the service description', async () => {
    const env = { CATALOG_URL: URL_ };
    const list = await runCli(['studios', 'list', '--order', 'name', '--select', 'name', '-o', 'csv'], { transport, env });
    expect(list.err).toBe('');
    expect(list.out).toBe('name\nAbbey Road\nSun Studio\n');
    expect(list.code).toBe(0);
    const count = await runCli(['studios', 'count'], { transport, env });
    expect(count.out.trim()).toBe('2');
    const out = join(tempDir('svc-model-'), 'studios.csv');
    const exported = await runCli(['studios', 'export', out, '--order', 'name'], { transport, env });
    expect(exported.code, exported.err).toBe(0);
    expect(readFileSync(out, 'utf8').split('\n')[0]).toBe('id,name,created,updated');
  });

  it('a word that names no collection of the service is still an unknown command (exit 2)', async () => {
    const r = await runCli(['stuidos', 'list'], { transport, env: { CATALOG_URL: URL_ } });
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/unknown command 'stuidos'/);
  });
});

describe('a service whose fields differ from the compiled ones', () => {
  let store: Store;
  let transport: Transport;
  beforeAll(async () => {
    store = await makePGliteStore();
    transport = describedService(
      store,
      (doc) => {
        const labels = doc.definitions.labels;
        for (const f of Object.keys(labels.properties)) if (f !== 'id' && f !== 'name') delete labels.properties[f];
        labels.required = (labels.required ?? []).filter((f) => f === 'id' || f === 'name');
      },
      true,
    );
    await store.query(`insert into labels (name) values ('Blue Note'), ('Verve')`);
  });
  afterAll(async () => store.close());

  it('an export header has the fields the service describes', async () => {
    expect(tableByName('labels')!.columns.map((c) => c.name)).toEqual(['id', 'name', 'created', 'updated']);
    for (const format of ['csv', 'ndjson'] as const) {
      const t = testContext({ transport, env: { CATALOG_URL: URL_ } });
      const out = join(tempDir('svc-model-'), `labels.${format}`);
      await runExport({ collection: 'labels', file: out, order: 'name' } as Parameters<typeof runExport>[0], t.ctx);
      const text = readFileSync(out, 'utf8').trim().split('\n');
      if (format === 'csv') {
        expect(text[0]).toBe('id,name');
        expect(text.slice(1).map((l) => l.split(',').length)).toEqual([2, 2]);
      } else {
        expect(text.map((l) => Object.keys(JSON.parse(l) as object))).toEqual([['id', 'name'], ['id', 'name']]);
      }
    }
  });

  it('an import refuses a field the service does not describe, though the binary has it', async () => {
    const file = join(tempDir('svc-model-'), 'labels.csv');
    writeFileSync(file, 'name,created\nImpulse,2024-01-01T00:00:00Z\n');
    const r = await runCli(['labels', 'import', file], { transport, env: { CATALOG_URL: URL_ } });
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/created/);
  });
});
