import { describe, expect, it } from 'vitest';
import type { EmbedNode, OutItem, PlannedCondition, ReadNode } from '../../src/server/plan.js';
import { failure, planned, readPlan, writePlan } from './support-pure.js';

/**
 * The planner without a database: a request goes through the service's own parser and
 * `planRequest`, and the plan is read as the later stages read it (items, conditions, order,
 * page, conflict columns, the decisions a write carries). The SQL each plan becomes is in
 * sql-pure.test.ts; the same requests against a real store are in read.test.ts and write.test.ts.
 */

const L1 = '1ab00000-0000-4000-8000-000000000001';

/** The keys a level outputs, in order. */
const keys = (n: ReadNode): string[] => n.items.map((i) => (i.kind === 'spread' ? `...${i.embed.key}` : i.key));
const columnItem = (n: ReadNode, key: string): Extract<OutItem, { kind: 'column' }> => {
  const item = n.items.find((i) => i.kind === 'column' && i.key === key);
  if (!item || item.kind !== 'column') throw new Error(`no column item ${key} in ${keys(n).join(',')}`);
  return item;
};
const embedAt = (n: ReadNode, key: string): EmbedNode => {
  const e = n.embeds.find((x) => x.key === key);
  if (!e) throw new Error(`no embed ${key}`);
  return e;
};
/** A condition as a short readable line: `release_title like %x`, `or(…)`, `labels is null`. */
function show(c: PlannedCondition): string {
  if (c.kind === 'embed-null') return `${c.embed.key} is ${c.isNull ? '' : 'not '}null`;
  if (c.kind === 'tree') return `${c.negated ? 'not.' : ''}${c.op}(${c.conditions.map(show).join(', ')})`;
  const f = c.filter;
  const path = c.ref.jsonPath.map((s) => `${s.arrow}${s.key}`).join('');
  return `${f.negated ? 'not.' : ''}${c.ref.column.name}${path} ${f.op}${f.modifier ? `(${f.modifier})` : ''} ${JSON.stringify(f.value)}`;
}

