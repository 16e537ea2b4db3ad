import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/stores.js';
import { catalog, ensureBuilt, type Serve, startServe } from './support.js';

// Issue 37 item 4: a filter value that matches nothing, on a field naming a short list (genre,
// subgenre, label, country, language), gets a did-you-mean on stderr; stdout and the exit code
// stay those of an empty answer.

let serve: Serve;
const run = (...args: string[]) => catalog(['--url', serve.url, ...args]);

beforeAll(async () => {
  ensureBuilt();
  serve = await startServe(['--data', tempDir('value-hints-')]);
  for (const [collection, rows] of [
    ['genres', [{ name: 'House' }, { name: 'Techno' }, { name: 'Jazz' }, { name: 'Ambient' }]],
    ['labels', [{ name: 'Blue Note' }, { name: 'Warp' }]],
    ['tracks', [{ track_title: 'One', genre: 'House' }, { track_title: 'Two', genre: 'Techno' }]],
  ] as const) {
    const r = await run(collection, 'add', '--json', JSON.stringify(rows));
    expect(r.code, r.stderr).toBe(0);
  }
});

afterAll(async () => {
  await serve?.stop();
});

describe('a filter value nothing matches', () => {
  it('tracks list --where genre=Hosue: did you mean "House"?, an empty list on stdout, exit 0', async () => {
    const r = await run('tracks', 'list', '--where', 'genre=Hosue');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([]);
    expect(r.stderr).toContain('no genre is "Hosue"; did you mean "House"?');
  });

  it('in CSV, in --all, in count, in an in.() list and on an embed', async () => {
    const csv = await run('tracks', 'list', '--where', 'genre=techno', '-o', 'csv');
    expect(csv.code).toBe(0);
    expect(csv.stderr).toContain('no genre is "techno"; did you mean "Techno"?');
    const all = await run('tracks', 'list', '--all', '--where', 'genre=Jaz');
    expect(all.stderr).toContain('did you mean "Jazz"?');
    const count = await run('releases', 'count', '--where', 'genre=in.(Ambeint,House)');
    expect(count.stdout.trim()).toBe('0');
    expect(count.stderr).toContain('no genre is "Ambeint"; did you mean "Ambient"?');
    expect(count.stderr).not.toContain('"House"');
    const embed = await run('releases', 'list', '--select', 'release_title,labels(name)', '--where', 'labels.name=Blue Nota');
    expect(embed.stderr).toContain('no label is named "Blue Nota"; did you mean "Blue Note"?');
    const own = await run('labels', 'list', '--where', 'name=Wrap');
    expect(own.stderr).toContain('no label is named "Wrap"; did you mean "Warp"?');
  });

  it('says nothing when the value exists (no rows have it), when rows match, or with -q', async () => {
    const exists = await run('tracks', 'list', '--where', 'genre=Jazz');
    expect(exists.code).toBe(0);
    expect(exists.stderr).not.toContain('did you mean');
    expect(exists.stderr).not.toContain('no genre is');
    const found = await run('tracks', 'list', '--where', 'genre=House');
    expect(JSON.parse(found.stdout)).toHaveLength(1);
    expect(found.stderr).toBe('');
    const quiet = await run('-q', 'tracks', 'list', '--where', 'genre=Hosue');
    expect(quiet.stderr).toBe('');
    // a field that names no collection gets no hint
    const title = await run('tracks', 'list', '--where', 'track_title=Onw');
    expect(title.stderr).not.toContain('did you mean');
  });

  it('names the collection when nothing is close', async () => {
    const r = await run('tracks', 'list', '--where', 'genre=Polka');
    expect(r.stderr).toContain('no genre is "Polka" (genres has 4 names: catalog genres list)');
  });
});
