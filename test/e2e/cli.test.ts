import { parse as parseCsv } from 'csv-parse/sync';
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/stores.js';
import { TRICKY } from '../support/tricky.js';
import { catalog, ensureBuilt, type Serve, startServe } from './support.js';

let serve: Serve;
const at = (args: string[], opts: Parameters<typeof catalog>[1] = {}) => catalog(['--url', serve.url, ...args], opts);

beforeAll(async () => {
  ensureBuilt();
  serve = await startServe(['--data', tempDir('e2e-data-')]);
});

afterAll(async () => {
  expect(await serve.stop('SIGTERM')).toBe(0);
});

// One artist carries every tricky text, one per text field, so a single add covers them all.
const TEXT_FIELDS = ['stage_name', 'biography', 'city', 'country', 'address', 'email', 'phone', 'website', 'apple_music', 'bandcamp', 'bandsintown', 'facebook', 'instagram', 'linkedin', 'mixcloud'];
const tricky = Object.fromEntries(TEXT_FIELDS.map((f, i) => [f, TRICKY[i]]));

describe('catalog against a real `catalog serve`', () => {
  // Each test makes what it reads: they pass alone and in any order (vitest --sequence.shuffle).
  let id = '';
  let added: Awaited<ReturnType<typeof at>>;
  beforeAll(async () => {
    added = await at(['artists', 'add', ...Object.entries(tricky).map(([k, v]) => `${k}=${v}`), 'is_signed=true', 'birthdate=1971-07-04']);
    id = (JSON.parse(added.stdout || '{}') as { id?: string }).id ?? '';
  });

  it('adds a record whose text has commas, quotes, newlines, leading zeros and other scripts', async () => {
    const r = added;
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const created = JSON.parse(r.stdout);
    expect(created).toMatchObject({ ...tricky, is_signed: true, birthdate: '1971-07-04' });
  });

  it('gets it back identical in json, ndjson, yaml, csv and tsv', async () => {
    const json = JSON.parse((await at(['artists', 'get', id])).stdout);
    expect(json).toMatchObject(tricky);
    const nd = (await at(['artists', 'get', id, '-o', 'ndjson'])).stdout;
    expect(nd.trimEnd().split('\n')).toHaveLength(1);
    expect(JSON.parse(nd)).toEqual(json);
    expect(parseYaml((await at(['artists', 'get', id, '-o', 'yaml'])).stdout)).toEqual(json);
    const csv = parseCsv((await at(['artists', 'get', id, '-o', 'csv'])).stdout, { columns: true }) as Record<string, string>[];
    for (const [k, v] of Object.entries(tricky)) expect(csv[0][k]).toBe(v);
    const [head, row] = (await at(['artists', 'get', id, '-o', 'tsv'])).stdout.replace(/\n$/, '').split('\n').map((l) => l.split('\t'));
    const unescape = (f: string) => f.replace(/\\([\\tnr])/g, (_, c: string) => ({ '\\': '\\', t: '\t', n: '\n', r: '\r' })[c] as string);
    for (const [k, v] of Object.entries(tricky)) expect(unescape(row[head.indexOf(k)])).toBe(v);
  });

  it('prints every value whole in a table when not on a terminal', async () => {
    const r = await at(['artists', 'get', id, '-o', 'table']);
    for (const v of Object.values(tricky)) for (const line of v.split(/\r?\n/)) expect(r.stdout).toContain(line.trim());
  });

  it('lists as JSON when piped, with filters in both forms, --or, order and select', async () => {
    await at(['labels', 'add', '--json', '[{"name":"Alpha"},{"name":"Beta"},{"name":"Gamma"},{"name":"alpha two"}]']);
    const r = await at(['labels', 'list', '--where', 'name~alpha*', '--order', 'name', '--select', 'name']);
    expect(JSON.parse(r.stdout)).toEqual([{ name: 'Alpha' }, { name: 'alpha two' }]);
    const or = await at(['labels', 'list', '--or', 'name=Beta', '--or', 'name=eq.Gamma', '--order', 'name.desc', '-s', 'name']);
    expect(JSON.parse(or.stdout)).toEqual([{ name: 'Gamma' }, { name: 'Beta' }]);
  });

  it('streams every page with --all as one JSON array, and as ndjson/csv', async () => {
    const rows = Array.from({ length: 25 }, (_, i) => ({ name: `page-${String(i).padStart(2, '0')}` }));
    expect((await at(['genres', 'add', '--json', JSON.stringify(rows)])).code).toBe(0);
    const all = await at(['genres', 'list', '--all', '--page-size', '10', '--where', 'name~page-*', '-v']);
    expect(JSON.parse(all.stdout).map((r: { name: string }) => r.name).sort()).toEqual(rows.map((r) => r.name));
    // 3 pages of 10; the one pager (issue 25/27) asks up to two ahead, so at most 2 more
    const gets = all.stderr.match(/GET .*\/genres/g) ?? [];
    expect(gets.length).toBeGreaterThanOrEqual(3);
    expect(gets.length).toBeLessThanOrEqual(5);
    const nd = await at(['genres', 'list', '--all', '--page-size', '7', '--where', 'name~page-*', '-o', 'ndjson']);
    expect(nd.stdout.trimEnd().split('\n')).toHaveLength(25);
    const csv = await at(['genres', 'list', '--where', 'name~page-*', '--order', 'name', '--limit', '3', '--select', 'name', '-o', 'csv']);
    expect(csv.stdout).toBe('name\npage-00\npage-01\npage-02\n');
  });

  it('updates and removes, refusing without a filter or without --yes', async () => {
    const g = JSON.parse((await at(['genres', 'add', 'name=Old'])).stdout);
    expect(JSON.parse((await at(['genres', 'update', g.id, 'name=New'])).stdout).name).toBe('New');
    const noFilter = await at(['genres', 'remove']);
    expect(noFilter.code).toBe(2);
    expect(noFilter.stderr).toMatch(/--all-rows/);
    const noYes = await at(['genres', 'remove', g.id]);
    expect(noYes.code).toBe(2);
    expect(noYes.stderr).toMatch(/pass --yes/);
    const yes = await at(['genres', 'remove', g.id, '--yes']);
    expect([yes.code, yes.stderr.trim()]).toEqual([0, 'Removed 1 genre']);
    const gone = await at(['genres', 'get', g.id]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(/not found/);
  });

  it('describes collections and downloads the schema', async () => {
    const d = await at(['releases', 'describe', '-o', 'json']);
    expect(JSON.parse(d.stdout).fields.map((f: { field: string }) => f.field)).toContain('label_id');
    const table = await at(['releases', 'describe', '-o', 'table']);
    expect(table.stdout).toMatch(/label_id\s+uuid\s+false\s+→ labels\.id/);
    expect(table.stdout).toMatch(/Embeds:\n {2}labels \(many-to-one via label_id\)/);
    const y = await at(['schema', '--format', 'yaml']);
    expect(parseYaml(y.stdout).swagger).toBe('2.0');
  });

  it('prints curl with --dry-run, token redacted, and sends nothing', async () => {
    expect((await at(['labels', 'add', 'name=Omega'])).code).toBe(0);
    const r = await at(['--dry-run', '--token', 'sekrit', '-H', 'apikey: anon-key', 'labels', 'update', '--where', 'name=Omega', 'name=Changed']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      `curl -X PATCH '${serve.url}/labels?name=eq.Omega' -H 'accept: application/json' -H 'apikey: <redacted>' -H 'authorization: Bearer <redacted>' -H 'content-type: application/json' -H 'prefer: return=representation' --data-binary '{"name":"Changed"}'\n`,
    );
    expect(JSON.parse((await at(['labels', 'list', '--where', 'name=Omega'])).stdout)).toHaveLength(1);
  });

  it('exits 2 for an unknown collection, field or value, without sending anything', async () => {
    const coll = await at(['artsts', 'list']);
    expect([coll.code, coll.stderr]).toEqual([2, expect.stringMatching(/unknown command 'artsts'[\s\S]*artists/)]);
    const field = await at(['artists', 'list', '--where', 'stagename=x', '-v']);
    expect(field.code).toBe(2);
    expect(field.stderr).toMatch(/unknown field 'stagename' in artists; did you mean 'stage_name'\?/);
    expect(field.stderr).toMatch(/fields of artists: id, created/);
    expect(field.stderr).not.toMatch(/GET .*\/artists/);
    const value = await at(['artists', 'add', 'birthdate=31/12/1999']);
    expect([value.code, value.stderr]).toEqual([2, expect.stringMatching(/bad value for birthdate \(date\)/)]);
  });

  it('exits 1 with the service error for a 4xx, and names an unreachable URL', async () => {
    const dup = await at(['labels', 'add', '--json', JSON.stringify({ id: '11111111-1111-4111-8111-111111111111', name: 'x' })]);
    expect(dup.code).toBe(0);
    const again = await at(['labels', 'add', '--json', JSON.stringify({ id: '11111111-1111-4111-8111-111111111111', name: 'x' })]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/duplicate key value violates unique constraint "labels_pkey" \(23505, HTTP 409\)/);
    const down = await catalog(['--url', 'http://127.0.0.1:9', 'labels', 'list']);
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(/cannot reach http:\/\/127\.0\.0\.1:9[\s\S]*catalog serve/);
  });

  it('respects FORCE_COLOR and NO_COLOR on stderr', async () => {
    const forced = await at(['artists', 'list', '--where', 'nope=1'], { env: { FORCE_COLOR: '1' } });
    expect(forced.stderr).toContain('\x1b[31merror:');
    const plain = await at(['artists', 'list', '--where', 'nope=1'], { env: { FORCE_COLOR: '1', NO_COLOR: '1' } });
    expect(plain.stderr).toContain('\x1b[31m'); // FORCE_COLOR wins over NO_COLOR
    const none = await at(['artists', 'list', '--where', 'nope=1'], { env: { NO_COLOR: '1' } });
    expect(none.stderr).not.toContain('\x1b[');
  });
});