describe('read plans: select', () => {
  it('no select is every column of the table, in table order, on alias t1', async () => {
    const p = await readPlan('/labels');
    expect(p.root.alias).toBe('t1');
    expect(p.root.table.name).toBe('labels');
    expect(keys(p.root)).toEqual(['id', 'name', 'created', 'updated']);
    expect(p.root.embeds).toEqual([]);
    expect(p.count).toBeNull();
    expect(p.head).toBe(false);
  });

  it('renames, casts and JSON paths: the alias names the key, else the last JSON key that is no index', async () => {
    const p = await readPlan('/releases?select=title:release_title,contracts->>format,y:contracts->year::int,contracts->tags->0,release_date::text');
    expect(keys(p.root)).toEqual(['title', 'format', 'y', 'tags', 'release_date']);
    expect(columnItem(p.root, 'title').ref.column.name).toBe('release_title');
    expect(columnItem(p.root, 'y')).toMatchObject({ cast: 'int', ref: { jsonPath: [{ arrow: '->', key: 'year' }] } });
    expect(columnItem(p.root, 'tags').ref.jsonPath).toEqual([
      { arrow: '->', key: 'tags' },
      { arrow: '->', key: '0' },
    ]);
    expect(columnItem(p.root, 'release_date').cast).toBe('text');
    expect(columnItem(p.root, 'format').cast).toBeUndefined();
  });

  it('the computed field source_ids is selectable by name, marked computed, and not part of *', async () => {
    const star = await readPlan('/labels?select=*');
    expect(keys(star.root)).not.toContain('source_ids');
    const p = await readPlan('/labels?select=id,source_ids,legacy:source_ids->>legacy');
    expect(columnItem(p.root, 'source_ids').ref.computed?.name).toBe('labels');
    expect(columnItem(p.root, 'legacy').ref).toMatchObject({ computed: { name: 'labels' }, jsonPath: [{ arrow: '->>', key: 'legacy' }] });
  });

  it('a to-one embed (releases → labels) and a to-many one (labels → releases), nested, get their own aliases', async () => {
    const p = await readPlan('/releases?select=id,labels(name,releases(id))');
    const labels = embedAt(p.root, 'labels');
    expect(labels).toMatchObject({ toOne: true, inner: false, spread: false, alias: 't2', names: ['labels'] });
    expect(labels.relationship).toMatchObject({ from: 'releases', to: 'labels', fkColumn: 'label_id', cardinality: 'many-to-one' });
    const releases = embedAt(labels, 'releases');
    expect(releases).toMatchObject({ toOne: false, alias: 't3', lateral: 'e1' });
    expect(releases.relationship).toMatchObject({ from: 'labels', to: 'releases', fkColumn: 'label_id', cardinality: 'one-to-many' });
    // the inner embed is planned first, so it takes the first lateral alias
    expect(labels.lateral).toBe('e2');
    expect(keys(p.root)).toEqual(['id', 'labels']);
    expect(keys(labels)).toEqual(['name', 'releases']);
  });

  it('an embed alias, !inner, a constraint hint and the FK column as target all resolve to the same relationship', async () => {
    const p = await readPlan('/releases?select=l:labels!inner(name),k:labels!releases_label_id_fkey(id),by_fk:label_id(name)');
    const l = embedAt(p.root, 'l');
    expect(l).toMatchObject({ names: ['l', 'labels'], inner: true, toOne: true });
    expect(embedAt(p.root, 'k').relationship.constraint).toBe('releases_label_id_fkey');
    expect(embedAt(p.root, 'by_fk').relationship).toMatchObject({ to: 'labels', fkColumn: 'label_id' });
    expect(keys(p.root)).toEqual(['l', 'k', 'by_fk']);
  });

  it('an empty embed joins for filtering but outputs no key; a spread outputs its embed inline', async () => {
    const p = await readPlan('/releases?select=id,labels!inner(),...genres(genre_name:name)');
    expect(p.root.embeds.map((e) => e.key)).toEqual(['labels', 'genres']);
    expect(keys(p.root)).toEqual(['id', '...genres']);
    expect(embedAt(p.root, 'genres').spread).toBe(true);
  });

  it('a computed relationship (releases → tracks) is a to-many embed without a FK column', async () => {
    const p = await readPlan('/releases?select=id,tracks(track_title)');
    const tracks = embedAt(p.root, 'tracks');
    expect(tracks.toOne).toBe(false);
    expect(tracks.relationship).toMatchObject({ computed: true, fkColumn: '', from: 'releases', to: 'tracks' });
  });

  it('aggregates: count() and a cast sum keep their keys; aggregates beside a JSON embed are PGRST123', async () => {
    const p = await readPlan('/releases?select=genre,count(),total:release_date::text.max()');
    expect(p.root.items).toMatchObject([
      { kind: 'column', key: 'genre' },
      { kind: 'aggregate', key: 'count', fn: 'count', ref: null },
      { kind: 'aggregate', key: 'total', fn: 'max', fieldCast: 'text' },
    ]);
    const err = await failure(readPlan('/labels?select=count(),releases(id)'));
    expect(err).toMatchObject({ status: 400, code: 'PGRST123', message: 'Aggregates cannot be combined with embedded resources on the same level here' });
  });
});

