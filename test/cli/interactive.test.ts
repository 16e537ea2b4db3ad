import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Context } from '../../src/cli/context.js';
import { run } from '../../src/cli/main.js';
import { askableFields, dateFeedback, validateDate, validateJson, validateUuid } from '../../src/cli/prompts/fields.js';
import { referenceQuery } from '../../src/cli/prompts/lookup.js';
import { renderSummary } from '../../src/cli/prompts/summary.js';
import { builtinSchema } from '../../src/schema/catalog.js';
import { bufferOutput } from '../../src/io/streams.js';
import { style } from '../../src/io/style.js';
import { tempDir } from '../support/stores.js';
import { runCli, useTestService } from './support.js';
import { PATIENCE_MS } from '../support/patience.js';

const KEY = { enter: '\r', down: '\x1b[B', up: '\x1b[A', space: ' ', backspace: '\x7f', ctrlC: '\x03' };

const service = useTestService();
// a catalog of its own for the add-a-release test: the file's other tests add genres and labels, and it needs none but its own
const own = useTestService();

const api = async (path: string, init?: RequestInit, url = service.url) => {
  const res = await fetch(`${url}${path}`, { ...init, headers: { 'content-type': 'application/json', prefer: 'return=representation', ...(init?.headers ?? {}) } });
  expect(res.status).toBeLessThan(300);
  return (await res.json()) as any;
};

/**
 * A terminal made of in-memory streams: the real @inquirer prompts read keys from `input` and draw
 * on `stderr`; `expect(text)` waits for the screen to show the text (after what was already seen).
 */
function terminal(url = service.url) {
  const home = tempDir('home-');
  const input = new PassThrough();
  const stdout = bufferOutput({ isTTY: false });
  const stderr = bufferOutput({ isTTY: true, columns: 160 });
  const ctx = new Context({
    io: { stdin: { isTTY: true, stream: input }, stdout, stderr },
    env: { XDG_CONFIG_HOME: `${home}/config`, XDG_CACHE_HOME: `${home}/cache`, XDG_DATA_HOME: `${home}/data` },
    home,
    version: '0.0.0-test',
  });
  let seen = 0;
  // eslint-disable-next-line no-control-regex
  const screen = () => stderr.text().replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');
  return {
    ctx,
    stdout,
    screen,
    run: (args: string[]) => run(['node', 'catalog', '--url', url, ...args], ctx),
    /** Waits until the screen (from where the last wait stopped) contains `text`. */
    async expect(text: string): Promise<void> {
      const deadline = Date.now() + PATIENCE_MS;
      for (;;) {
        const s = screen();
        const at = s.indexOf(text, seen);
        if (at >= 0) {
          seen = at + text.length;
          return;
        }
        if (Date.now() > deadline) throw new Error(`the screen never showed ${JSON.stringify(text)}; it shows:\n${s.slice(seen)}`);
        await new Promise((r) => setTimeout(r, 10));
      }
    },
    type(...keys: string[]) {
      input.write(keys.join(''));
    },
  };
}

