import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LINK_COMMENTS } from '../../src/schema/links.js';
import type { App } from '../../src/server/app.js';
import type { Store } from '../../src/store/store.js';
import { STORE_KINDS, disposeStore } from '../support/stores.js';
import { appFor, send } from './support.js';

/** Issue 29: the link fields' shapes checked on write, and the four computed relationships. */

const id = (prefix: string, n: number) => `${prefix}-0000-4000-8000-${String(n).padStart(12, '0')}`;
const A = [1, 2, 3, 4].map((n) => id('a0000029', n));
const T = Array.from({ length: 12 }, (_, i) => id('70000029', i + 1));
const R = [1, 2, 3].map((n) => id('20000029', n));
const CREDIT_FIELDS = ['primary_artists', 'featuring_artists', 'remix_artists', 'writer_artists', 'performer_artists', 'engineer_artists'];

/** Artist 0 is credited once in each of the six roles; release 0 lists the 12 tracks out of order. */
async function seedLinks(store: Store): Promise<void> {
  await store.transaction(async (tx) => {
    for (const t of ['releases', 'tracks', 'artists']) await tx.query(`delete from ${t}`);
    await tx.query(`insert into artists (id, stage_name) select unnest($1::uuid[]), unnest($2::text[])`, [A, ['Ada Wave', 'Bo Lights', 'Cy Drum', 'Unused']]);
    for (let i = 0; i < 12; i++) {
      const credits: Record<string, unknown> = { primary_artists: [{ id: A[1] }] };
      if (i < 6) credits[CREDIT_FIELDS[i]] = [...((credits[CREDIT_FIELDS[i]] as unknown[]) ?? []), { id: A[0], role: `role ${i}` }];
      if (i === 6) credits.writer_artists = [{ name: 'Outside Writer', share: 50 }, { id: A[2], share: 50 }];
      await tx.query(
        `insert into tracks (id, track_title, isrc_code, genre, ${Object.keys(credits).join(', ')}) values ($1, $2, $3, $4, ${Object.keys(credits).map((_, k) => `$${k + 5}::text::jsonb`).join(', ')})`,
        [T[i], `Song ${String(i + 1).padStart(2, '0')}`, `GBAAA26000${String(i + 1).padStart(2, '0')}`, i % 2 === 0 ? 'House' : 'Techno', ...Object.values(credits).map((v) => JSON.stringify(v))],
      );
    }
    // written in reverse: the release lists them by position all the same
    const links = T.map((t, i) => ({ id: t, position: i + 1 })).reverse();
    await tx.query(`insert into releases (id, release_title, tracks) values ($1, 'Twelve', $2::text::jsonb), ($3, 'Two', $4::text::jsonb), ($5, 'None', null)`, [
      R[0], JSON.stringify(links), R[1], JSON.stringify([{ id: T[3], position: 1, disc: 2 }, { id: T[0], position: 1 }]), R[2],
    ]);
  });
}

