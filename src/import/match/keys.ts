import { createHash } from 'node:crypto';
import { jsonPages, pagesOf } from '../../client/pages.js';
import { faultOf, type Transport } from '../../client/transport.js';
import type { ColumnDef } from '../../schema/catalog.js';
import type { KeySpec } from '../../schema/facts.js';
import { knownDefault } from '../../schema/conventions.js';
import { columnKind, instantKey, K_BOOL, K_JSON, K_TIMESTAMP, K_UUID } from '../../schema/codecs.js';
import { isrcKey, nameKey, upcKey } from '../../schema/keys.js';
import type { WhereClause } from '../../grammar/types.js';
import { tableScan } from '../requests.js';
import { UUID_TEXT } from '../../schema/codecs.js';

/**
 * Natural keys: how a row that carries no `id` is matched to a stored record, and how a name
 * (a release's `label`) is turned into the id it stands for. Keys compare the way `catalog check`
 * compares them (src/check/rules.ts): an ISRC without separators and case, a UPC without spaces
 * and hyphens, any other text trimmed with runs of spaces as one, case and accents folded. An
 * empty key matches nothing.
 *
 * The reusable API (import, `add`/`update --ref`, and anything else that resolves by key):
 * - `keyOfRow(spec, get)`: the normalised key of a row (which alternative, and its text);
 * - `KeyIndex.load(transport, table, spec)`: every stored id and key of a collection, read in
 *   id order with keyset pages (works against any PostgREST), kept compactly (16 bytes an id);
 * - `index.find(alt, key)`: the one record with that key, both ids when two records share it;
 * - `NameResolver` (src/import/match/names.ts): names → ids of a parent collection.
 */

// A natural key's alternatives; each collection's default is on the table model (TableDef.naturalKey, src/schema/facts.ts).
export type { KeySpec } from '../../schema/facts.js';

/**
 * The comparison form of a value of a key column, as `catalog check` compares that column.
 * @example normalizeKeyPart('isrc_code', 'us-abc-16-00121') // 'USABC1600121'
 * @example normalizeKeyPart('name', ' Blue  Note ') // 'blue note'
 */
export function normalizeKeyPart(column: string, raw: string): string {
  if (column === 'isrc_code') return isrcKey(raw.trim());
  if (column === 'upc_code') return upcKey(raw);
  return nameKey(raw);
}

/**
 * The normalised key of one alternative from its raw values (parts joined by NUL); null when
 * every part is empty: an empty key never matches.
 * @example keyText(['genre', 'name'], ['Jazz', 'Bebop ']) // 'jazz\u0000bebop'
 */
export function keyText(columns: readonly string[], values: ReadonlyArray<string | null | undefined>): string | null {
  let empty = true;
  let out = '';
  for (let i = 0; i < columns.length; i++) {
    const v = values[i];
    const part = v === null || v === undefined ? '' : normalizeKeyPart(columns[i], v);
    if (part !== '') empty = false;
    out = i === 0 ? part : `${out}\u0000${part}`;
  }
  return empty ? null : out;
}

/** A row's natural key: the first alternative whose parts are not all empty. */
export function keyOfRow(spec: KeySpec, get: (column: string) => string | null | undefined): { alt: number; key: string } | null {
  for (let alt = 0; alt < spec.length; alt++) {
    const key = keyText(spec[alt], spec[alt].map(get));
    if (key !== null) return { alt, key };
  }
  return null;
}

/** Columns of a key spec, each once, in order. */
export const keyColumns = (spec: KeySpec): string[] => [...new Set(spec.flat())];

/** The display form of a key (parts joined by " / "). */
export const showKey = (key: string): string => key.split('\u0000').join(' / ');

/** JSON with object keys sorted (jsonb compares objects ignoring key order). */
function canonicalJson(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o).sort().map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`).join(',')}}`;
}

/** A value as the digest sees it: equal text exactly when the service stores equal values. */
function canonicalValue(col: ColumnDef, v: unknown): string {
  if (v === null || v === undefined) return '\u0000';
  switch (columnKind(col.type)) {
    case K_JSON:
      return canonicalJson(v);
    case K_TIMESTAMP:
      return `t${instantKey(String(v)) ?? String(v)}`;
    case K_UUID:
      return `u${String(v).toLowerCase()}`;
    case K_BOOL:
      return v === true || v === 'true' ? 'b1' : 'b0';
    default:
      return `s${String(v)}`;
  }
}

