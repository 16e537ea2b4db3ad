import { describe, expect, it } from 'vitest';
import { tempDir } from '../support/stores.js';
import { catalog, ensureBuilt } from './support.js';

ensureBuilt();

/**
 * The sample catalog the describes that only read it share (each seeded its own: three seeds and
 * three holders for the same rows), seeded by the first that asks.
 */
const SEEDED = { CATALOG_DATA: tempDir('filters-seeded-') };
let seeding: Promise<void> | undefined;
async function seeded(): Promise<typeof SEEDED> {
  seeding ??= catalog(['seed'], { env: SEEDED }).then((r) => expect(r.code, r.stderr).toBe(0));
  await seeding;
  return SEEDED;
}

/** Mistakes in --where must not look like answers: each exits 2 with a did-you-mean instead of an empty list. */
describe('operator typos in --where / --or', () => {
  const env = { CATALOG_DATA: tempDir('typos-') };

  it.each([
    ['genre=eqq.House', /unknown operator 'eqq'/, /did you mean genre=eq\.House\?/],
    ['genre=ilke.*house*', /unknown operator 'ilke'/, /did you mean genre=like\.\*house\* or genre=ilike\.\*house\*\?/],
    ['genre=in.(House,Techno', /the in operator's value does not parse/, /field=op\.value/],
    ['genre==House', /'==' is not an operator/, /write genre=House \(or genre=eq\.House\)/],
    ['genre=not.eqq.House', /unknown operator 'eqq'/, /genre=not\.eq\.House/],
  ])('%s exits 2 with a did-you-mean, sending nothing', async (expr, message, hint) => {
    for (const flag of ['--where', '--or']) {
      const r = await catalog(['releases', 'list', flag, expr], { env });
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stderr).toMatch(hint);
      expect(r.stdout).toBe('');
    }
  });

  it.each([
    ['release_title=Mr. Brown', 'release_title=eq.Mr.%20Brown'],
    ['release_version=1.2', 'release_version=eq.1.2'],
    ['genre=in.(House,Techno)', 'genre=in.(House,Techno)'],
    ['genre=House', 'genre=eq.House'],
  ])('values that merely contain dots keep working: %s', async (expr, sent) => {
    const r = await catalog(['--dry-run', 'releases', 'list', '--where', expr], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(sent);
  });
});

describe('relative dates in filters', () => {
  const env = { CATALOG_DATA: tempDir('relative-') };
  const pad = (n: number) => String(n).padStart(2, '0');
  const local = (d: Date) => `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;

  it('release_date>=today and -30d are sent as absolute dates (--dry-run shows them)', async () => {
    const before = local(new Date());
    const r = await catalog(['--dry-run', 'releases', 'list', '--where', 'release_date>=today', '--where', 'release_date=gt.-30d']);
    const after = local(new Date());
    expect(r.code, r.stderr).toBe(0);
    const ago = new Date();
    ago.setDate(ago.getDate() - 30);
    expect([before, after]).toContain(/release_date=gte\.(\d{4}-\d{2}-\d{2})/.exec(r.stdout)?.[1]);
    expect(r.stdout).toMatch(new RegExp(`release_date=gt\\.${local(ago)}`));
  });

  it('finds the rows: a release dated today is found by release_date>=yesterday, not by release_date<yesterday', async () => {
    const today = local(new Date());
    expect((await catalog(['releases', 'add', `release_title=Fresh`, `release_date=${today}`], { env })).code).toBe(0);
    const found = await catalog(['releases', 'list', '--where', 'release_date>=yesterday', '-o', 'json'], { env });
    expect(JSON.parse(found.stdout).map((r: { release_title: string }) => r.release_title)).toEqual(['Fresh']);
    const none = await catalog(['releases', 'list', '--where', 'release_date<yesterday', '-o', 'json'], { env });
    expect(JSON.parse(none.stdout)).toEqual([]);
    const recent = await catalog(['releases', 'list', '--where', 'created>=now-6h', '-o', 'json'], { env });
    expect(JSON.parse(recent.stdout)).toHaveLength(1);
  });
});

describe('the short ~ match ignores case and accents', () => {
  it('stage_name~*cafe* finds "Café del Mar-ish", *CAFÉ* too, and !~ leaves it out', async () => {
    const env = await seeded();
    for (const pattern of ['*cafe*', '*CAFÉ*', 'café del*']) {
      const r = await catalog(['artists', 'list', '--where', `stage_name~${pattern}`, '--select', 'stage_name', '-o', 'json'], { env });
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual([{ stage_name: 'Café del Mar-ish' }]);
    }
    const labels = await catalog(['labels', 'list', '--where', 'name~*editions melodie*', '--select', 'name', '-o', 'json'], { env });
    expect(JSON.parse(labels.stdout)).toEqual([{ name: 'Éditions Mélodie' }]);
    const not = await catalog(['artists', 'list', '--where', 'stage_name!~*cafe*', '--all', '--select', 'stage_name', '-o', 'json'], { env });
    const names = (JSON.parse(not.stdout) as Array<{ stage_name: string }>).map((r) => r.stage_name);
    expect(names).not.toContain('Café del Mar-ish');
    expect(names.length).toBeGreaterThan(10);
  });
});

describe('a short-form filter on an embedded field filters the parent rows', () => {
  it("labels.name=Bass Culture lists only that label's releases; the raw form keeps the others with the label empty", async () => {
    const env = await seeded();
    const short = await catalog(['releases', 'list', '--select', 'release_title,labels(name)', '--where', 'labels.name=Bass Culture', '--all', '-o', 'json'], { env });
    expect(short.code, short.stderr).toBe(0);
    const rows = JSON.parse(short.stdout) as Array<{ labels: { name: string } | null }>;
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) expect(r.labels?.name).toBe('Bass Culture');
    const dry = await catalog(['--dry-run', 'releases', 'list', '--select', 'release_title,labels(name)', '--where', 'labels.name=Bass Culture'], { env });
    expect(decodeURIComponent(dry.stdout)).toContain('select=release_title,labels!inner(name)');
    const raw = await catalog(['releases', 'list', '--select', 'release_title,labels(name)', '--where', 'labels.name=eq.Bass Culture', '--all', '-o', 'json'], { env });
    const all = JSON.parse(raw.stdout) as Array<{ labels: { name: string } | null }>;
    expect(all.length).toBeGreaterThan(rows.length);
    expect(all.filter((r) => r.labels !== null)).toHaveLength(rows.length);
    const left = await catalog(['releases', 'list', '--select', 'release_title,labels!left(name)', '--where', 'labels.name=Bass Culture', '--all', '-o', 'json'], { env });
    expect(JSON.parse(left.stdout)).toHaveLength(all.length);
  });
});

describe('counts per value in one command', () => {
  it('tracks count, count --by genre (most first), and --select genre,count() on list', async () => {
    const env = await seeded();
    const total = await catalog(['tracks', 'count'], { env });
    expect([total.code, total.stdout]).toEqual([0, '200\n']);
    const by = await catalog(['tracks', 'count', '--by', 'genre', '-o', 'json'], { env });
    expect(by.code, by.stderr).toBe(0);
    const rows = JSON.parse(by.stdout) as Array<{ genre: string; count: number }>;
    expect(rows.reduce((n, r) => n + r.count, 0)).toBe(200);
    for (let i = 1; i < rows.length; i++) expect(rows[i - 1].count).toBeGreaterThanOrEqual(rows[i].count);
    const listed = await catalog(['tracks', 'list', '--select', 'genre,count()', '-o', 'json'], { env });
    const same = Object.fromEntries((JSON.parse(listed.stdout) as Array<{ genre: string; count: number }>).map((r) => [r.genre, r.count]));
    expect(same).toEqual(Object.fromEntries(rows.map((r) => [r.genre, r.count])));
    const filtered = await catalog(['tracks', 'count', '--where', `genre=${rows[0].genre}`], { env });
    expect(filtered.stdout).toBe(`${rows[0].count}\n`);
    const typo = await catalog(['tracks', 'count', '--by', 'genr'], { env });
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/did you mean 'genre'/);
  });
});