for (const { kind, make, skip } of STORE_KINDS) {
  describe.skipIf(skip)(`link fields and computed relationships over ${kind}${skip ? ' (SKIPPED: set CATALOG_TEST_DATABASE_URL)' : ''}`, () => {
    let store: Store & { drop?(): Promise<void> };
    let app: App & { logged: string[] };
    const get = (path: string) => send(app, 'GET', path);
    beforeAll(async () => {
      store = await make();
      app = appFor(store, { aggregates: true });
      await seedLinks(store);
    });
    afterAll(async () => {
      expect(app?.logged ?? []).toEqual([]);
      if (store) await disposeStore(store);
    });

    it('a release embeds its tracks in disc and position order', async () => {
      const r = await get(`/releases?select=release_title,tracks(track_title,isrc_code)&id=eq.${R[0]}`);
      expect(r.status, r.text).toBe(200);
      expect(r.json[0].tracks.map((t: { track_title: string }) => t.track_title)).toEqual(T.map((_, i) => `Song ${String(i + 1).padStart(2, '0')}`));
      const two = await get(`/releases?select=release_title,tracks(track_title)&id=eq.${R[1]}`);
      expect(two.json).toEqual([{ release_title: 'Two', tracks: [{ track_title: 'Song 01' }, { track_title: 'Song 04' }] }]);
      const none = await get(`/releases?select=release_title,tracks(track_title)&id=eq.${R[2]}`);
      expect(none.json).toEqual([{ release_title: 'None', tracks: [] }]);
    });

    it('the stored link is normalised: sorted, ids as written by the database', async () => {
      const r = await get(`/releases?select=tracks&id=eq.${R[0]}`);
      expect(r.json[0].tracks).toEqual(T.map((t, i) => ({ id: t, position: i + 1 })));
    });

    it("an artist's tracks across all six roles come back through one embed, each track once", async () => {
      const r = await get(`/artists?select=stage_name,tracks(track_title)&id=eq.${A[0]}`);
      expect(r.json).toEqual([{ stage_name: 'Ada Wave', tracks: ['01', '02', '03', '04', '05', '06'].map((n) => ({ track_title: `Song ${n}` })) }]);
      const primary = await get(`/artists?select=stage_name,tracks(count())&id=eq.${A[1]}`);
      expect(primary.json).toEqual([{ stage_name: 'Bo Lights', tracks: [{ count: 12 }] }]);
    });

    it('embedded filters, !inner, ordering and limits work inside the computed embeds', async () => {
      const house = await get('/artists?select=stage_name,tracks!inner(track_title)&tracks.genre=eq.House&tracks.order=track_title.desc&order=stage_name');
      expect(house.status, house.text).toBe(200);
      expect(house.json).toEqual([
        { stage_name: 'Ada Wave', tracks: ['05', '03', '01'].map((n) => ({ track_title: `Song ${n}` })) },
        { stage_name: 'Bo Lights', tracks: ['11', '09', '07', '05', '03', '01'].map((n) => ({ track_title: `Song ${n}` })) },
        { stage_name: 'Cy Drum', tracks: [{ track_title: 'Song 07' }] },
      ]);
      const limited = await get(`/releases?select=tracks(track_title)&id=eq.${R[0]}&tracks.limit=2&tracks.offset=1`);
      expect(limited.json).toEqual([{ tracks: [{ track_title: 'Song 02' }, { track_title: 'Song 03' }] }]);
      const counted = await send(app, 'GET', '/releases?select=release_title,tracks!inner()&tracks.isrc_code=eq.GBAAA2600004', { headers: { Prefer: 'count=exact' } });
      expect(counted.json.map((x: { release_title: string }) => x.release_title).sort()).toEqual(['Twelve', 'Two']);
      expect(counted.headers.get('content-range')).toBe('0-1/2');
    });

    it('a track embeds its releases and its artists (in credit order, primary first, each once)', async () => {
      const r = await get(`/tracks?select=track_title,releases(release_title),artists(stage_name)&id=eq.${T[0]}`);
      expect(r.json).toEqual([{ track_title: 'Song 01', releases: [{ release_title: 'Twelve' }, { release_title: 'Two' }], artists: [{ stage_name: 'Bo Lights' }, { stage_name: 'Ada Wave' }] }]);
      const writer = await get(`/tracks?select=writer_artists,artists(stage_name)&id=eq.${T[6]}`);
      expect(writer.json[0].artists).toEqual([{ stage_name: 'Bo Lights' }, { stage_name: 'Cy Drum' }]);
      expect(writer.json[0].writer_artists).toEqual([{ name: 'Outside Writer', share: 50 }, { id: A[2], name: 'Cy Drum', share: 50 }]);
    });

    it('an unknown relationship still gets PGRST200 naming the ones there are', async () => {
      const r = await get('/labels?select=name,tracks(track_title)');
      expect(r.status).toBe(400);
      expect(r.json.code).toBe('PGRST200');
    });

    it('a write answering with the representation embeds the computed relationship too', async () => {
      const r = await send(app, 'POST', '/releases?select=release_title,tracks(track_title)', {
        headers: { Prefer: 'return=representation' },
        body: { release_title: 'Fresh', tracks: [{ id: T[11], position: 1 }] },
      });
      expect(r.status, r.text).toBe(201);
      expect(r.json).toEqual([{ release_title: 'Fresh', tracks: [{ track_title: 'Song 12' }] }]);
      await send(app, 'DELETE', '/releases?release_title=eq.Fresh');
    });

    it.each([
      ['not an array', { tracks: { id: T[0] } }, 'tracks: must be an array, not object'],
      ['an element that is not an object', { tracks: [true] }, 'tracks[0]: must be an object, not boolean'],
      ['an unknown key', { tracks: [{ id: T[0], position: 1, track: 3 }] }, 'tracks[0]: unknown key "track" (a track link has id, position, disc)'],
      ['an id that is not a uuid', { tracks: [{ id: T[0], position: 1 }, { id: 'x', position: 2 }] }, 'tracks[1].id: must be a track id (a uuid)'],
      ['a position of 0', { tracks: [{ id: T[0], position: 0 }] }, 'tracks[0].position: must be a whole number from 1'],
      ['a fractional disc', { tracks: [{ id: T[0], position: 1, disc: 1.5 }] }, 'tracks[0].disc: must be a whole number from 1'],
      ['a duplicate position', { tracks: [{ id: T[0], position: 1 }, { id: T[1], position: 1, disc: 1 }] }, 'tracks[1].position: repeats position 1 of disc 1 (tracks[0])'],
    ])('a release whose tracks hold %s is refused with 400 and the path of the element', async (_what, body, message) => {
      const r = await send(app, 'POST', '/releases', { body: { release_title: 'Bad', ...body } });
      expect(r.status, r.text).toBe(400);
      expect(r.json).toMatchObject({ code: '23514', message });
      expect(r.json.hint).toContain('releases.tracks is an array of');
    });

    it.each([
      ['a name that is not text', { primary_artists: [{ name: 5 }] }, 'primary_artists[0].name: must be text, not number'],
      ['neither id nor name', { writer_artists: [{ share: 10 }] }, 'writer_artists[0]: needs a "name" (or the "id" of an artist in the catalog)'],
      ['a share over 100', { writer_artists: [{ name: 'X', share: 120 }] }, 'writer_artists[0].share: must be a number from 0 to 100'],
      ['a role that is not text', { remix_artists: [{ name: 'X', role: ['a'] }] }, 'remix_artists[0].role: must be text, not array'],
    ])('a track whose credits hold %s is refused with 400 and the path', async (_what, body, message) => {
      const r = await send(app, 'POST', '/tracks', { body: { track_title: 'Bad', ...body } });
      expect(r.status, r.text).toBe(400);
      expect(r.json).toMatchObject({ code: '23514', message });
    });

    it('an id that names nothing is refused as a foreign key is: 409 23503', async () => {
      const ghost = id('dead0029', 1);
      const rel = await send(app, 'POST', '/releases', { body: { release_title: 'Bad', tracks: [{ id: ghost, position: 1 }] } });
      expect(rel.status).toBe(409);
      expect(rel.json).toMatchObject({ code: '23503', message: `tracks[0].id: no track has id ${ghost}` });
      const tr = await send(app, 'PATCH', `/tracks?id=eq.${T[0]}`, { body: { featuring_artists: [{ id: ghost }] } });
      expect(tr.status).toBe(409);
      expect(tr.json).toMatchObject({ code: '23503', message: `featuring_artists[0].id: no artist has id ${ghost}` });
    });

    it('keys in place of link objects resolve: ISRCs (with separators too) or ids as a `;` string or an array, artist names ignoring case and accents', async () => {
      const isrcs = `GBAAA2600003; gb-aaa-26-00001 ;${T[1]}`;
      const r = await send(app, 'POST', '/releases?select=tracks,t:tracks(track_title)', { headers: { Prefer: 'return=representation' }, body: { release_title: 'Keys', tracks: isrcs } });
      expect(r.status, r.text).toBe(201);
      expect(r.json[0].tracks).toEqual([{ id: T[2], position: 1 }, { id: T[0], position: 2 }, { id: T[1], position: 3 }]);
      expect(r.json[0].t.map((x: { track_title: string }) => x.track_title)).toEqual(['Song 03', 'Song 01', 'Song 02']);
      await send(app, 'DELETE', '/releases?release_title=eq.Keys');
      const t = await send(app, 'POST', '/tracks?select=primary_artists,writer_artists', { headers: { Prefer: 'return=representation' }, body: { track_title: 'Keys', primary_artists: ['ada  WAVE', A[1]], writer_artists: 'cy drum; Bo Lights' } });
      expect(t.status, t.text).toBe(201);
      expect(t.json[0]).toEqual({
        primary_artists: [{ id: A[0], name: 'Ada Wave' }, { id: A[1], name: 'Bo Lights' }],
        writer_artists: [{ id: A[2], name: 'Cy Drum' }, { id: A[1], name: 'Bo Lights' }],
      });
      await send(app, 'DELETE', '/tracks?track_title=eq.Keys');
    });

    it('an unknown key is refused with 409 and a did-you-mean', async () => {
      const r = await send(app, 'POST', '/releases', { body: { release_title: 'Keys', tracks: 'GBAAA2600001;GBAAA2600099' } });
      expect(r.status, r.text).toBe(409);
      expect(r.json).toMatchObject({ code: '23503', message: 'tracks[1]: no track has ISRC GBAAA2600099', hint: expect.stringMatching(/^did you mean GBAAA2600009(, |\?)/) });
      const a = await send(app, 'POST', '/tracks', { body: { track_title: 'Keys', primary_artists: 'Ada Wav' } });
      expect(a.status, a.text).toBe(409);
      expect(a.json).toMatchObject({ code: '23503', message: 'primary_artists[0]: no artist is named "Ada Wav"', hint: 'did you mean "Ada Wave"?' });
    });

    it('new rows whose credits look right at a glance are checked all at once: an unknown id is refused, a wrong name is replaced by the stage name', async () => {
      const ghost = id('dead0029', 2);
      const r = await send(app, 'POST', '/tracks', { body: [{ track_title: 'Glance 1', remix_artists: [{ id: A[2], name: 'Cy Drum' }] }, { track_title: 'Glance 2', remix_artists: [{ id: ghost, name: 'Ghost' }] }] });
      expect(r.status, r.text).toBe(409);
      expect(r.json).toMatchObject({ code: '23503', message: `remix_artists[0].id: no artist has id ${ghost}` });
      expect((await get('/tracks?track_title=like.Glance*')).json).toEqual([]);
      const ok = await send(app, 'POST', '/tracks', { body: [{ track_title: 'Glance 3', primary_artists: [{ id: A[2], name: 'Not Cy' }, { name: 'Someone Else' }] }] });
      expect(ok.status, ok.text).toBe(201);
      expect((await get('/tracks?select=primary_artists&track_title=eq.Glance 3')).json).toEqual([{ primary_artists: [{ id: A[2], name: 'Cy Drum' }, { name: 'Someone Else' }] }]);
      await send(app, 'DELETE', '/tracks?track_title=like.Glance*');
    });

    it('a renamed artist shows the new name in every credit that names it, through the column and the embed', async () => {
      const before = await get(`/tracks?select=id&writer_artists=cs.${encodeURIComponent(JSON.stringify([{ id: A[2] }]))}`);
      expect(before.json).toEqual([{ id: T[6] }]);
      const r = await send(app, 'PATCH', `/artists?id=eq.${A[0]}`, { body: { stage_name: 'Ada Tide' } });
      expect(r.status, r.text).toBe(204);
      const tracks = await get(`/tracks?select=id,${CREDIT_FIELDS.join(',')}&order=id`);
      const names = tracks.json.flatMap((t: Record<string, unknown>) =>
        CREDIT_FIELDS.flatMap((f) => ((t[f] as Array<{ id?: string; name: string }> | null) ?? []).filter((c) => c.id === A[0]).map((c) => c.name)),
      );
      expect(names).toEqual(Array(6).fill('Ada Tide'));
      const embed = await get(`/tracks?select=artists(stage_name)&id=eq.${T[0]}`);
      expect(embed.json[0].artists).toEqual([{ stage_name: 'Bo Lights' }, { stage_name: 'Ada Tide' }]);
      await send(app, 'PATCH', `/artists?id=eq.${A[0]}`, { body: { stage_name: 'Ada Wave' } });
    });

    it('the link fields carry their shape as the column comment, which the root description shows as PostgREST does', async () => {
      const { rows } = await store.query<{ comment: string | null }>(`select col_description('releases'::regclass, a.attnum) as comment from pg_attribute a where a.attrelid = 'releases'::regclass and a.attname = 'tracks'`);
      expect(rows[0].comment).toBe(LINK_COMMENTS.releases.tracks);
      const root = await get('/');
      expect(root.json.definitions.releases.properties.tracks.description).toBe(LINK_COMMENTS.releases.tracks);
      expect(root.json.definitions.tracks.properties.writer_artists.description).toBe(LINK_COMMENTS.tracks.writer_artists);
    });

    it('each computed-relationship function returns exactly the rows the embed answers, in the same order (direct SQL)', async () => {
      const pairs: Array<[string, string, string]> = [
        ['releases', 'tracks', 'r'],
        ['tracks', 'releases', 't'],
        ['tracks', 'artists', 't'],
        ['artists', 'tracks', 'a'],
      ];
      let compared = 0;
      for (const [from, to] of pairs) {
        const served = await get(`/${from}?select=id,${to}(id)&order=id`);
        expect(served.status, served.text).toBe(200);
        const { rows } = await store.query<{ id: string; ids: string[] | null }>(
          `select p.id::text as id, (select array_agg(x.id::text) from ${to}(p) as x) as ids from ${from} as p order by p.id`,
        );
        expect(served.json.map((x: { id: string; [k: string]: unknown }) => ({ id: x.id, ids: (x[to] as Array<{ id: string }>).map((y) => y.id) }))).toEqual(
          rows.map((x) => ({ id: x.id, ids: x.ids ?? [] })),
        );
        compared += rows.filter((x) => (x.ids ?? []).length > 0).length;
      }
      expect(compared).toBeGreaterThan(15);
    });
  });
}