describe('interactive add and update through the real prompts', () => {
  it('adds a label asked field by field, after a summary', async () => {
    const t = terminal();
    const done = t.run(['labels', 'add', '--interactive', '-o', 'json']);
    await t.expect('? name');
    t.type('Blue Note', KEY.enter);
    await t.expect('New label:');
    await t.expect('Blue Note');
    await t.expect('Add this label?');
    t.type(KEY.enter);
    expect(await done).toBe(0);
    const created = JSON.parse(t.stdout.text());
    expect(created.name).toBe('Blue Note');
    expect(await api(`/labels?id=eq.${created.id}&select=name`)).toEqual([{ name: 'Blue Note' }]);
  });

  it('adds a release: field list, date checked as typed, label chosen by searching its name', async () => {
    const [impulse] = await api('/labels', { method: 'POST', body: JSON.stringify({ name: 'Impulse!' }) }, own.url);
    await api('/labels', { method: 'POST', body: JSON.stringify({ name: 'Verve' }) }, own.url);
    const t = terminal(own.url);
    const done = t.run(['releases', 'add', '--interactive', 'catalog_number=A-77', '-o', 'json']);
    await t.expect('Which fields do you want to fill in?');
    t.type(KEY.enter);
    await t.expect('? release_title');
    t.type('A Love Supreme', KEY.enter);
    await t.expect('? catalog_number');
    await t.expect('(A-77)');
    t.type(KEY.enter);
    await t.expect('? release_date');
    t.type('1965-02-3');
    await t.expect('YYYY-MM-DD');
    t.type('0');
    await t.expect('1965-02-30 is not a real date');
    t.type(KEY.enter);
    await t.expect('> 1965-02-30 is not a real date');
    t.type(KEY.backspace.repeat(5), '01-09', KEY.enter);
    await t.expect('? label_id');
    await t.expect('Verve');
    t.type('impu');
    // The active choice's id shows under the list once the search has answered.
    await t.expect(impulse.id);
    t.type(KEY.enter);
    await t.expect('genre_id: there are no genres yet');
    await t.expect('Add this release?');
    expect(t.screen()).toMatch(/label_id\s+Impulse! [0-9a-f]{8}…/);
    t.type(KEY.enter);
    expect(await done).toBe(0);
    const created = JSON.parse(t.stdout.text());
    expect(created).toMatchObject({ release_title: 'A Love Supreme', catalog_number: 'A-77', release_date: '1965-01-09', label_id: impulse.id, genre_id: null });
  });

  it('updates a label showing its current value; an unchanged answer sends nothing', async () => {
    const [label] = await api('/labels', { method: 'POST', body: JSON.stringify({ name: 'Prestige' }) });
    const t = terminal();
    const done = t.run(['labels', 'update', label.id, '--interactive', '-o', 'json']);
    await t.expect('(Prestige)');
    t.type(KEY.backspace, 'Prestige Records', KEY.enter);
    await t.expect('Prestige → Prestige Records');
    await t.expect('Save these changes?');
    t.type(KEY.enter);
    expect(await done).toBe(0);
    expect(JSON.parse(t.stdout.text())).toMatchObject({ id: label.id, name: 'Prestige Records' });

    const again = terminal();
    const second = again.run(['labels', 'update', label.id, '--interactive']);
    await again.expect('(Prestige Records)');
    again.type(KEY.enter);
    expect(await second).toBe(0);
    expect(again.screen()).toContain('Nothing changed; nothing was sent.');
    expect(again.stdout.text()).toBe('');
  });

  it('changes a release’s label and clears its date', async () => {
    const [a] = await api('/labels', { method: 'POST', body: JSON.stringify({ name: 'Atlantic' }) });
    const [b] = await api('/labels', { method: 'POST', body: JSON.stringify({ name: 'Bethlehem' }) });
    const [rel] = await api('/releases', { method: 'POST', body: JSON.stringify({ release_title: 'Giant Steps', label_id: a.id, release_date: '1960-01-27' }) });
    const t = terminal();
    const done = t.run(['releases', 'update', rel.id, '--interactive', '-o', 'json']);
    await t.expect('Which fields do you want to change?');
    // Pick release_date and label_id by moving down the list.
    // Nothing is preselected for an update, so the list is in askable order.
    const order = askableFields(builtinSchema().tables.get('releases')!).map((f) => f.name);
    const keys: string[] = [];
    let at = 0;
    for (const name of ['release_date', 'label_id']) {
      const i = order.indexOf(name);
      expect(i).toBeGreaterThanOrEqual(0);
      keys.push(KEY.down.repeat(i - at), KEY.space);
      at = i;
    }
    t.type(...keys, KEY.enter);
    await t.expect('? release_date');
    await t.expect('(1960-01-27)');
    t.type(KEY.backspace, KEY.enter);
    await t.expect('? label_id');
    await t.expect('keep: Atlantic');
    t.type('beth');
    await t.expect(b.id);
    t.type(KEY.enter);
    await t.expect('Save these changes?');
    expect(t.screen()).toMatch(/release_date\s+1960-01-27 → \(empty\)/);
    expect(t.screen()).toMatch(/label_id\s+Atlantic [0-9a-f]{8}… → Bethlehem [0-9a-f]{8}…/);
    t.type(KEY.enter);
    expect(await done).toBe(0);
    expect(JSON.parse(t.stdout.text())).toMatchObject({ release_date: null, label_id: b.id, release_title: 'Giant Steps' });
  });

  it('sends nothing when the user says no at the summary', async () => {
    const t = terminal();
    const done = t.run(['genres', 'add', '--interactive']);
    await t.expect('? name');
    t.type('Never Sent', KEY.enter);
    await t.expect('Add this genre?');
    t.type('n', KEY.enter);
    // issue 17: declining is not an error: exit 0 with "Nothing added" (was exit 1, "cancelled: nothing was sent")
    expect(await done).toBe(0);
    expect(t.screen()).toContain('Nothing added');
    expect(t.screen()).not.toContain('error:');
    expect(await api('/genres?name=eq.Never%20Sent')).toEqual([]);
  });
});