describe('read plans: filters', () => {
  it('root filters, embedded filters and embed null checks land on their own levels', async () => {
    const p = await readPlan('/releases?select=id,labels(name)&release_title=like.*Blue*&labels.name=eq.Verve&labels=not.is.null&label_id=is.null');
    expect(p.root.where.map(show)).toEqual(['release_title like "*Blue*"', 'labels is not null', 'label_id is "null"']);
    expect(embedAt(p.root, 'labels').where.map(show)).toEqual(['name eq "Verve"']);
  });

  it('or=/and= trees nest, negations and in-lists are kept as parsed', async () => {
    const p = await readPlan('/releases?or=(release_title.ilike.*blue*,and(label_id.is.null,is_compilation.not.is.true))&not.and=(genre.eq.a,catalog_number.in.(x,"y,z"))');
    expect(p.root.where.map(show)).toEqual([
      'or(release_title ilike "*blue*", and(label_id is "null", not.is_compilation is "true"))',
      'not.and(genre eq "a", catalog_number in ["x","y,z"])',
    ]);
  });

  it('JSON path filters keep their steps; source_ids->>legacy is the computed field', async () => {
    const p = await readPlan('/releases?contracts->>format=eq.cd&contracts->tags->0=eq.jazz&source_ids->>legacy=in.(1,2)');
    expect(p.root.where.map(show)).toEqual(['contracts->>format eq "cd"', 'contracts->tags->0 eq "jazz"', 'source_ids->>legacy in ["1","2"]']);
    const last = p.root.where[2];
    expect(last.kind === 'filter' && last.ref.computed?.name).toBe('releases');
  });

  it('a filter on an embed that is not selected is PGRST108', async () => {
    const err = await failure(readPlan('/releases?select=id&labels.name=eq.x'));
    expect(err).toMatchObject({ status: 400, code: 'PGRST108', message: "'labels' is not an embedded resource in this request" });
    expect(err.hint).toBe("Verify that 'labels' is included in the 'select' query parameter.");
  });
});