/**
 * An 8-byte digest of a row's values in `columns` (a left-out column counts as its known
 * default), as the stored row and the incoming row both give it: equal digests mean the row
 * would not change. Null when a left-out column's default is volatile (now()): unknowable here.
 */
export function rowDigest(columns: readonly ColumnDef[], row: Readonly<Record<string, unknown>>): Buffer | null {
  const h = createHash('sha1');
  for (const col of columns) {
    let v = row[col.name];
    if (v === undefined) {
      v = knownDefault(col);
      if (v === undefined) return null;
    }
    h.update(canonicalValue(col, v));
    h.update('\u0001');
  }
  return h.digest().subarray(0, 8);
}

/** What `find` answers: the record's slot, every id when two or more records share the key, or null. */
export type KeyMatch = { slot: number } | { ambiguous: string[] } | null;

/**
 * 96 bits of a key's text (three 32-bit hashes with different mixing): two keys of a million
 * share all three with a chance near 10⁻¹⁷, so the table below keeps hashes, not key text.
 */
function hash96(s: string, out: Uint32Array): void {
  let a = 0x811c9dc5;
  let b = 0xdeadbeef ^ s.length;
  let c = 0x41c6ce57 ^ s.length;
  for (let i = 0; i < s.length; i++) {
    const ch = s.charCodeAt(i);
    a = Math.imul(a ^ ch, 0x01000193);
    b = Math.imul(b ^ ch, 2654435761);
    c = Math.imul(c ^ ch, 1597334677);
  }
  b = Math.imul(b ^ (b >>> 16), 2246822507) ^ Math.imul(c ^ (c >>> 13), 3266489909);
  c = Math.imul(c ^ (c >>> 16), 2246822507) ^ Math.imul(b ^ (b >>> 13), 3266489909);
  out[0] = a >>> 0;
  out[1] = b >>> 0;
  out[2] = c >>> 0;
}

/** The fullest a KeyTable gets (linear probing stays short up to about this). */
const MAX_LOAD = 0.7;

/**
 * An open-addressing hash table from key text to an int (slot + 1, or a negative duplicate
 * mark), keeping 96 bits of each key's hash instead of the text: 16 bytes a cell, at most 70%
 * full, about 23 bytes a key, against ~100 for a Map of strings (which took a 1M-row import over
 * its 200 MB budget).
 */
class KeyTable {
  private hashes = new Uint32Array(3 * 1024);
  private values = new Int32Array(1024);
  private n = 0;
  private readonly h = new Uint32Array(3);

  /** Room for `keys` keys at once (a loaded index knows its count: no doubling copies at its peak). */
  reserve(keys: number): void {
    const cap = Math.ceil(keys / MAX_LOAD) + 1;
    if (cap <= this.values.length || this.n > 0) return;
    this.hashes = new Uint32Array(3 * cap);
    this.values = new Int32Array(cap);
  }

  get size(): number {
    return this.n;
  }

  /** The cell of the key's hash: its own, or the empty one where it would go. */
  private cell(h: Uint32Array): number {
    const cap = this.values.length;
    for (let i = h[0] % cap; ; i = i + 1 === cap ? 0 : i + 1) {
      if (this.values[i] === 0) return i;
      if (this.hashes[3 * i] === h[0] && this.hashes[3 * i + 1] === h[1] && this.hashes[3 * i + 2] === h[2]) return i;
    }
  }

  get(key: string): number | undefined {
    hash96(key, this.h);
    const v = this.values[this.cell(this.h)];
    return v === 0 ? undefined : v > 0 ? v - 1 : v;
  }

  set(key: string, value: number): void {
    if (this.n + 1 > this.values.length * MAX_LOAD) this.grow();
    hash96(key, this.h);
    const i = this.cell(this.h);
    if (this.values[i] === 0) {
      this.n++;
      this.hashes.set(this.h, 3 * i);
    }
    this.values[i] = value >= 0 ? value + 1 : value;
  }

