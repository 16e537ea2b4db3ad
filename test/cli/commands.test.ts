import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseCsv } from 'csv-parse/sync';
import { parse as parseYaml } from 'yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { mintToken } from '../../src/server/auth.js';
import { startServer } from '../../src/server/listen.js';
import { tempDir } from '../support/stores.js';
import { TRICKY } from '../support/tricky.js';
import { runCli, type TestContextOptions, useTestService } from './support.js';

const service = useTestService();

const cli = (args: string[], o: TestContextOptions = {}) => runCli(['--url', service.url, ...args], o);
const json = async (args: string[], o: TestContextOptions = {}) => {
  const r = await cli([...args, '-o', 'json'], o);
  expect(r.err).toBe('');
  expect(r.code).toBe(0);
  return JSON.parse(r.out) as any;
};

describe('add, get, update, remove against a real service', () => {
  it('adds from FIELD=VALUE and prints the stored record', async () => {
    const created = await json(['artists', 'add', 'stage_name=DJ Test', 'is_signed=yes', 'birthdate=1990-02-28', 'metadata={"genres":["house"]}']);
    expect(created).toMatchObject({ stage_name: 'DJ Test', is_signed: true, birthdate: '1990-02-28', metadata: { genres: ['house'] } });
    expect(created.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(await json(['artists', 'get', created.id])).toEqual(created);
  });

  it('returns every tricky text exactly through add → get, in every format', async () => {
    for (const text of TRICKY) {
      const created = await json(['labels', 'add', `name=${text}`]);
      expect(created.name).toBe(text);
      const id = created.id as string;
      expect((await json(['labels', 'get', id])).name).toBe(text);
      const nd = await cli(['labels', 'get', id, '-o', 'ndjson']);
      expect(JSON.parse(nd.out).name).toBe(text);
      const yaml = await cli(['labels', 'get', id, '-o', 'yaml']);
      expect(parseYaml(yaml.out).name).toBe(text);
      const csv = await cli(['labels', 'get', id, '-o', 'csv']);
      expect((parseCsv(csv.out, { columns: true }) as Array<{ name: string }>)[0].name).toBe(text);
      const tsv = await cli(['labels', 'get', id, '-o', 'tsv']);
      const [head, row] = tsv.out.replace(/\n$/, '').split('\n').map((l) => l.split('\t'));
      const unescape = (f: string) => f.replace(/\\([\\tnr])/g, (_, c: string) => ({ '\\': '\\', t: '\t', n: '\n', r: '\r' })[c] as string);
      expect(unescape(row[head.indexOf('name')])).toBe(text);
      const table = await cli(['labels', 'get', id, '-o', 'table']);
      for (const line of text.split(/\r?\n/)) expect(table.out).toContain(line.trim());
    }
  });

  it('adds an array from --json, filling keys some objects lack with their defaults', async () => {
    const rows = await json(['genres', 'add', '--json', '[{"name":"House"},{"name":"Techno","id":"0b6f7c1e-8b1d-4e7a-9c55-0d6f1b2a4e10"}]']);
    expect(rows.map((r: { name: string }) => r.name)).toEqual(['House', 'Techno']);
    expect(rows[0].id).toMatch(/^[0-9a-f-]{36}$/);
    expect(rows[1].id).toBe('0b6f7c1e-8b1d-4e7a-9c55-0d6f1b2a4e10');
  });

  it('adds from a YAML file and from stdin', async () => {
    const dir = tempDir('add-');
    const file = join(dir, 'c.yaml');
    (await import('node:fs')).writeFileSync(file, '- name: Iceland\n- name: Japan\n');
    expect((await json(['countries', 'add', '--file', file])).map((r: { name: string }) => r.name)).toEqual(['Iceland', 'Japan']);
    expect((await json(['countries', 'add', '--file', '-'], { stdin: '{"name":"Chile"}' })).name).toBe('Chile');
  });

  it('updates by id and by --where, and refuses an empty filter', async () => {
    const a = await json(['languages', 'add', 'name=Fr']);
    expect((await json(['languages', 'update', a.id, 'name=French'])).name).toBe('French');
    const many = await json(['languages', 'update', '--where', 'name=French', 'name=Français']);
    expect(many).toHaveLength(1);
    expect(many[0].name).toBe('Français');
    const refused = await cli(['languages', 'update', 'name=x']);
    expect(refused.code).toBe(2);
    expect(refused.err).toMatch(/needs an id or --where/);
    const missing = await cli(['languages', 'update', '00000000-0000-4000-8000-000000000000', 'name=x']);
    expect(missing.code).toBe(1);
    expect(missing.err).toMatch(/not found/);
  });

  it('removes only with confirmation: --yes when stdin is not a terminal, a prompt when it is', async () => {
    const a = await json(['subgenres', 'add', 'name=Acid']);
    const refused = await cli(['subgenres', 'remove', a.id]);
    expect(refused.code).toBe(2);
    expect(refused.err).toMatch(/this would remove 1 subgenre: pass --yes/);
    const asked: string[] = [];
    const no = await cli(['subgenres', 'remove', a.id], { stdinTTY: true, prompter: { confirm: async (m) => (asked.push(m), false) } });
    expect(no.code).toBe(0);
    expect(asked[0]).toMatch(/^Remove 1 subgenre/);
    expect((await json(['subgenres', 'get', a.id])).name).toBe('Acid');
    const yes = await cli(['subgenres', 'remove', a.id], { stdinTTY: true, prompter: { confirm: async () => true } });
    expect(yes.err).toMatch(/Removed 1 subgenre/);
    const gone = await cli(['subgenres', 'get', a.id]);
    expect(gone.code).toBe(1);
    expect(gone.err).toMatch(/not found/);
  });

  it('removes by --where with --yes and says how many', async () => {
    await json(['subgenres', 'add', '--json', '[{"name":"tmp one"},{"name":"tmp two"}]']);
    const r = await cli(['subgenres', 'remove', '--where', 'name~tmp*', '--yes']);
    expect([r.code, r.err.trim()]).toEqual([0, 'Removed 2 subgenres']);
    expect((await cli(['subgenres', 'remove', '--all-rows', '--where', 'name=x'])).code).toBe(2);
  });
});

describe('list', () => {
  beforeAll(async () => {
    const names = Array.from({ length: 7 }, (_, i) => ({ release_title: `Paged ${i}`, catalog_number: `CAT-${String(i).padStart(3, '0')}` }));
    await json(['releases', 'add', '--json', JSON.stringify(names)]);
  });

  it('reads every page with --all into one JSON array', async () => {
    const r = await cli(['releases', 'list', '--where', 'release_title~paged*', '--all', '--page-size', '2', '-o', 'json', '-v']);
    expect(r.code).toBe(0);
    const rows = JSON.parse(r.out) as Array<{ catalog_number: string }>;
    expect(rows.map((x) => x.catalog_number).sort()).toEqual(['CAT-000', 'CAT-001', 'CAT-002', 'CAT-003', 'CAT-004', 'CAT-005', 'CAT-006']);
    // the one pager (issue 25/27) asks up to two pages ahead: 4 pages of 2 rows, at most 2 asked past the end
    const gets = r.err.match(/^GET .*\/releases\?.* → 20[06]/gm) ?? [];
    expect(gets.length).toBeGreaterThanOrEqual(4);
    expect(gets.length).toBeLessThanOrEqual(6);
  });

  it('hints at * when a ~ filter without one matches nothing (issue 27)', async () => {
    const r = await cli(['releases', 'list', '--where', 'release_title~paged', '-o', 'json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toEqual([]);
    expect(r.err).toContain("~ matches the whole value (ignoring case and accents): to find it inside a value, use --where 'release_title~*paged*'");
    const found = await cli(['releases', 'list', '--where', 'release_title~*paged*', '-o', 'json']);
    expect(JSON.parse(found.out).length).toBeGreaterThan(0);
    expect(found.err).not.toContain('whole value');
  });

  it('counts with --count, filters, orders and limits', async () => {
    const r = await cli(['releases', 'list', '--where', 'release_title~paged*', '--order', 'catalog_number.desc', '--limit', '2', '--count', '-o', 'json']);
    expect(JSON.parse(r.out).map((x: { catalog_number: string }) => x.catalog_number)).toEqual(['CAT-006', 'CAT-005']);
    expect(r.err.trim()).toBe('2 of 7 releases');
  });

  it('embeds related rows with --select', async () => {
    const label = await json(['labels', 'add', 'name=Embed Label']);
    await json(['releases', 'add', 'release_title=Embedded', `label_id=${label.id}`]);
    const rows = await json(['releases', 'list', '--select', 'release_title,labels(name)', '--where', 'release_title=Embedded']);
    expect(rows).toEqual([{ release_title: 'Embedded', labels: { name: 'Embed Label' } }]);
  });

  it('prints an aligned table on a terminal, fitted to its width', async () => {
    const r = await cli(['releases', 'list', '--where', 'release_title~paged*', '--order', 'catalog_number', '--count'], { stdoutTTY: true, stderrTTY: true, columns: 70 });
    const lines = r.out.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^id\s+release_title\s+catalog_number/);
    expect(lines).toHaveLength(8);
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(70);
    expect(r.err).toMatch(/7 of 7 releases/);
    expect(r.err).toMatch(/more fields not shown/);
  });

  it('prints the request as curl with --dry-run and sends nothing', async () => {
    const before = await json(['genres', 'list']);
    const r = await cli(['--dry-run', '--token', 'sekrit', 'genres', 'add', 'name=Never']);
    expect(r.code).toBe(0);
    // since issue 24, `add` sends an id of its own (time-ordered) with duplicates ignored, so a resend cannot store it twice
    expect(r.out).toMatch(
      new RegExp(
        `^curl -X POST '${service.url}/genres\\?on_conflict=id' -H 'accept: application/json' -H 'authorization: Bearer <redacted>' -H 'content-type: application/json' -H 'prefer: resolution=ignore-duplicates, return=representation' --data-binary '\\{"id":"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}","name":"Never"\\}'\n$`,
      ),
    );
    expect((await json(['genres', 'list'])).length).toBe(before.length);
  });
});

describe('describe, schema and errors', () => {
  it('describes a collection from the root description', async () => {
    const d = await json(['releases', 'describe']);
    expect(d.primaryKey).toEqual(['id']);
    expect(d.fields.find((f: { field: string }) => f.field === 'label_id')).toMatchObject({ type: 'uuid', required: false, key: '→ labels.id' });
    expect(d.fields.find((f: { field: string }) => f.field === 'id')).toMatchObject({ required: true, default: 'gen_random_uuid()', key: 'primary key' });
    expect(d.embeds).toContainEqual({ table: 'labels', cardinality: 'many-to-one', via: 'label_id' });
  });

  it('downloads the root description as JSON or YAML, to stdout or a file', async () => {
    const r = await cli(['schema']);
    expect(JSON.parse(r.out).swagger).toBe('2.0');
    const y = await cli(['schema', '--format', 'yaml']);
    expect(parseYaml(y.out).info.version).toBe('12.2.3');
    const file = join(tempDir('schema-'), 'catalog.yaml');
    const f = await cli(['schema', '-o', file]);
    expect(f.code).toBe(0);
    expect(parseYaml(readFileSync(file, 'utf8')).swagger).toBe('2.0');
  });

  it('exits 2 for unknown collections, fields and bad values, before sending anything', async () => {
    const unknown = await cli(['artist', 'list']);
    expect([unknown.code, unknown.err]).toEqual([2, expect.stringMatching(/unknown command 'artist'[\s\S]*Did you mean artists\?/)]);
    const field = await cli(['artists', 'list', '--where', 'stagename=x']);
    expect([field.code, field.err]).toEqual([2, expect.stringMatching(/did you mean 'stage_name'/)]);
    const value = await cli(['releases', 'add', 'release_date=yesterday']);
    expect([value.code, value.err]).toEqual([2, expect.stringMatching(/bad value for release_date/)]);
    const removed = await cli(['users', 'list']);
    expect([removed.code, removed.err]).toEqual([2, expect.stringMatching(/removed in interface 12\.2\.3/)]);
  });

  it('exits 1 with the service message for a 4xx', async () => {
    const r = await cli(['releases', 'add', 'release_title=x', 'label_id=00000000-0000-4000-8000-000000000000']);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/violates foreign key constraint.*\(23503, HTTP 409\)/);
    expect(r.err).toMatch(/details: Key \(label_id\)/);
  });

  it('exits 1 naming the URL when the service is unreachable', async () => {
    const r = await runCli(['--url', 'http://127.0.0.1:9', 'labels', 'list']);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/cannot reach http:\/\/127\.0\.0\.1:9/);
    expect(r.err).toMatch(/catalog serve/);
  });
});

describe('authentication', () => {
  it('exits 4 with a hint when the service wants a token, and works with one', async () => {
    const secret = 'a-test-secret-of-at-least-32-characters!';
    const s = await startServer({ store: service.store, port: 0, jwtSecret: secret });
    try {
      const anon = await runCli(['--url', s.url, 'labels', 'add', 'name=x']);
      expect(anon.code).toBe(4);
      expect(anon.err).toMatch(/pass --token/);
      const token = await mintToken(secret, 'editor', '1h');
      const ok = await runCli(['--url', s.url, 'labels', 'add', 'name=Authorised', '-o', 'json'], { env: { CATALOG_TOKEN: token } });
      expect(ok.code).toBe(0);
      expect(JSON.parse(ok.out).name).toBe('Authorised');
    } finally {
      await s.close();
    }
  });
});
