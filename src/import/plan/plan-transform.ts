import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { join } from 'node:path';
import { jsonPages, pagesOf } from '../../client/pages.js';
import { faultOf, type Transport } from '../../client/transport.js';
import { csvField, csvLine } from '../../format/csv-dialect.js';
import { DEFAULT_NULL_TOKEN } from '../../schema/conventions.js';
import { stringifyDeep } from '../../schema/json-depth.js';
import type { TableDef } from '../../schema/model.js';
import { KeyIndex, keyOfRow, keyColumns } from '../match/keys.js';
import type { PlanEntry, PlanLink } from './plan-file.js';
import { detectFormat, openReader } from '../readers/index.js';
import { ImportError, type SourceRecord } from '../types.js';

/**
 * A plan's file made into a file of ours: headers renamed, columns left out, constants added,
 * list cells split, the source's ids turned into ours, and each row's id decided (the record
 * holding its source id, else the one with its natural key, else a new one). The result is a CSV
 * the import engine takes as it takes any export of ours; each record starts on the line it
 * started on in the source (blank lines pad it: CSV import skips them), so rejects name the
 * source's lines. Rows the plan cannot make (a source id that names nothing) are returned
 * instead, with why, to be rejected beside the engine's.
 */

/** The source's ids of one collection's records, and ours for them (read once, grown by the run). */
export class SourceIds {
  private constructor(
    readonly collection: string,
    private readonly index: KeyIndex,
  ) {}

  /** Every stored record of `collection` that remembers an id in `source`, read in id-ordered pages. */
  static async load(transport: Transport, table: TableDef, source: string): Promise<SourceIds> {
    const index = new KeyIndex(table.name, [['source']]);
    const field = { name: 'source_ids', jsonPath: [{ arrow: '->>' as const, key: source }] };
    const query = {
      select: [{ type: 'field' as const, field: { name: 'id', jsonPath: [] } }, { type: 'field' as const, field, alias: 'sid' }],
      where: [{ path: [], condition: { kind: 'filter' as const, field, negated: true, op: 'is' as const, value: 'null' } }],
      order: [],
      page: [],
    };
    const pages = pagesOf({ transport, table: { name: table.name, primaryKey: ['id'] }, query, pageSize: 10_000, fault: (res) => faultOf(res, `GET /${table.name}`) }, jsonPages);
    for await (const page of pages) for (const row of page) index.add(String(row.id), [{ alt: 0, key: String(row.sid) }]);
    return new SourceIds(table.name, index);
  }

  /** Our id of the record the source knows as `sid`, or null. */
  find(sid: string): string | null {
    const hit = this.index.find(0, sid);
    return hit && 'slot' in hit ? this.index.idOf(hit.slot) : null;
  }

  /** Notes that `sid` is (now) our record `id`. */
  add(sid: string, id: string): void {
    if (this.find(sid) === null) this.index.add(id, [{ alt: 0, key: sid }]);
  }
}

/** Whether the service keeps source ids (our service from schema version 6; a plain PostgREST does not). */
export async function sourceIdsSupported(transport: Transport, table: string): Promise<{ ok: true } | { ok: false; why: string }> {
  const res = await transport.send({ method: 'GET', path: `/${table}`, query: 'select=id,source_ids&limit=0', headers: { Accept: 'application/json' } });
  if (res.status === 200 || res.status === 206) return { ok: true };
  let why = `HTTP ${res.status}`;
  try {
    why = (JSON.parse(res.body) as { message?: string }).message ?? why;
  } catch {
    /* the status says enough */
  }
  return { ok: false, why };
}

/** A row the plan could not make. */
export interface PlanReject {
  record: SourceRecord;
  code: string;
  message: string;
}

export interface Transformed {
  /** The CSV of ours, in a temporary directory. */
  path: string;
  /** Its header (the columns the engine sees). */
  headers: string[];
  records: number;
  rejects: PlanReject[];
  /** Rows refused in all (rejects keeps the first 10,000). */
  rejected: number;
}

const MAX_KEPT_REJECTS = 10_000;

/** The elements of a list cell: a JSON array's elements, else the text split (a number or one key is a list of one). */
function elementsOf(v: unknown, split: RegExp | null): string[] {
  if (v === null || v === undefined) return [];
  if (Array.isArray(v)) return v.map((x) => (typeof x === 'string' ? x : stringifyDeep(x)).trim()).filter(Boolean);
  const text = typeof v === 'string' ? v.trim() : String(v);
  if (text.startsWith('[')) {
    try {
      const parsed = JSON.parse(text) as unknown;
      if (Array.isArray(parsed)) return elementsOf(parsed, split);
    } catch {
      /* text, split below */
    }
  }
  return (split ? text.split(split) : [text]).map((s) => s.trim()).filter(Boolean);
}

