import { describe, expect, it } from 'vitest';
import { schemaResolver } from '../../src/cli/output.js';
import { builtinSchema } from '../../src/schema/catalog.js';
import { embedsOf, flatTypes, flattenRow, type SelectResolver } from '../../src/format/flatten.js';
import { createWriter, type Row } from '../../src/format/index.js';
import { abbreviate } from '../../src/format/table.js';
import { parseSelect } from '../../src/grammar/parse.js';
import { bufferOutput } from '../../src/io/streams.js';

/** A small schema: releases → labels → countries (to-one), releases ← tracks (to-many). */
const resolver: SelectResolver = {
  fields: (table) =>
    ({
      releases: [{ name: 'id', type: 'uuid' }, { name: 'release_title', type: 'text' }, { name: 'label_id', type: 'uuid' }],
      labels: [{ name: 'id', type: 'uuid' }, { name: 'name', type: 'text' }, { name: 'country_id', type: 'uuid' }, { name: 'created', type: 'timestamp with time zone' }],
      countries: [{ name: 'id', type: 'uuid' }, { name: 'name', type: 'text' }],
      tracks: [{ name: 'id', type: 'uuid' }, { name: 'track_title', type: 'text' }],
    })[table] ?? [],
  embed: (table, relation) =>
    (({
      'releases/labels': { table: 'labels', one: true },
      'releases/label_id': { table: 'labels', one: true },
      'labels/countries': { table: 'countries', one: true },
      'releases/tracks': { table: 'tracks', one: false },
    }) as Record<string, { table: string; one: boolean }>)[`${table}/${relation}`],
};

const flat = (select: string, row: Row) => flattenRow(row, embedsOf(parseSelect(select), 'releases', resolver));

describe('flattening embeds into columns (issue 17)', () => {
  it('turns a to-one embed into embed.field columns where the embed was', () => {
    expect(flat('release_title,labels(name),id', { release_title: 'A', labels: { name: 'X' }, id: '1' })).toEqual({ release_title: 'A', 'labels.name': 'X', id: '1' });
    expect(Object.keys(flat('release_title,labels(name),id', { release_title: 'A', labels: { name: 'X' }, id: '1' }))).toEqual(['release_title', 'labels.name', 'id']);
  });

  it('nests: labels.countries.name', () => {
    const row = flat('release_title,labels(name,countries(name))', { release_title: 'A', labels: { name: 'X', countries: { name: 'Norway' } } });
    expect(row).toEqual({ release_title: 'A', 'labels.name': 'X', 'labels.countries.name': 'Norway' });
  });

  it('gives a null embed (no matching row) the same columns, all null', () => {
    const a = flat('release_title,labels(name,countries(name))', { release_title: 'A', labels: null });
    expect(a).toEqual({ release_title: 'A', 'labels.name': null, 'labels.countries.name': null });
    const b = flat('release_title,labels(name,countries(name))', { release_title: 'B', labels: { name: 'Y', countries: null } });
    expect(Object.keys(b)).toEqual(Object.keys(a));
  });

  it('expands * from the schema, names columns by alias, JSON path key and aggregate', () => {
    const row = flat('label:labels(*)', { label: { id: 'u', name: 'X', country_id: null, created: 't' } });
    expect(Object.keys(row)).toEqual(['label.id', 'label.name', 'label.country_id', 'label.created']);
    const embeds = embedsOf(parseSelect('labels(n:name,meta->>x,cnt:count(),name.max())', { aggregates: true }), 'releases', resolver);
    expect(embeds.get('labels')!.columns.map((c) => c.name)).toEqual(['n', 'x', 'cnt', 'max']);
    // The FK column names the embed too.
    expect([...embedsOf(parseSelect('label_id(name)'), 'releases', resolver).keys()]).toEqual(['label_id']);
  });

  it('keeps a to-many embed as one value, and leaves rows without embeds untouched', () => {
    const tracks = [{ track_title: 'T1' }, { track_title: 'T2' }];
    expect(flat('release_title,tracks(track_title)', { release_title: 'A', tracks })).toEqual({ release_title: 'A', tracks });
    const row = { id: '1', meta: { k: 'v' } };
    expect(flat('id,meta', row)).toBe(row);
  });

  it('spreads ...embed into the parent, and drops an empty embed (it only filters)', () => {
    expect([...embedsOf(parseSelect('release_title,...labels(name,countries(name))'), 'releases', resolver).keys()]).toEqual(['countries']);
    expect(embedsOf(parseSelect('release_title,labels()'), 'releases', resolver).size).toBe(0);
  });

  it('keeps an unexpected non-object in the first column rather than losing it', () => {
    expect(flat('labels(name,id)', { labels: [{ name: 'X' }] })).toEqual({ 'labels.name': [{ name: 'X' }], 'labels.id': null });
  });

  it('knows the types of embedded fields (relative dates, ids in tables)', () => {
    expect(flatTypes(embedsOf(parseSelect('labels(id,created,name::text,countries(id))'), 'releases', resolver))).toEqual({
      'labels.id': 'uuid',
      'labels.created': 'timestamp with time zone',
      'labels.countries.id': 'uuid',
    });
  });

  it('reads cardinality from the built-in schema: labels is to-one from releases, tracks to-many', () => {
    const r = schemaResolver(builtinSchema());
    expect(r.embed('releases', 'labels')?.one).toBe(true);
    expect(r.embed('labels', 'releases')?.one).toBe(false);
  });

  it('makes a CSV header that does not change when the first embed is null', async () => {
    const embeds = embedsOf(parseSelect('release_title,labels(name)'), 'releases', resolver);
    const out = bufferOutput();
    const w = await createWriter('csv', { out });
    for (const r of [{ release_title: 'A', labels: null }, { release_title: 'B', labels: { name: 'X, Y' } }]) await w.write([flattenRow(r, embeds)]);
    await w.end();
    expect(out.text()).toBe('release_title,labels.name\nA,\nB,"X, Y"\n');
  });
});

describe('abbreviating uuids in a narrow table', () => {
  const a = '1ab00001-ce6c-400d-8cfb-ba4136a5d538';
  const b = '1ab00001-1174-45bb-b680-e6f210f56653';

  it('cuts to what tells the rows apart plus four hex digits, never under 8 characters', () => {
    expect(abbreviate([a, b])).toEqual(['1ab00001-ce6c-4…', '1ab00001-1174-4…']);
    expect(abbreviate(['3f2a9c1e-8b1d-4e7a-9c55-0d6f1b2a4e10', '0b6f7c1e-8b1d-4e7a-9c55-0d6f1b2a4e10'])).toEqual(['3f2a9c1e…', '0b6f7c1e…']);
    expect(abbreviate([a])).toEqual(['1ab00001…']);
  });

  it('leaves what is not a uuid, and ids that differ only at the end, whole', () => {
    expect(abbreviate([a, '', 'x'])).toEqual(['1ab00001…', '', 'x']);
    expect(abbreviate(['1ab00001-ce6c-400d-8cfb-ba4136a5d538', '1ab00001-ce6c-400d-8cfb-ba4136a5d539'])).toEqual([
      '1ab00001-ce6c-400d-8cfb-ba4136a5d538',
      '1ab00001-ce6c-400d-8cfb-ba4136a5d539',
    ]);
  });
});
