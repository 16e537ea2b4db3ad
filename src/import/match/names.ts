import { randomUUID } from 'node:crypto';
import { faultOf, type Transport } from '../../client/transport.js';
import { didYouMean } from '../../format/suggest.js';
import type { TableDef } from '../../schema/catalog.js';
import { collectionFacts, type RefSpec } from '../../schema/facts.js';
import { ImportError } from '../types.js';
import { KeyIndex, keyText, showKey } from './keys.js';
import { UUID_TEXT } from '../../schema/codecs.js';
import { keyList } from '../../schema/links.js';

/**
 * References by name: a text field of a row (a release's `label`) that names a record of a parent
 * collection (`labels.name`) stands for that record's id (`label_id`). Names match the way keys do
 * (src/import/match/keys.ts: trimmed, case and accents folded). An unknown name is the row's fault,
 * with the closest known name as a hint, or, with `createMissing`, a new parent record made with
 * an id chosen here (sent by `flush` before any row that uses it).
 */

// One reference: `field` (text on the row) names `collection.column`; its id goes in `idField`.
export type { RefSpec } from '../../schema/facts.js';

/**
 * The references to resolve on a table's rows: the `--ref`s given, then the table's own
 * (TableDef.references: releases' label, genre, subgenre) for id fields no `--ref` fills.
 */
export function tableReferences(table: TableDef, given: readonly RefSpec[]): RefSpec[] {
  return [...given, ...(table.references ?? []).filter((d) => !given.some((e) => e.idField === d.idField))];
}

/**
 * A `--ref FIELD=COLLECTION.COLUMN` against the table: the id field is the table's foreign key to
 * COLLECTION.
 * @example parseRef(releases, 'label=labels.name') // { field: 'label', idField: 'label_id', collection: 'labels', column: 'name' }
 */
export function parseRef(table: TableDef, text: string, tables: readonly TableDef[]): RefSpec {
  const m = /^([a-z_][a-z0-9_]*)=([a-z_]+)\.([a-z_][a-z0-9_]*)$/.exec(text.trim());
  if (!m) throw new ImportError(`--ref ${text}: write FIELD=COLLECTION.COLUMN (label=labels.name)`, 'usage');
  const [, field, collection, column] = m;
  const parent = tables.find((t) => t.name === collection);
  if (!parent) throw new ImportError(`--ref ${text}: no collection "${collection}"`, 'usage');
  if (!parent.columns.some((c) => c.name === column)) throw new ImportError(`--ref ${text}: ${collection} has no field "${column}"`, 'usage');
  const fk = table.columns.find((c) => c.foreignKey?.table === collection);
  if (!fk) throw new ImportError(`--ref ${text}: ${table.name} has no reference to ${collection}`, 'usage');
  if (!table.columns.some((c) => c.name === field)) throw new ImportError(`--ref ${text}: ${table.name} has no field "${field}"`, 'usage');
  return { field, idField: fk.name, collection, column };
}

/** What a name resolves to: an id, nothing (an empty name), or why the row is refused. */
export type Resolution = { id: string } | null | { code: string; message: string };

/**
 * Credit names (a tracks file's `*_artists` cells) name artists by stage name. Not a reference with
 * an id field: the cell keeps its names and the database resolves them (docs/links.md); this spec
 * only serves `--create-missing`, which makes the artists the names lack before the rows go. The
 * column is the catalog's artists' name column (src/schema/facts.ts), read by name and not off a
 * service's table: the catalog's own triggers resolve credit names by it.
 */
export const CREDIT_REF: RefSpec = { field: 'credit', idField: 'id', collection: 'artists', column: collectionFacts('artists')!.nameColumn! };

/**
 * The artist names of a credits cell as the database reads them: a JSON array's string elements
 * (objects carry an id, or a name alone for an outside writer), or a `;`-separated list; ids left out.
 * @example creditNames('Tom Hale; Léa Marin') // ['Tom Hale', 'Léa Marin']
 */