describe('interactive entry never prompts a script', () => {
  it('fails with exit 2 naming the flags to pass when stdin is not a terminal', async () => {
    // Port 9 answers nothing: the check comes before any connection is tried.
    const r = await runCli(['--url', 'http://127.0.0.1:9', 'labels', 'add', '--interactive'], { stdinTTY: false });
    expect(r.code).toBe(2);
    expect(r.err).toContain('--interactive needs a terminal');
    expect(r.err).toContain('catalog labels add FIELD=VALUE... or --json/--file');
    expect(r.out).toBe('');
  });

  it('names the update form too, and refuses --interactive with --where', async () => {
    const r = await runCli(['--url', 'http://127.0.0.1:9', 'labels', 'update', '0b6f7c1e-8b1d-4e7a-9c55-0d6f1b2a4e10', '--interactive'], { stdinTTY: false });
    expect(r.code).toBe(2);
    expect(r.err).toContain('catalog labels update 0b6f7c1e-8b1d-4e7a-9c55-0d6f1b2a4e10 FIELD=VALUE...');
    const w = await runCli(['--url', 'http://127.0.0.1:9', 'labels', 'update', '--where', 'name=x', '--interactive'], { stdinTTY: true });
    expect(w.code).toBe(2);
    expect(w.err).toContain('--interactive edits one record: give its id');
  });

  it('refuses --interactive with --json', async () => {
    const r = await runCli(['--url', 'http://127.0.0.1:9', 'labels', 'add', '--interactive', '--json', '{}'], { stdinTTY: true });
    expect(r.code).toBe(2);
    expect(r.err).toContain('leave out --json/--file');
  });
});

