import { accessSync, constants as fsConstants, existsSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { foreignKeyOrder, type TableDef } from '../../schema/model.js';
import type { KeySpec } from '../match/keys.js';
import { ImportError } from '../types.js';
import { didYouMean } from '../../format/suggest.js';

/**
 * An import plan: how a directory of another system's files becomes our collections, per file
 * (docs/import.md, "Migrating another system's export"). Read from YAML and checked whole before
 * anything is read or sent, so a typo in the plan refuses the run by its place in the plan:
 *
 * ```yaml
 * source: chinook                  # the source system: the name its ids are remembered under
 * files:
 *   Artist.csv:
 *     collection: artists
 *     source_id: ArtistId          # the column holding the source's own id
 *     map: { Name: stage_name }    # source header → our field
 *   Track.csv:
 *     collection: tracks
 *     source_id: TrackId
 *     map: { Name: track_title }
 *     ignore: [Milliseconds, Bytes]
 *     constants: { explicit_status: clean }
 *     links:
 *       primary_artists: { from: ArtistId, source: artists }           # by the source's ids
 *       writer_artists: { from: Composer, split: '[,/&]', names_only: true }  # text: name-only credits
 *   Album.csv:
 *     collection: releases
 *     source_id: AlbumId
 *     links:
 *       tracks: { from: TrackIds, split: ';', source: tracks }
 * ```
 */

/** A field filled from a source column: a list of links (credits, a release's tracks) or a reference (a foreign key). */
export interface PlanLink {
  /** Our field (`writer_artists`, `tracks`, `label_id`). */
  field: string;
  /** The source column it is read from. */
  from: string;
  /** How a cell splits into elements (a list field only; default `;`). A JSON array cell is read as one. */
  split: RegExp | null;
  /** Elements are the source's ids of this collection's records (looked up, then sent as our ids). */
  source: string | null;
  /** Credits only: elements are names kept as name-only credits (people who are not artists in the catalog). */
  namesOnly: boolean;
  /** The field is a list (a link field) rather than one reference (a foreign key). */
  list: boolean;
}

/** One file of the plan. */
export interface PlanEntry {
  /** The file's name as the plan gives it, and its path. */
  file: string;
  path: string;
  table: TableDef;
  /** The column that carries the source's id of each row. */
  sourceId: string | null;
  /** The natural key (default: the collection's). */
  key: KeySpec | null;
  map: Record<string, string>;
  ignore: string[];
  ignoreUnknown: boolean;
  constants: Record<string, string>;
  /** `FIELD=COLLECTION.COLUMN` references by name, as `--ref` takes them. */
  refs: string[];
  links: PlanLink[];
  createMissing: boolean;
  /** Reader settings for this file. */
  format?: string;
  delimiter?: string;
  sheet?: string;
  dateFormat?: string;
}

export interface ImportPlan {
  /** The plan file. */
  path: string;
  /** The directory the files are in (the plan's own directory unless given). */
  dir: string;
  source: string | null;
  /** Parents first: a file's references and links come from the files before it. */
  entries: PlanEntry[];
}

/** Names a plan file may have beside the data (`catalog import DIR` reads it without `--plan`). */
export const PLAN_NAMES = ['catalog-plan.yaml', 'catalog-plan.yml'];

/** A source system's name: how its ids are stored (`source_ids->>NAME`). */
export const SOURCE_NAME = /^[a-z][a-z0-9_-]{0,62}$/;

const FILE_KEYS = ['collection', 'source_id', 'key', 'map', 'ignore', 'ignore_unknown', 'constants', 'refs', 'links', 'create_missing', 'format', 'delimiter', 'sheet', 'date_format'];
const LINK_KEYS = ['from', 'split', 'source', 'names_only'];

class PlanError extends ImportError {
  constructor(plan: string, where: string, message: string) {
    super(`${basename(plan)}: ${where ? `${where}: ` : ''}${message}`, 'usage');
  }
}

const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const hint = (word: string, names: readonly string[]): string => {
  const c = didYouMean(word, names);
  return c ? `; did you mean "${c}"?` : ` (one of: ${names.join(', ')})`;
};

/** The text of a scalar plan value (YAML numbers and booleans as they read). */
function scalar(plan: string, where: string, v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (v === null) return '\\N';
  throw new PlanError(plan, where, 'must be a single value (text, number or true/false)');
}

function stringList(plan: string, where: string, v: unknown): string[] {
  if (v === undefined || v === null) return [];
  if (typeof v === 'string') return v.split(',').map((s) => s.trim()).filter(Boolean);
  if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return v as string[];
  throw new PlanError(plan, where, 'must be a list of names');
}

function stringMap(plan: string, where: string, v: unknown): Record<string, unknown> {
  if (v === undefined || v === null) return {};
  if (!isMap(v)) throw new PlanError(plan, where, 'must be a mapping (name: value)');
  return v;
}

function unknownKeys(plan: string, where: string, v: Record<string, unknown>, known: readonly string[]): void {
  for (const k of Object.keys(v)) if (!known.includes(k)) throw new PlanError(plan, where, `unknown setting "${k}"${hint(k, known)}`);
}

/** One `links:` entry of a file: its target field checked against the collection and the plan's source. */
function parseLink(planPath: string, where: string, table: TableDef, f: string, l: unknown, source: string | null): PlanLink {
  const col = table.columns.find((c) => c.name === f)!;
  if (!isMap(l)) throw new PlanError(planPath, where, 'must be a mapping (from: COLUMN, …)');
  unknownKeys(planPath, where, l, LINK_KEYS);
  if (typeof l.from !== 'string' || l.from === '') throw new PlanError(planPath, `${where}.from`, 'is required: the source column');
  const list = col.keyList !== undefined;
  if (!list && !col.foreignKey) throw new PlanError(planPath, where, `${f} is neither a link field (a release's tracks, a track's credits) nor a reference to another collection`);
  const linkSource = l.source === undefined || l.source === null ? null : String(l.source);
  if (linkSource !== null) {
    if (source === null) throw new PlanError(planPath, `${where}.source`, 'needs the plan\'s `source:` (the name the source\'s ids are kept under)');
    const target = list ? (col.keyList === 'tracks' ? 'tracks' : 'artists') : col.foreignKey!.table;
    if (linkSource !== target) throw new PlanError(planPath, `${where}.source`, `${f} names ${target}, not ${linkSource}`);
  } else if (!list) throw new PlanError(planPath, where, `a reference by the source's ids needs source: ${col.foreignKey!.table} (a reference by name is refs: { FIELD: COLLECTION.COLUMN })`);
  const namesOnly = l.names_only === true;
  if (namesOnly && (col.keyList !== 'artists' || linkSource !== null)) throw new PlanError(planPath, `${where}.names_only`, 'is for credits given as names (not with source:)');
  let split: RegExp | null = null;
  if (list) {
    const pattern = l.split === undefined ? ';' : scalar(planPath, `${where}.split`, l.split);
    try {
      split = new RegExp(pattern);
    } catch (err) {
      throw new PlanError(planPath, `${where}.split`, `not a regular expression: ${(err as Error).message}`);
    }
  } else if (l.split !== undefined) throw new PlanError(planPath, `${where}.split`, `${f} holds one reference, not a list`);
  return { field: f, from: l.from, split, source: linkSource, namesOnly, list };
}

/** One file of the plan, checked against its collection. */
function parseEntry(planPath: string, base: string, tables: readonly TableDef[], source: string | null, file: string, raw: unknown): PlanEntry {
  const names = tables.map((t) => t.name);
  const at = `files.${file}`;
  if (!isMap(raw)) throw new PlanError(planPath, at, 'must be a mapping of settings (collection: …)');
  unknownKeys(planPath, at, raw, FILE_KEYS);
  const path = isAbsolute(file) ? file : join(base, file);
  if (!existsSync(path) || !statSync(path).isFile()) throw new PlanError(planPath, at, `no such file ${path}`);
  try {
    accessSync(path, fsConstants.R_OK);
  } catch {
    // as import says of an input (the transform would otherwise fail on its first read, part way through the run)
    throw new PlanError(planPath, at, `${path}: permission denied (it is not readable by this user)`);
  }
  const collection = typeof raw.collection === 'string' ? raw.collection : '';
  const table = tables.find((t) => t.name === collection || t.singular === collection);
  if (!table) throw new PlanError(planPath, `${at}.collection`, collection ? `no collection "${collection}"${hint(collection, names)}` : 'is required');
  const fields = table.columns.map((c) => c.name);
  const field = (where: string, f: string): string => {
    if (!fields.includes(f)) throw new PlanError(planPath, where, `${table.name} has no field "${f}"${hint(f, fields)}`);
    return f;
  };
  const sourceId = raw.source_id === undefined || raw.source_id === null ? null : String(raw.source_id);
  if (sourceId !== null && source === null) throw new PlanError(planPath, `${at}.source_id`, 'needs the plan\'s `source:` (the name the source\'s ids are kept under)');
  const keyCols = stringList(planPath, `${at}.key`, raw.key);
  for (const k of keyCols) field(`${at}.key`, k);
  const map: Record<string, string> = {};
  for (const [from, to] of Object.entries(stringMap(planPath, `${at}.map`, raw.map))) map[from] = field(`${at}.map.${from}`, scalar(planPath, `${at}.map.${from}`, to));
  const constants: Record<string, string> = {};
  for (const [f, v] of Object.entries(stringMap(planPath, `${at}.constants`, raw.constants))) constants[field(`${at}.constants.${f}`, f)] = scalar(planPath, `${at}.constants.${f}`, v);
  const refs = Object.entries(stringMap(planPath, `${at}.refs`, raw.refs)).map(([f, target]) => `${field(`${at}.refs.${f}`, f)}=${scalar(planPath, `${at}.refs.${f}`, target)}`);
  const links = Object.entries(stringMap(planPath, `${at}.links`, raw.links)).map(([f, l]) => parseLink(planPath, `${at}.links.${f}`, table, field(`${at}.links.${f}`, f), l, source));
  const str = (k: string) => (raw[k] === undefined || raw[k] === null ? undefined : scalar(planPath, `${at}.${k}`, raw[k]));
  return {
    file,
    path,
    table,
    sourceId,
    key: keyCols.length ? [keyCols] : (table.naturalKey ?? null),
    map,
    ignore: stringList(planPath, `${at}.ignore`, raw.ignore),
    ignoreUnknown: raw.ignore_unknown === true,
    constants,
    refs,
    links,
    createMissing: raw.create_missing === true,
    format: str('format'),
    delimiter: str('delimiter'),
    sheet: str('sheet'),
    dateFormat: str('date_format'),
  };
}

/**
 * Reads and checks a plan against the collections the service describes. Every file it names
 * must exist; every field it names must be the collection's; a link's target must be a link
 * field or a foreign key; `source:` links need the plan's `source`.
 */
export function loadPlan(planPath: string, tables: readonly TableDef[], dir?: string, sourceFlag?: string): ImportPlan {
  if (!existsSync(planPath) || !statSync(planPath).isFile()) throw new ImportError(`${planPath}: no such plan file`, 'usage');
  let doc: unknown;
  try {
    doc = parseYaml(readFileSync(planPath, 'utf8'));
  } catch (err) {
    throw new PlanError(planPath, '', `not valid YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  if (!isMap(doc)) throw new PlanError(planPath, '', 'must be a mapping with `files:` (see docs/import.md)');
  unknownKeys(planPath, '', doc, ['source', 'files']);
  // `--source NAME` names the source system for a plan that does not (or overrides it)
  const source = sourceFlag ?? (doc.source === undefined || doc.source === null ? null : String(doc.source));
  if (source !== null && !SOURCE_NAME.test(source)) throw new PlanError(planPath, 'source', `"${source}" is not a source name: lower-case letters, digits, _ and -, starting with a letter`);
  const base = dir ?? dirname(planPath);
  const files = doc.files;
  if (!isMap(files) || Object.keys(files).length === 0) throw new PlanError(planPath, 'files', 'must map each file name to its settings (collection: …)');
  const entries = Object.entries(files).map(([file, raw]) => parseEntry(planPath, base, tables, source, file, raw));
  // parents first: foreign keys and link fields (the collection order), then a file whose links
  // name another collection by source id after that collection's files
  const order = foreignKeyOrder(tables).map((t) => t.name);
  entries.sort((a, b) => order.indexOf(a.table.name) - order.indexOf(b.table.name));
  return { path: planPath, dir: base, source, entries };
}

/** The plan file of a directory: `--plan FILE`, else one of PLAN_NAMES in it, else null. */
export function findPlan(dir: string, given?: string): string | null {
  if (given) return given;
  for (const name of PLAN_NAMES) if (existsSync(join(dir, name))) return join(dir, name);
  return null;
}
