import Parser from 'rss-parser';
import { describe, expect, it } from 'vitest';
import { COLLECTIONS, TABLES } from '../../src/schema/catalog.js';
import { changelogAtom } from '../../src/server/changelog.js';
import { openApiDocument } from '../../src/server/openapi.js';

type Doc = {
  swagger: string;
  info: { version: string };
  paths: Record<string, Record<string, { parameters?: Array<{ $ref: string }> }>>;
  definitions: Record<string, { properties: Record<string, Record<string, unknown>>; required: string[] }>;
  parameters: Record<string, Record<string, unknown>>;
};

describe('root description (OpenAPI 2.0)', () => {
  const doc = openApiDocument() as unknown as Doc;

  it('is Swagger 2.0 at interface version 12.2.3 with the eight collections, removals, and no /users', () => {
    expect(doc.swagger).toBe('2.0');
    expect(doc.info.version).toBe('12.2.3');
    expect(Object.keys(doc.definitions).sort()).toEqual([...COLLECTIONS, 'removals'].sort());
    for (const c of COLLECTIONS) expect(doc.paths[`/${c}`]).toBeDefined();
    expect(doc.paths['/users']).toBeUndefined();
    expect(doc.definitions.artists.properties.slug).toBeUndefined();
  });

  it('describes removals (migration 9) as PostgREST describes a relation granted select only: a GET and no writes', () => {
    const path = doc.paths['/removals'] as Record<string, { summary?: string }>;
    expect(Object.keys(path)).toEqual(['get']);
    expect(path.get.summary).toMatch(/What was removed from the catalog/);
    expect(Object.keys(doc.definitions.removals.properties)).toEqual(['id', 'collection', 'record_id', 'title', 'removed']);
    expect(doc.definitions.removals.required).toEqual(['id', 'collection', 'record_id', 'removed']);
  });

  it('describes each column with its PostgreSQL format, default and key notes', () => {
    const r = doc.definitions.releases;
    expect(r.properties.id).toEqual({ default: 'gen_random_uuid()', description: 'Note:\nThis is a Primary Key.<pk/>', format: 'uuid', type: 'string' });
    expect(r.properties.label_id).toEqual({
      description: "Note:\nThis is a Foreign Key to `labels.id`.<fk table='labels' column='id'/>",
      format: 'uuid',
      type: 'string',
    });
    expect(r.properties.release_title).toEqual({ default: '', format: 'text', type: 'string' });
    expect(r.properties.is_compilation).toEqual({ default: false, format: 'boolean', type: 'boolean' });
    expect(r.properties.release_date).toEqual({ format: 'date', type: 'string' });
    expect(r.properties.contracts).toEqual({ format: 'jsonb' });
    expect(r.properties.created).toEqual({ default: 'now()', format: 'timestamp with time zone', type: 'string' });
    expect(r.required).toEqual(['id', 'created', 'updated']);
  });

  it('lists a row filter per column, then select, order, range and count parameters on GET', () => {
    const get = doc.paths['/labels'].get;
    const refs = (get.parameters ?? []).map((p) => p.$ref.replace('#/parameters/', ''));
    const cols = TABLES.find((t) => t.name === 'labels')!.columns.map((c) => `rowFilter.labels.${c.name}`);
    expect(refs).toEqual([...cols, 'select', 'order', 'range', 'rangeUnit', 'offset', 'limit', 'preferCount']);
    for (const r of refs) expect(doc.parameters[r]).toBeDefined();
    expect(doc.parameters.preferCount.enum).toEqual(['count=none']);
  });
});

describe('interface changelog feed', () => {
  it('is valid Atom that a real feed parser reads, one entry per version with breaking changes marked', async () => {
    const xml = changelogAtom('http://127.0.0.1:3000');
    const feed = await new Parser().parseString(xml);
    expect(feed.title).toBe('Music Catalog Service interface changelog');
    expect(feed.items).toHaveLength(1);
    const [entry] = feed.items;
    expect(entry.title).toBe('Interface 12.2.3');
    expect(entry.id).toBe('urn:catalog:interface:12.2.3');
    const content = entry.content ?? '';
    expect(content).toContain('[breaking] collection /users removed');
    expect(content).toContain('property slug removed');
    expect(content).toContain('[non-breaking] added: label_id, genre_id, subgenre_id');
    expect(content).toContain('[non-breaking] added: computed field source_ids');
    expect((content.match(/<li>/g) ?? []).length).toBe(7);
  });
});