describe('prompt helpers', () => {
  it('checks dates while they are typed', () => {
    expect(dateFeedback('')).toBeNull();
    expect(dateFeedback('2024')).toBe('YYYY-MM-DD');
    expect(dateFeedback('2024-05-1')).toBe('YYYY-MM-DD');
    expect(dateFeedback('2024-05-17')).toBeNull();
    expect(dateFeedback('2023-02-29')).toBe('2023-02-29 is not a real date');
    expect(dateFeedback('2024-02-29')).toBeNull();
    expect(dateFeedback('17/05/2024')).toMatch(/YYYY-MM-DD, such as/);
    expect(validateDate('2024-05')).toMatch(/incomplete/);
    expect(validateDate('')).toBe(true);
    // relative dates, as filters take them, when the prompt knows the time
    const now = new Date(2026, 10, 25, 10, 0).getTime();
    expect(dateFeedback('today', now)).toBeNull();
    expect(dateFeedback('+7d', now)).toBeNull();
    expect(validateDate('-1w', now)).toBe(true);
    expect(validateDate('someday', now)).toMatch(/or today, \+7d/);
  });

  it('checks uuids and JSON', () => {
    expect(validateUuid('3f2a9c1e-8b1d-4e7a-9c55-0d6f1b2a4e10')).toBe(true);
    expect(validateUuid('3f2a9c1e')).toMatch(/UUID/);
    expect(validateJson('{"a":1}')).toBe(true);
    expect(validateJson('')).toBe(true);
    expect(validateJson('{a:1}')).toMatch(/not valid JSON/);
  });

  it('asks neither the id nor created/updated, title first', () => {
    const schema = builtinSchema();
    const releases = askableFields(schema.tables.get('releases')!).map((f) => f.name);
    expect(releases[0]).toBe('release_title');
    expect(releases).not.toContain('id');
    expect(releases).not.toContain('created');
    expect(releases).not.toContain('updated');
    expect(releases).toContain('label_id');
    expect(askableFields(schema.tables.get('labels')!).map((f) => f.name)).toEqual(['name']);
  });

  it('searches references by name, case-insensitively', () => {
    const labels = builtinSchema().tables.get('labels')!;
    // ignoring case and accents, as `~` does (issue 17: was name=ilike.*blue no*)
    expect(decodeURIComponent(referenceQuery(labels, 'blue no'))).toBe(
      'select=id,name&name=imatch.^.*b[lĺļľŀłLĹĻĽĿŁ][uùúûüũūŭůűųǔUÙÚÛÜŨŪŬŮŰŲǓ][eèéêëēĕėęěEÈÉÊËĒĔĖĘĚ] [nñńņňNÑŃŅŇ][oòóôõöøōŏőǒOÒÓÔÕÖØŌŎŐǑ].*$&order=name&limit=50',
    );
    expect(referenceQuery(labels, undefined)).toBe('select=id,name&order=name&limit=50');
  });

  it('draws the summary with old and new values, cut to the width', () => {
    const out = renderSummary('Changes:', [{ field: 'name', before: 'Old', after: 'x'.repeat(200) }, { field: 'release_date', before: '2024-01-01', after: null }], style(false), 60);
    const lines = out.trimEnd().split('\n');
    expect(lines[1]).toMatch(/^ {2}name {10}Old → x+…$/);
    expect(lines[1].length).toBeLessThanOrEqual(60);
    expect(lines[2]).toBe('  release_date  2024-01-01 → (empty)');
  });
});

