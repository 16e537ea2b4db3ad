import type { Transport } from '../client/transport.js';
import { exportPages } from '../client/pages.js';
import type { Query } from '../grammar/types.js';
import { DuplicateFinder } from '../io/duplicate-finder.js';
import { foreignKeyOrder, type TableDef, typeKind } from '../schema/model.js';
import { linkIds } from '../schema/links.js';
import { IdSet } from './id-set.js';
import {
  consistencyFinding,
  unresolvedFinding,
  COPIED,
  CREDIT_FIELDS,
  duplicateFinding,
  type Finding,
  isrcKey,
  linkShapeFindings,
  NAME_FIELD,
  nameKey,
  severityOf,
  rowFindings,
  type Severity,
  todayOf,
  upcKey,
} from './rules.js';

/**
 * Reads the catalog through the standard PostgREST grammar (paged as export pages, so any
 * deployment answers it) and yields what the rules find, collection by collection.
 *
 * Memory stays bounded by the catalog's small collections, not its large ones: per-row rules keep
 * nothing; the duplicate rules feed keys to a Bloom filter (as the import's dedupe does) and read
 * the collection a second time, narrowly, only when it saw candidates; consistency keeps the
 * names of labels, genres and subgenres; credit references keep the set of artist ids.
 */
export interface CheckOptions {
  transport: Transport;
  /** Every collection the service describes (the table model: fields read, parents-first order, the names rules look up). */
  tables: readonly TableDef[];
  /** Collections to check (any order: they are checked parents first). */
  collections: readonly string[];
  rules: ReadonlySet<string>;
  now: number;
  pageSize?: number;
  signal?: AbortSignal;
  /** Called after each page with the rows of that collection read so far. */
  onRows?: (collection: string, rows: number) => void;
}

type Row = Record<string, unknown>;

/** A key rows are compared by for one duplicate rule. */
interface DuplicateKey {
  rule: string;
  field: string;
  severity?: Severity;
  /** The fields the second, narrow read needs. */
  fields: string[];
  key(row: Row): string | null;
}

const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v : null);

/** The duplicate rules that apply to a collection. */
function duplicateKeys(collection: string, rules: ReadonlySet<string>): DuplicateKey[] {
  const keys: DuplicateKey[] = [];
  const nameField = NAME_FIELD[collection];
  if (nameField && rules.has('duplicate-name')) {
    keys.push({ rule: 'duplicate-name', field: nameField, fields: [nameField], severity: collection === 'artists' ? 'warning' : 'error', key: (r) => (str(r[nameField]) ? nameKey(r[nameField] as string) : null) });
  }
  if (collection === 'tracks' && rules.has('isrc-duplicate')) {
    keys.push({ rule: 'isrc-duplicate', field: 'isrc_code', fields: ['isrc_code'], key: (r) => (str(r.isrc_code) ? isrcKey(r.isrc_code as string) : null) });
  }
  if (collection === 'releases' && rules.has('upc-duplicate')) {
    keys.push({ rule: 'upc-duplicate', field: 'upc_code', fields: ['upc_code'], key: (r) => (str(r.upc_code) ? upcKey(r.upc_code as string) : null) });
  }
  if (collection === 'releases' && rules.has('duplicate-release')) {
    keys.push({
      rule: 'duplicate-release',
      field: 'release_title',
      fields: ['release_title', 'label_id', 'label', 'release_date'],
      key: (r) => {
        const title = str(r.release_title);
        const owner = str(r.label_id) ?? (str(r.label) ? nameKey(r.label as string) : null);
        return title && owner && r.release_date ? `${owner}\u0001${String(r.release_date)}\u0001${nameKey(title)}` : null;
      },
    });
  }
  return keys;
}

const field = (name: string) => ({ type: 'field' as const, field: { name, jsonPath: [] } });

/** A read of every row (all fields, or the ones named), in key order. */
function everyRow(fields?: string[]): Query {
  return { where: [], order: [], page: [], ...(fields ? { select: fields.map(field) } : {}) };
}

/** The rows of a collection, page by page (all fields, or the ones named). */
function read(opts: CheckOptions, collection: string, fields?: string[]): AsyncGenerator<Row[]> {
  const table = tableOf(opts, collection);
  return exportPages({ transport: opts.transport, table, query: everyRow(fields), pageSize: opts.pageSize, signal: opts.signal });
}

/** id → name of a small collection (labels, genres, subgenres). */
async function readNames(opts: CheckOptions, collection: string): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  for await (const page of read(opts, collection, ['id', 'name'])) for (const r of page) if (typeof r.name === 'string') names.set(String(r.id), r.name);
  return names;
}

