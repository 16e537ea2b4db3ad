import type { SelectItem } from '../grammar/types.js';
import type { Row } from './types.js';

/**
 * The columns of a to-one embed, in the order PostgREST sends them; a nested to-one embed
 * carries its own columns. A to-many embed is an ordinary column (its array stays one cell).
 */
export interface EmbedShape {
  columns: ShapeColumn[];
}

export interface ShapeColumn {
  /** The key the value arrives under (alias, field name, last JSON path key, aggregate name). */
  name: string;
  /** PostgreSQL type when known (a plain field without cast or JSON path). */
  type?: string;
  /** Set for a to-one embed. */
  embed?: EmbedShape;
}

/** The to-one embeds of a select, by the key they arrive under in a row. */
export type Embeds = Map<string, EmbedShape>;

/** What the flattener needs to know about the collections a select reaches. */
export interface SelectResolver {
  /** The fields of a collection (what `*` stands for), in order. */
  fields(table: string): Array<{ name: string; type: string }>;
  /** The collection an embed of `table` reaches, and whether it is to-one; undefined when unknown. */
  embed(table: string, relation: string, hint?: string): { table: string; one: boolean } | undefined;
}

/** The key PostgREST gives a select item in the response. */
function keyOf(item: Exclude<SelectItem, { type: 'star' }>): string {
  if (item.alias) return item.alias;
  if (item.type === 'embed') return item.relation;
  if (item.type === 'aggregate') return item.fn;
  const path = item.field.jsonPath;
  return path.length > 0 ? path[path.length - 1].key : item.field.name;
}

/** The columns a select gives one row of `table`, expanding `*`, spreads and to-one embeds. */
function columnsOf(items: SelectItem[], table: string, resolve: SelectResolver): ShapeColumn[] {
  const out: ShapeColumn[] = [];
  for (const item of items) {
    if (item.type === 'star') {
      out.push(...resolve.fields(table).map((f) => ({ name: f.name, type: f.type })));
    } else if (item.type === 'field') {
      const type = item.cast || item.field.jsonPath.length > 0 ? undefined : resolve.fields(table).find((f) => f.name === item.field.name)?.type;
      out.push({ name: keyOf(item), ...(type ? { type } : {}) });
    } else if (item.type === 'aggregate') {
      out.push({ name: keyOf(item) });
    } else {
      const target = resolve.embed(table, item.relation, item.hint);
      // `labels()` only filters: PostgREST leaves it out of the rows.
      if (item.select.length === 0) continue;
      const inner = target ? columnsOf(item.select, target.table, resolve) : [];
      if (item.spread) out.push(...inner);
      else if (target?.one) out.push({ name: keyOf(item), embed: { columns: inner } });
      else out.push({ name: keyOf(item) });
    }
  }
  return out;
}

/**
 * The to-one embeds a select asks for, with the columns each will show. Empty when the select
 * has none (then rows pass through untouched).
 * @example embedsOf(parseSelect('release_title,labels(name)'), 'releases', r).get('labels') // { columns: [{ name: 'name', … }] }
 */
export function embedsOf(items: SelectItem[] | undefined, table: string, resolve: SelectResolver): Embeds {
  const embeds: Embeds = new Map();
  for (const c of columnsOf(items ?? [], table, resolve)) if (c.embed) embeds.set(c.name, c.embed);
  return embeds;
}

/**
 * The PostgreSQL type of every flattened column that has one (`labels.created` →
 * `timestamp with time zone`), so tables treat embedded dates and ids like top-level ones.
 */
export function flatTypes(embeds: Embeds): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (prefix: string, shape: EmbedShape) => {
    for (const c of shape.columns) {
      if (c.embed) walk(`${prefix}.${c.name}`, c.embed);
      else if (c.type) out[`${prefix}.${c.name}`] = c.type;
    }
  };
  for (const [key, shape] of embeds) walk(key, shape);
  return out;
}

const isObject = (v: unknown): v is Row => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The key of a shape's first leaf column (`labels.name`, or `labels.country.name` when nested). */
function firstLeaf(prefix: string, shape: EmbedShape): string | undefined {
  const c = shape.columns[0];
  if (!c) return undefined;
  return c.embed ? firstLeaf(`${prefix}.${c.name}`, c.embed) : `${prefix}.${c.name}`;
}

function spread(out: Row, prefix: string, value: unknown, shape: EmbedShape): void {
  const obj = isObject(value) ? value : null;
  for (const c of shape.columns) {
    const v = obj?.[c.name] ?? null;
    if (c.embed) spread(out, `${prefix}.${c.name}`, v, c.embed);
    else out[`${prefix}.${c.name}`] = v;
  }
  // Neither an object nor null (a service answering an array where one row was expected): keep
  // the value, whole, in the first column rather than lose it.
  const first = firstLeaf(prefix, shape);
  if (!obj && value !== null && value !== undefined && first) out[first] = value;
}

/**
 * A row with each to-one embed turned into `embed.field` columns (nested: `embed.inner.field`),
 * in place of the embed's key. An embed that matched nothing (null) gives a null in each of its
 * columns, so every row has the same columns whatever the data; to-many embeds stay one value.
 * @example flattenRow({ t: 'A', labels: { name: 'X' } }, new Map([['labels', { columns: [{ name: 'name' }] }]])) // { t: 'A', 'labels.name': 'X' }
 */
export function flattenRow(row: Row, embeds: Embeds): Row {
  if (embeds.size === 0) return row;
  const out: Row = {};
  for (const [key, value] of Object.entries(row)) {
    const shape = embeds.get(key);
    if (shape) spread(out, key, value, shape);
    else out[key] = value;
  }
  return out;
}

/**
 * The column names of a row after flattening: each to-one embed's key replaced by its
 * `embed.field` columns (the same ones flattenRow writes), everything else as it is.
 * @example flatColumns(['t', 'labels'], new Map([['labels', { columns: [{ name: 'name' }] }]])) // ['t', 'labels.name']
 */
export function flatColumns(columns: string[], embeds: Embeds): string[] {
  if (embeds.size === 0) return columns;
  const out: string[] = [];
  const walk = (prefix: string, shape: EmbedShape) => {
    for (const c of shape.columns) {
      if (c.embed) walk(`${prefix}.${c.name}`, c.embed);
      else out.push(`${prefix}.${c.name}`);
    }
  };
  for (const c of columns) {
    const shape = embeds.get(c);
    if (shape) walk(c, shape);
    else out.push(c);
  }
  return out;
}

/**
 * The flat column names a select gives a row of `table` (`*` expanded, to-one embeds as
 * `embed.field`): the header of an empty result.
 * @example selectColumns(parseSelect('track_title,labels(name)'), 'tracks', r) // ['track_title', 'labels.name']
 */
export function selectColumns(items: SelectItem[], table: string, resolve: SelectResolver): string[] {
  const shape = columnsOf(items, table, resolve);
  return flatColumns(
    shape.map((c) => c.name),
    new Map(shape.filter((c) => c.embed).map((c) => [c.name, c.embed!])),
  );
}