/** A cell as a CSV field: an empty one unquoted (the column default, as an empty source cell means). */
const field = (c: string): string => (c === '' ? '' : csvField(c, ','));

/** The text of a value as a CSV cell of ours: null as the null token, objects as JSON. */
function cellOf(v: unknown): string {
  if (v === null || v === undefined) return DEFAULT_NULL_TOKEN;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return stringifyDeep(v);
}

/** A fault that refuses one row. */
type RowFault = { code: string; message: string };

/** Makes one record of a plan file into the cells of a row of ours (see transformFile). */
class RowMaker {
  /** The source's columns passed through (renamed by the map), in order. */
  passed: string[] = [];
  headers: string[] = [];
  private readonly consumed: Set<string>;
  private readonly keyCols: string[];

  constructor(
    private readonly entry: PlanEntry,
    private readonly source: string | null,
    /** The collection's own source ids (when the file has a source id column). */
    readonly own: SourceIds | null,
    private readonly linkIds: Map<PlanLink, SourceIds>,
    private readonly natural: KeyIndex | null,
    private readonly onNew?: (id: string) => void,
  ) {
    this.consumed = new Set<string>([...entry.ignore, ...entry.links.map((l) => l.from), ...(entry.sourceId ? [entry.sourceId] : [])]);
    this.keyCols = entry.key ? keyColumns(entry.key) : [];
  }

  /** The header of the file of ours, from the source's columns; the plan's columns must be there. */
  setHeaders(srcHeaders: string[], checked = true): string[] {
    const { entry } = this;
    if (checked) {
      for (const col of this.consumed) {
        if (!entry.ignore.includes(col) && !srcHeaders.includes(col)) throw new ImportError(`the plan reads column "${col}", which the file does not have (its columns: ${srcHeaders.join(', ')})`, 'usage');
      }
      const absent = Object.keys(entry.map).filter((h) => !srcHeaders.includes(h));
      if (absent.length) throw new ImportError(`the plan maps ${absent.map((h) => `"${h}"`).join(', ')}, which the file does not have (its columns: ${srcHeaders.join(', ')})`, 'usage');
    }
    this.passed = srcHeaders.filter((h) => !this.consumed.has(h));
    const renamed = this.passed.map((h) => entry.map[h] ?? h);
    for (const f of Object.keys(entry.constants)) if (renamed.includes(f)) throw new ImportError(`the plan sets ${f} as a constant, and the file has it too`, 'usage');
    const headers = [...(this.own ? ['id', 'source_ids'] : []), ...renamed, ...entry.links.map((l) => l.field), ...Object.keys(entry.constants)];
    const dup = headers.find((h, i) => headers.indexOf(h) !== i);
    if (dup) throw new ImportError(`the plan gives the field ${dup} twice (a column mapped to it, a link or a constant)`, 'usage');
    this.headers = headers;
    return headers;
  }

  /** The row's cells, or why the plan cannot make it. */
  cells(rec: SourceRecord): string[] | RowFault {
    if (rec.error) return { code: '22P02', message: rec.error };
    const cells: string[] = [];
    if (this.own) {
      const id = this.idOf(rec);
      if (typeof id !== 'string') return id;
      cells.push(id, JSON.stringify({ [this.source!]: String(rec.values[this.entry.sourceId!]).trim() }));
    }
    for (const h of this.passed) cells.push(cellOf(rec.values[h]));
    for (const l of this.entry.links) {
      const cell = this.linkCell(l, rec.values[l.from]);
      if (typeof cell !== 'string') return cell;
      cells.push(cell);
    }
    for (const v of Object.values(this.entry.constants)) cells.push(v);
    return cells;
  }