/** Every artist's id → stage name. */
async function readArtists(opts: CheckOptions): Promise<Map<string, string>> {
  const artists = new Map<string, string>();
  for await (const page of read(opts, 'artists', ['id', 'stage_name'])) for (const r of page) artists.set(String(r.id), typeof r.stage_name === 'string' ? r.stage_name : '');
  return artists;
}

/** Every track id, hashed into a sorted array (8 bytes a track: 8 MB for a million). */
async function readTrackIds(opts: CheckOptions): Promise<IdSet> {
  const ids = new IdSet();
  for await (const page of read(opts, 'tracks', ['id'])) for (const r of page) ids.add(String(r.id));
  return ids.freeze();
}

/** What checking one collection needs from the ones checked before it. */
interface Known {
  /** labels/genres/subgenres: id → name, for the consistency rule. */
  names: Map<string, Map<string, string>>;
  /** labels/genres/subgenres: compared name → id, for the unresolved-reference rule. */
  ids: Map<string, Map<string, string | null>>;
  /** Every artist's id → stage name, for the credit-reference and credit-name rules. */
  artists: Map<string, string> | null;
  /** Every track id (hashed), for the track-reference rule. */
  trackIds: IdSet | null;
}

/** Filter size for the duplicate scan: 8 MB of bits, a few per cent false candidates at 1M keys. */
const FILTER_BYTES = 128 << 20;

/** A collection of the model; the service not describing it is the caller's mistake. */
function tableOf(opts: CheckOptions, collection: string): TableDef {
  const table = opts.tables.find((t) => t.name === collection);
  if (!table) throw new Error(`the service describes no collection ${collection}`);
  return table;
}

/**
 * Every finding of the chosen rules in the chosen collections, a page's worth at a time (one
 * array per page read: an async step per finding cost more than the rules themselves).
 */
export async function* checkCatalog(opts: CheckOptions): AsyncGenerator<Finding[]> {
  const today = todayOf(opts.now);
  // parents before children
  const wanted = foreignKeyOrder(opts.tables).map((t) => t.name).filter((c) => opts.collections.includes(c));
  const consistency = (opts.rules.has('consistency') || opts.rules.has('unresolved-reference')) && wanted.includes('releases');
  const references = (opts.rules.has('artist-reference') || opts.rules.has('credit-name')) && wanted.includes('tracks');
  const trackReferences = opts.rules.has('track-reference') && wanted.includes('releases');
  const known: Known = { names: new Map(), ids: new Map(), artists: null, trackIds: null };
  for (const collection of wanted) {
    if (opts.signal?.aborted) return;
    if (collection === 'releases' && consistency) {
      for (const [, , from] of COPIED) if (!known.names.has(from)) known.names.set(from, await readNames(opts, from));
    }
    if (collection === 'tracks' && references && !known.artists) known.artists = await readArtists(opts);
    if (collection === 'releases' && trackReferences) known.trackIds = await readTrackIds(opts);
    const keep = {
      names: consistency && COPIED.some(([, , from]) => from === collection) ? new Map<string, string>() : null,
      artists: references && collection === 'artists' ? new Map<string, string>() : null,
    };
    yield* checkCollection(opts, collection, today, known, keep);
    if (keep.names) known.names.set(collection, keep.names);
    if (keep.artists) known.artists = keep.artists;
  }
}

/**
 * The fields the rules read of a collection: its text, date and id fields, and the credit lists
 * when references are checked. Timestamps, booleans and other jsonb are left unread (on artists
 * that is most of the row's bytes).
 */
function fieldsFor(table: TableDef, rules: ReadonlySet<string>): string[] | undefined {
  const collection = table.name;
  const credits = ['artist-reference', 'credit-name', 'link-shape'].some((r) => rules.has(r));
  const releaseLinks = ['track-reference', 'track-position', 'link-shape'].some((r) => rules.has(r));
  const wanted = table.columns.filter(
    (c) =>
      // by family: a service's character varying is text to the rules
      ['text', 'date', 'uuid'].includes(typeKind(c.type)) ||
      (collection === 'tracks' && credits && CREDIT_FIELDS.includes(c.name)) ||
      (collection === 'releases' && releaseLinks && c.name === 'tracks'),
  );
  return wanted.length === table.columns.length ? undefined : wanted.map((c) => c.name);
}