export function creditNames(text: string): string[] {
  let value: unknown = text;
  const t = text.trim();
  if (t.startsWith('[') || t.startsWith('"')) {
    try {
      value = JSON.parse(t);
    } catch {
      // not JSON: a list of names that happens to start so
    }
  }
  const list = keyList(value);
  const keys = Array.isArray(list) ? list.filter((v): v is string => typeof v === 'string') : [];
  return keys.map((k) => k.trim()).filter((k) => k !== '' && !UUID_TEXT.test(k));
}

/** One parent collection's names → ids. */
export class NameResolver {
  private pending: Array<Record<string, string>> = [];
  /** Parent records this run made (or, in a dry run, would make). */
  created = 0;

  private constructor(
    readonly ref: RefSpec,
    private readonly index: KeyIndex,
    private readonly createMissing: boolean,
  ) {}

  /** Reads the parent collection's ids and names (subgenres: by name, and by genre and name). */
  static async open(transport: Transport, ref: RefSpec, createMissing: boolean, prospective: ReadonlyArray<Readonly<Record<string, string>>> = []): Promise<NameResolver> {
    const spec = ref.collection === 'subgenres' && ref.column === 'name' ? [['name'], ['genre', 'name']] : [[ref.column]];
    const index = await KeyIndex.load(transport, ref.collection, spec, { keepNames: true });
    // a dry run of a directory: the records earlier files would create count as there
    for (const row of prospective) {
      const keys = spec.flatMap((cols, alt) => {
        const key = keyText(cols, cols.map((c) => row[c]));
        return key === null || index.find(alt, key) !== null ? [] : [{ alt, key }];
      });
      if (keys.length && row.id) index.add(row.id, keys, row[ref.column]);
    }
    return new NameResolver(ref, index, createMissing);
  }

  /**
   * The id a name stands for. `genre` narrows a subgenre name that two genres share.
   * @example resolver.resolve('blue  note') // { id: '…' } when labels has "Blue Note"
   */
  resolve(name: string | null | undefined, genre?: string | null): Resolution {
    const key = keyText([this.ref.column], [name]);
    if (key === null) return null;
    let hit = genre && this.index.spec.length > 1 ? this.index.find(1, keyText(['genre', 'name'], [genre, name])!) : null;
    hit ??= this.index.find(0, key);
    if (hit && 'slot' in hit) return { id: this.index.idOf(hit.slot) };
    const what = `${this.ref.field} “${String(name).trim()}”`;
    if (hit) return { code: 'ambiguous-reference', message: `${what} names ${hit.ambiguous.length} ${this.ref.collection}: ${hit.ambiguous.join(', ')}` };
    if (this.createMissing) return { id: this.create(String(name).trim(), key, genre) };
    const known = [...(this.index.names?.values() ?? [])];
    const guess = didYouMean(String(name).trim(), known);
    const hint = guess ? `; did you mean “${guess}”?` : known.length ? '' : ` (${this.ref.collection} is empty)`;
    return { code: 'unknown-reference', message: `${what} is not in ${this.ref.collection}.${this.ref.column}${hint} (--create-missing adds it)` };
  }

  private create(name: string, key: string, genre?: string | null): string {
    const id = randomUUID();
    const row: Record<string, string> = { id, [this.ref.column]: name };
    const keys = [{ alt: 0, key }];
    if (this.index.spec.length > 1) {
      row.genre = genre?.trim() ?? '';
      const both = keyText(['genre', 'name'], [row.genre, name]);
      if (both !== null) keys.push({ alt: 1, key: both });
    }
    this.index.add(id, keys, name);
    this.pending.push(row);
    this.created++;
    return id;
  }

  /** Sends the parent records made since the last flush (before any row that names them). */
  async flush(transport: Transport): Promise<void> {
    if (this.pending.length === 0) return;
    const rows = this.pending;
    this.pending = [];
    const res = await transport.send({
      method: 'POST',
      path: `/${this.ref.collection}`,
      query: 'on_conflict=id',
      headers: { 'Content-Type': 'application/json', Prefer: 'resolution=ignore-duplicates, return=minimal' },
      body: JSON.stringify(rows),
    });
    if (res.status >= 300) throw faultOf(res, `POST /${this.ref.collection} (${rows.map((r) => showKey(r[this.ref.column])).join(', ')})`);
  }
}