describe('read plans: order, page, count', () => {
  it('order terms keep direction and nulls; an order on a to-one embed is exported by its lateral', async () => {
    const p = await readPlan('/releases?select=id,labels(name)&order=labels(name).desc.nullslast,release_date.asc.nullsfirst,id&labels.order=name.desc');
    expect(p.root.order.map((o) => [o.embed?.key ?? null, o.ref.column.name, o.direction, o.nulls, o.exportIndex])).toEqual([
      ['labels', 'name', 'desc', 'last', 0],
      [null, 'release_date', 'asc', 'first', undefined],
      [null, 'id', undefined, undefined, undefined],
    ]);
    const labels = embedAt(p.root, 'labels');
    expect(labels.orderExports.map((r) => r.column.name)).toEqual(['name']);
    expect(labels.order.map((o) => [o.ref.column.name, o.direction])).toEqual([['name', 'desc']]);
  });

  it('ordering by a to-many embed is PGRST118; by an embed not selected PGRST108', async () => {
    expect(await failure(readPlan('/labels?select=id,releases(id)&order=releases(release_title)'))).toMatchObject({
      status: 400,
      code: 'PGRST118',
      message: "A related order on 'releases' is not possible",
      details: "'labels' and 'releases' do not form a many-to-one or one-to-one relationship",
    });
    expect(await failure(readPlan('/releases?select=id&order=labels(name)'))).toMatchObject({ code: 'PGRST108' });
  });

  it('limit and offset page the root; offset=0 is no offset', async () => {
    const p = await readPlan('/labels?limit=5&offset=10');
    expect([p.root.limit, p.root.offset]).toEqual([5, 10]);
    const q = await readPlan('/labels?limit=5&offset=0');
    expect([q.root.limit, q.root.offset]).toEqual([5, undefined]);
  });

  it('a Range header intersects limit/offset', async () => {
    const r = await readPlan('/labels', { headers: { Range: '5-9' } });
    expect([r.root.limit, r.root.offset]).toEqual([5, 5]);
    const both = await readPlan('/labels?limit=3&offset=2', { headers: { Range: '0-3' } });
    // rows 2..4 from limit/offset, 0..3 from Range: rows 2..3
    expect([both.root.limit, both.root.offset]).toEqual([2, 2]);
    const wide = await readPlan('/labels?limit=3&offset=2', { headers: { Range: '0-10' } });
    expect([wide.root.limit, wide.root.offset]).toEqual([3, 2]);
    const open = await readPlan('/labels', { headers: { Range: '7-' } });
    expect([open.root.limit, open.root.offset]).toEqual([undefined, 7]);
  });

  it('db-max-rows caps the root and every to-many embed, not a to-one embed', async () => {
    const p = await readPlan('/labels?select=id,releases(id,labels(id))&limit=50&releases.limit=3', { maxRows: 10 });
    expect(p.root.limit).toBe(10);
    const releases = embedAt(p.root, 'releases');
    expect(releases.limit).toBe(3);
    expect(embedAt(releases, 'labels').limit).toBeUndefined();
    const uncapped = await readPlan('/labels?select=id,releases(id)', { maxRows: 10 });
    expect(embedAt(uncapped.root, 'releases').limit).toBe(10);
  });

  it('an embed page: releases.limit and releases.offset; a negative embed limit is 416 PGRST103', async () => {
    const p = await readPlan('/labels?select=id,releases(id)&releases.limit=2&releases.offset=4');
    expect([embedAt(p.root, 'releases').limit, embedAt(p.root, 'releases').offset]).toEqual([2, 4]);
    expect(await failure(readPlan('/labels?select=id,releases(id)&releases.limit=-1'))).toMatchObject({ status: 416, code: 'PGRST103' });
  });

  it('count=exact/planned/estimated are the plan count; count=none and no count are null; HEAD is head', async () => {
    for (const mode of ['exact', 'planned', 'estimated'] as const) {
      expect((await readPlan('/labels', { headers: { Prefer: `count=${mode}` } })).count).toBe(mode);
    }
    expect((await readPlan('/labels', { headers: { Prefer: 'count=none' } })).count).toBeNull();
    expect((await readPlan('/labels', {}, 'HEAD')).head).toBe(true);
  });

  it('content negotiation: CSV, the singular object, nulls=stripped; an unknown type is 406 PGRST107', async () => {
    expect((await planned('GET', '/labels', { headers: { Accept: 'text/csv' } })).representation).toMatchObject({ format: 'csv', singular: false });
    expect((await planned('GET', '/labels', { headers: { Accept: 'application/vnd.pgrst.object+json' } })).representation).toMatchObject({ format: 'object', singular: true });
    expect((await planned('GET', '/labels', { headers: { Accept: 'application/vnd.pgrst.array+json;nulls=stripped' } })).representation.format).toBe('json-stripped');
    expect(await failure(planned('GET', '/labels', { headers: { Accept: 'image/png' } }))).toMatchObject({
      status: 406,
      code: 'PGRST107',
      message: 'None of these media types are available: image/png',
    });
  });
});