describe('interactive entry: interrupts, Esc, and references that fill their text copies (issue 17)', () => {
  it('Ctrl-C exits 130 without "error:", sending nothing', async () => {
    const t = terminal();
    const done = t.run(['genres', 'add', '--interactive']);
    await t.expect('? name');
    t.type('Half typed', KEY.ctrlC);
    expect(await done).toBe(130);
    expect(t.screen()).toContain('cancelled: nothing was sent');
    expect(t.screen()).not.toContain('error:');
    expect(await api('/genres?name=eq.Half%20typed')).toEqual([]);
  });

  it('Esc cancels the current question only: the field is skipped and the flow goes on', async () => {
    const t = terminal();
    const done = t.run(['countries', 'add', '--interactive']);
    await t.expect('? name');
    t.type('\x1b');
    await t.expect('name: skipped (Esc)');
    await t.expect('Add this country?');
    t.type('n', KEY.enter);
    expect(await done).toBe(0);
    expect(t.screen()).toContain('Nothing added');
  });

  it("a release's tracks are picked by ISRC or title, in order; a track's credits by artist name (issue 29)", async () => {
    const [one, two] = await api('/tracks', { method: 'POST', body: JSON.stringify([{ track_title: 'Opening Picked', isrc_code: 'QZPK12600001' }, { track_title: 'Closing Picked', isrc_code: 'QZPK12600002' }]) });
    const [rel] = await api('/releases', { method: 'POST', body: JSON.stringify({ release_title: 'Picked Tracks' }) });
    const t = terminal();
    const done = t.run(['releases', 'update', rel.id, '--interactive', '-o', 'json']);
    await t.expect('Which fields do you want to change?');
    const order = askableFields(builtinSchema().tables.get('releases')!).map((f) => f.name);
    t.type(KEY.down.repeat(order.indexOf('tracks')), KEY.space, KEY.enter);
    await t.expect('? tracks');
    t.type('qz-pk1-26-00001');
    await t.expect('QZPK12600001 · Opening Picked');
    t.type(KEY.enter);
    await t.expect('(done: 1. Opening Picked)');
    t.type('closing pick');
    await t.expect(two.id);
    t.type(KEY.enter);
    await t.expect('(done: 1. Opening Picked · 2. Closing Picked)');
    t.type(KEY.enter);
    await t.expect('Save these changes?');
    t.type(KEY.enter);
    expect(await done).toBe(0);
    expect(JSON.parse(t.stdout.text()).tracks).toEqual([{ id: one.id, position: 1 }, { id: two.id, position: 2 }]);

    const [artist] = await api('/artists', { method: 'POST', body: JSON.stringify({ stage_name: 'Zoë Picked' }) });
    const c = terminal();
    const credited = c.run(['tracks', 'update', one.id, '--interactive', '-o', 'json']);
    await c.expect('Which fields do you want to change?');
    const trackFields = askableFields(builtinSchema().tables.get('tracks')!).map((f) => f.name);
    c.type(KEY.down.repeat(trackFields.indexOf('writer_artists')), KEY.space, KEY.enter);
    await c.expect('? writer_artists');
    c.type('zoe pick');
    await c.expect(artist.id);
    c.type(KEY.enter);
    await c.expect('(done: Zoë Picked)');
    c.type(KEY.enter);
    await c.expect('Save these changes?');
    c.type(KEY.enter);
    expect(await credited).toBe(0);
    expect(JSON.parse(c.stdout.text()).writer_artists).toEqual([{ id: artist.id, name: 'Zoë Picked' }]);
  });

  it('picking a label, genre and subgenre fills label, genre and subgenre; the subgenre list holds only the genre\'s; a name with a line break stays one line', async () => {
    const label = (await api('/labels', { method: 'POST', body: JSON.stringify({ name: 'Two\nLines Records' }) }))[0];
    const genre = (await api('/genres', { method: 'POST', body: JSON.stringify({ name: 'Picked Genre' }) }))[0];
    const sub = (await api('/subgenres', { method: 'POST', body: JSON.stringify({ name: 'Picked Sub', genre: 'Picked Genre' }) }))[0];
    await api('/subgenres', { method: 'POST', body: JSON.stringify({ name: 'Other Genre Sub', genre: 'Not Picked' }) });
    const t = terminal();
    const done = t.run(['releases', 'add', '--interactive', '-o', 'json', 'release_title=Copied', `label_id=${label.id}`, `genre_id=${genre.id}`, `subgenre_id=${sub.id}`]);
    await t.expect('Which fields');
    t.type(KEY.enter);
    await t.expect('? release_title');
    t.type(KEY.enter);
    await t.expect('? release_date');
    t.type(KEY.enter);
    await t.expect('use: Two ⏎ Lines Records');
    t.type(KEY.enter);
    await t.expect('? genre_id');
    await t.expect('use: Picked Genre');
    t.type(KEY.enter);
    await t.expect('? subgenre_id');
    await t.expect('use: Picked Sub');
    expect(t.screen().slice(t.screen().lastIndexOf('? subgenre_id'))).not.toContain('Other Genre Sub');
    t.type(KEY.enter);
    await t.expect('Add this release?');
    t.type(KEY.enter);
    expect(await done).toBe(0);
    const stored = JSON.parse(t.stdout.text());
    expect(stored).toMatchObject({ release_title: 'Copied', label_id: label.id, label: 'Two\nLines Records', genre: 'Picked Genre', subgenre: 'Picked Sub' });
  });
});