  private grow(): void {
    const { hashes, values } = this;
    this.hashes = new Uint32Array(hashes.length * 2);
    this.values = new Int32Array(values.length * 2);
    const h = new Uint32Array(3);
    for (let i = 0; i < values.length; i++) {
      if (values[i] === 0) continue;
      h[0] = hashes[3 * i];
      h[1] = hashes[3 * i + 1];
      h[2] = hashes[3 * i + 2];
      const j = this.cell(h);
      this.hashes.set(h, 3 * j);
      this.values[j] = values[i];
    }
  }
}

/**
 * Every stored record's id and natural key(s) of one collection. Ids live in one Buffer (16
 * bytes each, in id order as loaded), keys in a hash table per alternative (KeyTable: 96-bit
 * hashes of the key text → slot): about 40 bytes a record, so a million keyed rows take ~40 MB. Slots
 * past the loaded ones are records this run creates (`add`); `mark` notes which slots the input
 * matched (a sync deletes the unmarked ones in scope).
 */
export class KeyIndex {
  private ids = Buffer.alloc(16 * 1024);
  private n = 0;
  /** Slots below this were loaded (sorted by id); later ones were added by this run. */
  private loaded = 0;
  private readonly maps: KeyTable[];
  /** Ids of keys that name several records; a map's value -1-i points here. */
  private readonly dups: string[][] = [];
  private marks = new Uint8Array(1024);
  /** 8 bytes a loaded record: the digest of its `content` columns (rowDigest), when loaded with them. */
  private digests: Buffer | null = null;
  /** The columns the digests cover. */
  content: readonly ColumnDef[] = [];
  /** Raw names as stored, by key (for did-you-mean), when asked to keep them. */
  readonly names: Map<string, string> | null;

  constructor(
    readonly table: string,
    readonly spec: KeySpec,
    keepNames = false,
  ) {
    this.maps = spec.map(() => new KeyTable());
    this.names = keepNames ? new Map() : null;
  }

  /**
   * Reads a collection's ids and key columns in id order, 10,000 a page (keyset pages: any
   * PostgREST, and a server's max-rows cap only makes pages shorter).
   */
  static async load(transport: Transport, table: string, spec: KeySpec, opts: { keepNames?: boolean; pageSize?: number; content?: readonly ColumnDef[] } = {}): Promise<KeyIndex> {
    const index = new KeyIndex(table, spec, opts.keepNames);
    const cols = keyColumns(spec);
    const content = opts.content ?? [];
    if (content.length) {
      index.content = content;
      index.digests = Buffer.alloc(8 * 1024);
    }
    const select = [...new Set(['id', ...cols, ...content.map((c) => c.name)])];
    const reserve = (total: number) => index.reserve(total);
    for await (const page of readPages(transport, table, select, [], opts.pageSize ?? 10_000, reserve)) {
      for (const row of page) {
        const slot = index.addStored(String(row.id), (c) => (row[c] === null || row[c] === undefined ? null : String(row[c])));
        if (index.digests) index.putDigest(slot, rowDigest(content, row));
      }
    }
    index.loaded = index.n;
    return index;
  }

  private putDigest(slot: number, d: Buffer | null): void {
    if ((slot + 1) * 8 > this.digests!.length) {
      const grown = Buffer.alloc(this.digests!.length * 2);
      this.digests!.copy(grown);
      this.digests = grown;
    }
    if (d) d.copy(this.digests!, slot * 8);
  }

  /** Whether a loaded record's stored values equal a row's (their digests match). */
  sameContent(slot: number, row: Readonly<Record<string, unknown>>): boolean {
    if (!this.digests || slot >= this.loaded) return false;
    const d = rowDigest(this.content, row);
    return d !== null && d.equals(this.digests.subarray(slot * 8, slot * 8 + 8));
  }

  /** True when the index holds the stored rows' digests (a re-run can leave equal rows unsent). */
  get hasContent(): boolean {
    return this.digests !== null;
  }

  /** Sizes the buffers for `total` stored records (plus room for new ones) before they arrive. */
  private reserve(total: number): void {
    const room = Math.ceil(total * 1.05) + 1024;
    if (this.n === 0 && room * 16 > this.ids.length) this.ids = Buffer.alloc(room * 16);
    if (this.digests && this.n === 0 && room * 8 > this.digests.length) this.digests = Buffer.alloc(room * 8);
    for (const t of this.maps) t.reserve(total);
  }

  /** Records held (loaded and added). */
  get size(): number {
    return this.n;
  }