describe('read plans: refused requests', () => {
  it('an unknown column in select, a filter, an order, a JSON path base, an embed: 42703 naming table and column', async () => {
    const cases: Array<[string, string]> = [
      ['/labels?select=id,nope', 'column labels.nope does not exist'],
      ['/labels?nope=eq.1', 'column labels.nope does not exist'],
      ['/labels?order=nope.desc', 'column labels.nope does not exist'],
      ['/labels?nope->>a=eq.1', 'column labels.nope does not exist'],
      ['/releases?select=id,labels(nope)', 'column labels.nope does not exist'],
      ['/releases?select=id,labels(name)&labels.nope=eq.1', 'column labels.nope does not exist'],
      ['/releases?select=id,labels(name)&order=labels(nope)', 'column labels.nope does not exist'],
      ['/releases?select=genre,nope.sum()', 'column releases.nope does not exist'],
    ];
    for (const [path, message] of cases) {
      expect(await failure(readPlan(path)), path).toMatchObject({ status: 400, code: '42703', message });
    }
  });

  it('an unknown embed is PGRST200 with a did-you-mean hint for a near name', async () => {
    const err = await failure(readPlan('/releases?select=id,lables(name)'));
    expect(err).toMatchObject({
      status: 400,
      code: 'PGRST200',
      message: "Could not find a relationship between 'releases' and 'lables' in the schema cache",
      details: "Searched for a foreign key relationship between 'releases' and 'lables' in the schema 'public', but no matches were found.",
      hint: "Perhaps you meant 'labels' instead of 'lables'.",
    });
    const far = await failure(readPlan('/releases?select=id,zzzzzz(name)'));
    expect(far).toMatchObject({ code: 'PGRST200', hint: null });
    const hinted = await failure(readPlan('/releases?select=id,labels!nope(name)'));
    expect(hinted.details).toBe("Searched for a foreign key relationship between 'releases' and 'labels' using the hint 'nope' in the schema 'public', but no matches were found.");
  });

  it('a spread of a to-many embed is PGRST119', async () => {
    expect(await failure(readPlan('/labels?select=id,...releases(id)'))).toMatchObject({
      status: 400,
      code: 'PGRST119',
      message: "A spread operation on 'releases' is not possible",
    });
  });

  it('a cast to a name that is no type name is 42704 (the grammar takes `$` and any letter, the planner only [A-Za-z0-9_ ])', async () => {
    const ok = await readPlan('/labels?select=name::character varying');
    expect(columnItem(ok.root, 'name').cast).toBe('character varying');
    for (const [path, type] of [
      ['/labels?select=name::te$xt', 'te$xt'],
      ['/labels?select=name::täxt', 'täxt'],
      ['/releases?select=release_date::da$te.max()', 'da$te'],
      ['/releases?select=count()::in$t', 'in$t'],
    ]) {
      expect(await failure(readPlan(path)), path).toMatchObject({ status: 400, code: '42704', message: `type "${type}" does not exist` });
    }
  });

  it('handling=strict refuses an invalid preference (PGRST122), but our match= is valid', async () => {
    expect(await failure(planned('GET', '/labels', { headers: { Prefer: 'handling=strict, bogus=1' } }))).toMatchObject({
      status: 400,
      code: 'PGRST122',
      message: 'Invalid preferences given with handling=strict',
      details: 'Invalid preferences: bogus=1',
    });
    const p = await planned('POST', '/tracks', { body: [{ isrc_code: 'X' }], headers: { Prefer: 'handling=strict, resolution=merge-duplicates, match=isrc_code' } });
    expect(p.prefs.invalid).toEqual([]);
  });
});