/** One collection: the per-row rules as pages arrive, then its duplicates. */
async function* checkCollection(
  opts: CheckOptions,
  collection: string,
  today: ReturnType<typeof todayOf>,
  known: Known,
  keep: { names: Map<string, string> | null; artists: Map<string, string> | null },
): AsyncGenerator<Finding[]> {
  const dups = duplicateKeys(collection, opts.rules).map((d) => ({ d, finder: new DuplicateFinder(FILTER_BYTES) }));
  let rows = 0;
  for await (const page of read(opts, collection, fieldsFor(tableOf(opts, collection), opts.rules))) {
    const found: Finding[] = [];
    for (const row of page) {
      found.push(...rowFindings(collection, row, opts.rules, today), ...linkShapeFindings(collection, row, opts.rules));
      if (collection === 'releases') found.push(...releaseConsistency(row, known, opts.rules));
      if (collection === 'releases' && known.trackIds) found.push(...trackReferences(row, known.trackIds));
      if (collection === 'tracks' && known.artists) found.push(...creditReferences(row, known.artists, opts.rules));
      for (const { d, finder } of dups) {
        const key = d.key(row);
        if (key !== null && finder.note(key)) finder.candidates.set(key, -1);
      }
      if (keep.names && typeof row.name === 'string') keep.names.set(String(row.id), row.name);
      if (keep.artists) keep.artists.set(String(row.id), typeof row.stage_name === 'string' ? row.stage_name : '');
    }
    rows += page.length;
    opts.onRows?.(collection, rows);
    if (found.length) yield found;
  }
  for (const { d, finder } of dups) if (finder.candidates.size > 0) yield* duplicates(opts, collection, d, finder.candidates);
}

function* releaseConsistency(row: Row, known: Known, rules: ReadonlySet<string>): Generator<Finding> {
  for (const [text, idField, from] of COPIED) {
    const names = known.names.get(from);
    const id = row[idField];
    const f = names && typeof id === 'string' && rules.has('consistency') ? consistencyFinding(row, text, idField, names.get(id)) : null;
    if (f) yield f;
    const u = names && rules.has('unresolved-reference') ? unresolvedFinding(row, text, idField, idsByName(known, from, names)) : null;
    if (u) yield u;
  }
}

/** A parent collection's compared names → the one id with that name (null: several), built once. */
function idsByName(known: Known, from: string, names: Map<string, string>): Map<string, string | null> {
  let ids = known.ids.get(from);
  if (!ids) {
    ids = new Map();
    for (const [id, name] of names) {
      const k = nameKey(name);
      ids.set(k, ids.has(k) ? null : id);
    }
    known.ids.set(from, ids);
  }
  return ids;
}

/** A finding of one of the link rules that compare a link with the rows it names. */
function linkFinding(collection: string, row: Row, field: string, value: unknown, rule: string, message: string): Finding {
  return { collection, id: String(row.id), field, value, rule, severity: severityOf(rule), message, fixable: false, fix: null };
}

/** `artist-reference` (an id no artist has) and `credit-name` (a name that is not the artist's). */
function* creditReferences(row: Row, artists: Map<string, string>, rules: ReadonlySet<string>): Generator<Finding> {
  for (const f of CREDIT_FIELDS) {
    const list = row[f];
    if (!Array.isArray(list)) continue;
    for (const [i, item] of list.entries()) {
      const id = item && typeof item === 'object' ? (item as Row).id : undefined;
      if (typeof id !== 'string') continue;
      const name = typeof (item as Row).name === 'string' ? ((item as Row).name as string) : undefined;
      const stage = artists.get(id) ?? artists.get(id.toLowerCase());
      if (stage === undefined) {
        if (rules.has('artist-reference')) yield linkFinding('tracks', row, f, id, 'artist-reference', `${f} credits artist ${id}${name !== undefined ? ` (“${name}”)` : ''}, which no artist has`);
      } else if (rules.has('credit-name') && name !== stage) {
        yield linkFinding('tracks', row, f, name ?? null, 'credit-name', `${f}[${i}].name says “${name ?? ''}” but artist ${id} is “${stage}”`);
      }
    }
  }
}

/** `track-reference`: a release's track id that names no track. */
function* trackReferences(row: Row, trackIds: IdSet): Generator<Finding> {
  for (const id of linkIds(row.tracks)) {
    if (!trackIds.has(id)) yield linkFinding('releases', row, 'tracks', id, 'track-reference', `tracks lists track ${id}, which no track has`);
  }
}

/** The second, narrow read: the rows whose key was a candidate, grouped; groups of two or more are duplicates. */
async function* duplicates(opts: CheckOptions, collection: string, d: DuplicateKey, candidates: Map<string, number>): AsyncGenerator<Finding[]> {
  const groups = new Map<string, Row[]>();
  for await (const page of read(opts, collection, ['id', ...d.fields])) {
    for (const row of page) {
      const key = d.key(row);
      if (key === null || !candidates.has(key)) continue;
      const group = groups.get(key);
      if (group) group.push(row);
      else groups.set(key, [row]);
    }
  }
  for (const group of groups.values()) {
    if (group.length < 2) continue;
    yield group.map((row) => duplicateFinding(collection, d.rule, d.field, row, group.filter((r) => r !== row).map((r) => String(r.id)), d.severity));
  }
}