  /** Records loaded from the service. */
  get storedCount(): number {
    return this.loaded;
  }

  private addStored(id: string, get: (c: string) => string | null): number {
    const slot = this.push(id);
    for (let alt = 0; alt < this.spec.length; alt++) {
      const key = keyText(this.spec[alt], this.spec[alt].map(get));
      if (key === null) continue;
      this.put(alt, key, slot);
      if (this.names && alt === 0) this.names.set(key, this.spec[0].map(get).filter((v) => v).join(' / '));
    }
    return slot;
  }

  private put(alt: number, key: string, slot: number): void {
    const map = this.maps[alt];
    const had = map.get(key);
    if (had === undefined) map.set(key, slot);
    else if (had >= 0) {
      this.dups.push([this.idOf(had), this.idOf(slot)]);
      map.set(key, -this.dups.length);
    } else this.dups[-had - 1].push(this.idOf(slot));
  }

  private push(id: string): number {
    if (!UUID_TEXT.test(id)) throw new Error(`${this.table}: id ${JSON.stringify(id)} is not a uuid`);
    if ((this.n + 1) * 16 > this.ids.length) {
      const grown = Buffer.alloc(this.ids.length * 2);
      this.ids.copy(grown);
      this.ids = grown;
    }
    this.ids.write(id.replace(/-/g, ''), this.n * 16, 'hex');
    return this.n++;
  }

  /** The id of a slot, as text. */
  idOf(slot: number): string {
    const h = this.ids.toString('hex', slot * 16, slot * 16 + 16);
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  }

  /** The slot of a loaded record's id (binary search over the id-ordered slots), or -1. */
  slotOfId(id: string): number {
    if (!UUID_TEXT.test(id)) return -1;
    const want = Buffer.from(id.replace(/-/g, ''), 'hex');
    let lo = 0;
    let hi = this.loaded - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const c = this.ids.compare(want, 0, 16, mid * 16, mid * 16 + 16);
      if (c === 0) return mid;
      if (c < 0) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  /** The record with this key of alternative `alt` (a normalised key text). */
  find(alt: number, key: string): KeyMatch {
    const v = this.maps[alt].get(key);
    if (v === undefined) return null;
    return v >= 0 ? { slot: v } : { ambiguous: this.dups[-v - 1] };
  }

  /** A record this run creates: its id and keys join the index, so a later row with the key finds it. */
  add(id: string, keys: ReadonlyArray<{ alt: number; key: string }>, name?: string): number {
    const slot = this.push(id);
    for (const k of keys) this.put(k.alt, k.key, slot);
    if (this.names && name !== undefined && keys[0]) this.names.set(keys[0].key, name);
    return slot;
  }

  /** Marks a slot as matched by the input; false when it already was (the key repeats in the input). */
  mark(slot: number): boolean {
    if (slot >= this.marks.length * 8) {
      const grown = new Uint8Array(Math.max(this.marks.length * 2, (slot >> 3) + 1));
      grown.set(this.marks);
      this.marks = grown;
    }
    const bit = 1 << (slot & 7);
    if (this.marks[slot >> 3] & bit) return false;
    this.marks[slot >> 3] |= bit;
    return true;
  }

  /** Whether the input matched a slot. */
  marked(slot: number): boolean {
    return slot < this.marks.length * 8 && (this.marks[slot >> 3] & (1 << (slot & 7))) !== 0;
  }
}

/**
 * A table's rows in id order, a page at a time (keyset pages with the caller's filters, the next
 * pages on their way while one is handled: the client's one pager). A failed read throws the
 * service's fault as every other import request does.
 */
export function readPages(
  transport: Transport,
  table: string,
  select: string[],
  filters: WhereClause[],
  pageSize = 10_000,
  /** Told the row count (the first page asks `Prefer: count=exact`), when the service gives it. */
  onTotal?: (total: number) => void,
): AsyncGenerator<Record<string, unknown>[]> {
  return pagesOf(
    {
      transport,
      table: { name: table, primaryKey: ['id'] },
      query: tableScan(select, filters),
      pageSize,
      ...(onTotal ? { count: 'exact' as const, onTotal: (n: number | null) => n !== null && onTotal(n) } : {}),
      fault: (res) => faultOf(res, `GET /${table}`),
    },
    jsonPages,
  );
}