describe('write plans', () => {
  it('POST: columns in body order, minimal return by default, no conflict handling', async () => {
    const body = [
      { name: 'a', id: L1 },
      { name: 'b', id: '1ab00000-0000-4000-8000-000000000002' },
    ];
    const pl = await planned('POST', '/labels', { body });
    expect(pl.returnMode).toBe('minimal');
    const p = pl.plan;
    if (p.kind === 'read') throw new Error('write expected');
    expect(p).toMatchObject({ kind: 'insert', representation: false, wantKeys: false, missingDefault: false, skipUnchanged: false, staged: false, match: null, sourceIds: false });
    expect(p.columns.map((c) => c.name)).toEqual(['name', 'id']);
    expect(p.onConflict).toBeUndefined();
    expect(p.payload).toMatchObject({ rows: 2, json: JSON.stringify(body) });
  });

  it('return=representation and return=headers-only decide the representation and the keys', async () => {
    const rep = await planned('POST', '/labels', { body: { name: 'a' }, headers: { Prefer: 'return=representation' } });
    expect([rep.returnMode, rep.plan.kind !== 'read' && rep.plan.representation]).toEqual(['representation', true]);
    const hdr = await writePlan('POST', '/labels', { body: { name: 'a' }, headers: { Prefer: 'return=headers-only' } });
    expect([hdr.representation, hdr.wantKeys]).toEqual([false, true]);
    const none = await planned('POST', '/labels', { body: { name: 'a' }, headers: { Prefer: 'return=none' } });
    expect(none.returnMode).toBe('minimal');
  });

  it('resolution=merge-duplicates / ignore-duplicates upsert on the primary key, or on on_conflict', async () => {
    const merge = await writePlan('POST', '/labels', { body: [{ name: 'a' }], headers: { Prefer: 'resolution=merge-duplicates' } });
    expect(merge.onConflict).toMatchObject({ action: 'merge', columns: [{ name: 'id' }] });
    const ignore = await writePlan('POST', '/labels?on_conflict=name', { body: [{ name: 'a' }], headers: { Prefer: 'resolution=ignore-duplicates' } });
    expect(ignore.onConflict).toMatchObject({ action: 'ignore', columns: [{ name: 'name' }] });
    // on_conflict without a resolution is checked but changes nothing
    expect((await writePlan('POST', '/labels?on_conflict=name', { body: [{ name: 'a' }] })).onConflict).toBeUndefined();
  });

  it('missing=default, columns= and unchanged=skip', async () => {
    const p = await writePlan('POST', '/labels?columns=name', {
      body: [{ name: 'a', ignored: 1 }, { id: L1 }],
      headers: { Prefer: 'missing=default, resolution=merge-duplicates, unchanged=skip' },
    });
    expect(p.columns.map((c) => c.name)).toEqual(['name']);
    expect(p.missingDefault).toBe(true);
    expect(p.skipUnchanged).toBe(true);
    expect(p.payload?.uniform).toBe(false);
    // unchanged=skip is for inserts only
    expect((await writePlan('PATCH', '/labels?id=eq.x', { body: { name: 'a' }, headers: { Prefer: 'unchanged=skip' } })).skipUnchanged).toBe(false);
  });

  it('PATCH: root filters choose the rows; limit with order is a limited write', async () => {
    const p = await writePlan('PATCH', '/labels?name=like.B*&order=name.desc.nullsfirst&limit=2&offset=1', { body: { name: 'z' } });
    expect(p.kind).toBe('update');
    expect(p.where.map(show)).toEqual(['name like "B*"']);
    expect(p.root.where).toEqual([]);
    expect(p.limited).toMatchObject({ limit: 2, offset: 1, order: [{ ref: { column: { name: 'name' } }, direction: 'desc', nulls: 'first' }] });
    expect(p.columns.map((c) => c.name)).toEqual(['name']);
  });

  it('PATCH/DELETE: an embed null check shapes the representation, not the rows written', async () => {
    const p = await writePlan('DELETE', '/releases?select=id,labels(name)&labels=is.null&release_title=eq.x', { headers: { Prefer: 'return=representation' } });
    expect(p.where.map(show)).toEqual(['release_title eq "x"']);
    expect(p.root.where.map(show)).toEqual(['labels is null']);
    expect(p.payload).toBeNull();
    expect(p.columns).toEqual([]);
  });

  it('a limit without order on PATCH/DELETE is PGRST109; a negative limit 416; order by an embed PGRST108', async () => {
    expect(await failure(writePlan('DELETE', '/labels?limit=2'))).toMatchObject({ status: 400, code: 'PGRST109', message: "A 'limit' was applied without an explicit 'order'" });
    expect(await failure(writePlan('DELETE', '/labels?order=name&limit=-1'))).toMatchObject({ status: 416, code: 'PGRST103' });
    expect(await failure(writePlan('DELETE', '/releases?select=id,labels(name)&order=labels(name)&limit=1'))).toMatchObject({ code: 'PGRST108' });
  });

  it('PUT: filters must be eq on every primary key column (405 PGRST105); no limit (PGRST114); it merges on the key', async () => {
    const p = await writePlan('PUT', `/labels?id=eq.${L1}`, { body: { id: L1, name: 'b' } });
    expect(p.kind).toBe('put');
    expect(p.onConflict).toMatchObject({ action: 'merge', columns: [{ name: 'id' }] });
    expect(p.where.map(show)).toEqual([`id eq "${L1}"`]);
    for (const path of ['/labels?name=eq.x', `/labels?id=neq.${L1}`, `/labels?id=eq.${L1}&name=eq.b`, '/labels', `/labels?id=not.eq.${L1}`]) {
      expect(await failure(writePlan('PUT', path, { body: { id: L1, name: 'b' } }))).toMatchObject({
        status: 405,
        code: 'PGRST105',
        message: "Filters must include all and only primary key columns with 'eq' operators",
      });
    }
    expect(await failure(writePlan('PUT', `/labels?id=eq.${L1}&limit=1`, { body: { id: L1 } }))).toMatchObject({ status: 400, code: 'PGRST114' });
  });

  it('a body key that is no column is PGRST204; an unknown on_conflict column 42703', async () => {
    expect(await failure(writePlan('POST', '/labels', { body: [{ nmae: 'a' }] }))).toMatchObject({
      status: 400,
      code: 'PGRST204',
      message: "Could not find the 'nmae' column of 'labels' in the schema cache",
    });
    expect(await failure(writePlan('POST', '/labels?on_conflict=nope', { body: [{ name: 'a' }], headers: { Prefer: 'resolution=merge-duplicates' } }))).toMatchObject({
      status: 400,
      code: '42703',
      message: 'column labels.nope does not exist',
    });
  });
});