  /** The row's id: the record holding its source id, else the one with its natural key, else a new one. */
  private idOf(rec: SourceRecord): string | RowFault {
    const { entry, natural } = this;
    const sid = rec.values[entry.sourceId!];
    const text = sid === null || sid === undefined ? '' : String(sid).trim();
    if (text === '') return { code: '23502', message: `${entry.sourceId} is empty: every row needs the source's id` };
    let id = this.own!.find(text);
    if (id === null && natural && entry.key && this.keyCols.length) {
      const get = (c: string) => {
        const h = this.passed.find((p) => (entry.map[p] ?? p) === c);
        const v = h === undefined ? (entry.constants[c] ?? null) : rec.values[h];
        return v === null || v === undefined ? null : String(v);
      };
      const k = keyOfRow(entry.key, get);
      const hit = k ? natural.find(k.alt, k.key) : null;
      if (hit && 'ambiguous' in hit) {
        return { code: '21000', message: `${entry.key[k!.alt].join('+')} “${k!.key}” names ${hit.ambiguous.length} ${entry.table.name} (${hit.ambiguous.join(', ')}): give them source ids, or fix them with catalog check` };
      }
      if (hit) id = natural.idOf(hit.slot);
    }
    if (id === null) {
      id = randomUUID();
      this.onNew?.(id);
    }
    this.own!.add(text, id);
    return id;
  }

  /** A link or reference cell: the source's ids made ours, names kept (or made name-only credits). */
  private linkCell(l: PlanLink, raw: unknown): string | RowFault {
    const ids = this.linkIds.get(l);
    const elements = elementsOf(raw, l.list ? l.split : null);
    if (!ids) return JSON.stringify(l.namesOnly ? elements.map((name) => ({ name })) : elements);
    const missing = elements.filter((e) => ids.find(e) === null);
    if (missing.length) {
      return { code: '23503', message: `${l.from}: no ${ids.collection} record has ${this.source} id ${missing.slice(0, 3).join(', ')}${missing.length > 3 ? ' …' : ''} (import that file in the same run, or first)` };
    }
    const mapped = elements.map((e) => ids.find(e)!);
    return l.list ? JSON.stringify(mapped) : (mapped[0] ?? DEFAULT_NULL_TOKEN);
  }
}

/**
 * Makes one plan file into a CSV of ours (see the module comment). `sources` holds the source
 * ids of the collections the run has read or filled so far; `natural` the stored records by
 * natural key (rows without a source id match there).
 */
export async function transformFile(
  entry: PlanEntry,
  source: string | null,
  sources: (collection: string) => Promise<SourceIds>,
  natural: KeyIndex | null,
  tmpDir: string,
  signal?: AbortSignal,
  /** Told each id made for a new record (a dry run counts them as present in later files). */
  onNew?: (id: string) => void,
): Promise<Transformed> {
  const reader = openReader(entry.path, detectFormat(entry.path, entry.format), { delimiter: entry.delimiter, sheet: entry.sheet, name: entry.file });
  const path = join(tmpDir, `${entry.table.name}.csv`);
  const out = createWriteStream(path);
  const linkIds = new Map<PlanLink, SourceIds>();
  for (const l of entry.links) if (l.source) linkIds.set(l, await sources(l.source));
  const maker = new RowMaker(entry, source, entry.sourceId !== null && source !== null ? await sources(entry.table.name) : null, linkIds, natural, onNew);
  let started = false;
  let line = 2;
  let records = 0;
  let rejected = 0;
  const rejects: PlanReject[] = [];
  const write = async (text: string) => {
    if (!out.write(text)) await once(out, 'drain');
  };
  try {
    for await (const rec of reader.records()) {
      if (signal?.aborted) throw Object.assign(new Error('interrupted'), { name: 'AbortError' });
      if (!started) {
        started = true;
        await write(csvLine(maker.setHeaders(reader.headers ?? Object.keys(rec.values)).map((h) => csvField(h, ',')), ','));
      }
      records++;
      const cells = maker.cells(rec);
      if (!Array.isArray(cells)) {
        rejected++;
        if (rejects.length < MAX_KEPT_REJECTS) rejects.push({ record: rec, ...cells });
        continue;
      }
      // pad to the source's line: blank lines are skipped by the CSV reader
      if (rec.line > line) await write('\n'.repeat(rec.line - line));
      const text = csvLine(cells.map(field), ',');
      await write(text);
      line = Math.max(line, rec.line) + (text.match(/\n/g)?.length ?? 1);
    }
    // an empty file: a header alone (the engine says there is nothing to import)
    if (!started) await write(csvLine(maker.setHeaders(reader.headers ?? [], false).map((h) => csvField(h, ',')), ','));
  } finally {
    out.end();
    await once(out, 'close');
  }
  return { path, headers: maker.headers, records, rejects, rejected };
}