describe('write plans: source ids and match= (our extensions)', () => {
  it('match= on a merge upsert is planned: alternatives resolved, the insert staged, id written first', async () => {
    const p = await writePlan('POST', '/tracks', {
      body: [{ isrc_code: 'X1', track_title: 't' }],
      headers: { Prefer: 'resolution=merge-duplicates, match=source_ids.legacy|isrc_code+track_title' },
    });
    expect(p.match).toEqual([
      { kind: 'source', source: 'legacy' },
      { kind: 'key', columns: [expect.objectContaining({ name: 'isrc_code' }), expect.objectContaining({ name: 'track_title' })] },
    ]);
    expect(p.staged).toBe(true);
    expect(p.columns.map((c) => c.name)).toEqual(['id', 'isrc_code', 'track_title']);
  });

  it('match= without a resolution does not apply (as PostgREST drops a preference it cannot apply)', async () => {
    const p = await writePlan('POST', '/tracks', { body: [{ isrc_code: 'X1' }], headers: { Prefer: 'match=isrc_code' } });
    expect([p.match, p.staged]).toEqual([null, false]);
    expect(p.columns.map((c) => c.name)).toEqual(['isrc_code']);
  });

  it('match= refuses an upsert off the primary key (PGRST100) and an unknown column (42703)', async () => {
    const off = await failure(writePlan('POST', '/tracks?on_conflict=isrc_code', { body: [{ isrc_code: 'X' }], headers: { Prefer: 'resolution=merge-duplicates, match=isrc_code' } }));
    expect(off).toMatchObject({ status: 400, code: 'PGRST100', message: '"failed to parse Prefer match (isrc_code)"' });
    expect(off.details).toMatch(/upsert must be on the primary key/);
    const unknown = await failure(writePlan('POST', '/tracks', { body: [{ isrc_code: 'X' }], headers: { Prefer: 'resolution=merge-duplicates, match=isrcc' } }));
    expect(unknown).toMatchObject({ status: 400, code: '42703', message: 'column tracks.isrcc does not exist', hint: "match=isrcc: a key is made of tracks's columns" });
    const bad = await failure(writePlan('POST', '/tracks', { body: [{ isrc_code: 'X' }], headers: { Prefer: 'resolution=merge-duplicates, match=a||b' } }));
    expect(bad).toMatchObject({ code: 'PGRST100' });
  });

  it('a body with source_ids is staged and carries them outside the columns', async () => {
    const p = await writePlan('POST', '/labels', { body: [{ name: 'a', source_ids: { legacy: '201' } }] });
    expect([p.sourceIds, p.staged, p.match]).toEqual([true, true, null]);
    expect(p.columns.map((c) => c.name)).toEqual(['id', 'name']);
    expect(p.payload?.keys).toEqual(['name']);
  });
});
