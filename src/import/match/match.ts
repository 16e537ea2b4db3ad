import { randomUUID } from 'node:crypto';
import type { Transport } from '../../client/transport.js';
import type { ColumnDef, TableDef } from '../../schema/catalog.js';
import { KeyIndex, type KeySpec, keyColumns, keyOfRow, showKey } from './keys.js';
import { CREDIT_REF, creditNames, NameResolver, type RefSpec, tableReferences } from './names.js';
import { describeKey } from '../../schema/facts.js';
import { ImportError } from '../types.js';
import type { RowFault } from '../shape/check.js';
import type { ShapePlan } from '../shape/shape.js';

/**
 * The match stage (between shape and dedupe): a row without an id gets one. With a natural key
 * (src/import/match/keys.ts: the collection's default or `--key`) the stored record with the same key
 * lends its id, so the row becomes an upsert on id like any exported file; a key found nowhere
 * gets a new id (and joins the index, so a repeat of it in the input is seen). Text references
 * (a release's `label`) get the id of the parent they name (src/import/match/names.ts). The ids are
 * columns written before the file's own: on the COPY byte path they are a prefix of each line,
 * on the record path fields of the row. Every matched record is marked: a sync deletes the
 * unmarked ones in its scope (src/import/match/sync.ts).
 */

export interface MatchOptions {
  /** `--key COLS`: the natural key (default: the collection's, TableDef.naturalKey). */
  key?: string[];
  /** `--ref FIELD=COLLECTION.COLUMN`, parsed (besides the collection's own, TableDef.references). */
  refs?: RefSpec[];
  createMissing?: boolean;
  /** A sync needs every stored id (a file with ids too), to find what the input no longer has. */
  sync?: boolean;
  /** ImportOptions.prospective: records earlier files of a dry run would create. */
  prospective?: (collection: string) => ReadonlyArray<Readonly<Record<string, string>>>;
}

/**
 * A key an earlier row of the input had: the first row is kept and this one dropped as a
 * duplicate (`--dedupe error` rejects it instead); the scan's dedupe cannot see natural keys,
 * which are normalised.
 */
export const REPEAT = 'repeat' as const;

/** The reject of a repeated natural key under `--dedupe error`. */
export const repeatFault = (): RowFault => ({ code: '23505', message: 'the natural key appears more than once in the input; --dedupe error rejects every occurrence after the first' });

/** The width of an injected cell: a uuid and its comma. */
const CELL = 37;

export class Matcher {
  /** Columns written before the file's own: `id` (natural key), then reference ids. */
  readonly injected: string[];
  /** The raw columns `assign` reads, in order (the transcoder's key parts on the byte path). */
  readonly needs: string[];
  /** Bytes kept free before each COPY line for the injected cells. */
  readonly reserve: number;
  private readonly at: (c: string) => number;
  /** The stored record the last row matched by natural key, or -1 (a new key). */
  private lastSlot = -1;

  private constructor(
    /** The stored records and their keys (after `load`); null when neither a natural key nor a sync needs them. */
    public index: KeyIndex | null,
    /** True when rows get their id from the natural key (else the file's ids are only marked). */
    readonly natural: boolean,
    readonly resolvers: NameResolver[],
    spec: KeySpec,
    /** `--create-missing` on a tracks file: the credit columns whose names make missing artists. */
    private readonly credits: { resolver: NameResolver; columns: string[] } | null = null,
  ) {
    this.injected = [...(natural ? ['id'] : []), ...resolvers.map((r) => r.ref.idField)];
    const needs = new Set<string>(natural ? keyColumns(spec) : []);
    for (const r of resolvers) {
      needs.add(r.ref.field);
      if (r.ref.collection === 'subgenres') needs.add('genre');
    }
    for (const c of credits?.columns ?? []) needs.add(c);
    this.needs = [...needs];
    this.reserve = CELL * this.injected.length;
    this.at = (c) => this.needs.indexOf(c);
  }

  /**
   * The match stage of an import, or null when it has nothing to do: the file has ids and no sync
   * is asked, and no text reference lacks its id field. Nothing is read yet (see `load`).
   */
  static async open(transport: Transport, table: TableDef, plan: ShapePlan, opts: MatchOptions): Promise<Matcher | null> {
    const refs = referencesOf(table, plan, opts.refs ?? []);
    const spec = naturalKey(table, plan, opts.key);
    const natural = plan.conflictKey === null && spec !== null;
    const keyed = plan.conflictKey !== null && plan.conflictKey.length === 1 && plan.conflictKey[0] === 'id';
    if (opts.sync && !natural && !keyed) {
      throw new ImportError(`--sync needs rows it can match: an id field, or a key (${table.name} has ${table.naturalKey ? `the key ${describeKey(table.naturalKey)}` : 'no default key: give --key COLS'})`, 'usage');
    }
    const creditColumns = opts.createMissing ? table.columns.filter((c) => c.keyList === 'artists' && plan.columns.includes(c.name)).map((c) => c.name) : [];
    if (!natural && !opts.sync && refs.length === 0 && creditColumns.length === 0) return null;
    const resolvers: NameResolver[] = [];
    for (const r of refs) resolvers.push(await NameResolver.open(transport, r, Boolean(opts.createMissing), opts.prospective?.(r.collection)));
    const credits = creditColumns.length ? { resolver: await NameResolver.open(transport, CREDIT_REF, true), columns: creditColumns } : null;
    const m = new Matcher(null, natural, resolvers, natural ? spec! : [], credits);
    m.pending = natural || opts.sync ? { table, spec: natural ? spec! : [], content: natural ? table.columns.filter((c) => c.name !== 'id' && (plan.columns.includes(c.name) || refs.some((r) => r.idField === c.name))) : [] } : null;
    return m;
  }

  private pending: { table: TableDef; spec: KeySpec; content: ColumnDef[] } | null = null;

  /**
   * Reads the stored records' ids and keys. `compare`: also a digest of each stored row's values
   * in the input's columns, so that a row equal to its record is never sent — for a service that
   * does not compare COPY bodies itself (ours does, `Prefer: unchanged=skip`, faster than reading
   * every row first).
   */
  async load(transport: Transport, compare: boolean): Promise<void> {
    if (!this.pending) return;
    const { table, spec, content } = this.pending;
    this.index = await KeyIndex.load(transport, table.name, spec, { content: compare ? content : [] });
  }

  /** The plan with the injected columns: written first, `id` the conflict key of a natural-key import. */
  adjust(plan: ShapePlan, table: TableDef): ShapePlan {
    if (this.injected.length === 0) return plan;
    const col = (n: string) => table.columns.find((c) => c.name === n)!;
    const refCols = this.resolvers.map((r) => col(r.ref.idField));
    return {
      ...plan,
      columns: [...this.injected, ...plan.columns],
      conflictKey: this.natural ? ['id'] : plan.conflictKey,
      keyColumn: this.natural ? col('id') : plan.keyColumn,
      compareColumns: [...refCols, ...plan.compareColumns],
      injected: this.injected,
    };
  }

  /**
   * The injected values of a row (null: an empty cell), or why the row is refused. `get(i)` is
   * the raw text of `needs[i]`; `id` is the row's own id when the file has them.
   */
  assign(get: (i: number) => string | null, id: string | null): Array<string | null> | RowFault | typeof REPEAT {
    const out: Array<string | null> = [];
    if (this.natural) {
      const r = this.matchKey(get);
      if (typeof r !== 'string' || r === REPEAT) return r;
      out.push(r);
    } else if (this.index && id !== null) {
      const slot = this.index.slotOfId(id);
      if (slot >= 0) this.index.mark(slot);
    }
    for (const res of this.resolvers) {
      const genre = res.ref.collection === 'subgenres' ? get(this.at('genre')) : null;
      const r = res.resolve(get(this.at(res.ref.field)), genre);
      if (r !== null && !('id' in r)) return r;
      out.push(r === null ? null : r.id);
    }
    return this.createCredited(get) ?? out;
  }

  /**
   * `--create-missing`: an artist for each credit name no artist has, made once however many rows
   * and roles name it. The cell is sent as it is: the database resolves the names (now all known)
   * as it does without the flag, so both stores and a real PostgREST read it the same way.
   */
  private createCredited(get: (i: number) => string | null): RowFault | null {
    if (!this.credits) return null;
    for (const col of this.credits.columns) {
      const text = get(this.at(col));
      if (text === null) continue;
      for (const name of creditNames(text)) {
        const r = this.credits.resolver.resolve(name);
        if (r !== null && !('id' in r)) return { code: r.code, message: `${col}: ${r.message}` };
      }
    }
    return null;
  }

  /** The id of the stored record with the row's key, a new one, or the row's fault. */
  private matchKey(get: (i: number) => string | null): string | RowFault | typeof REPEAT {
    const index = this.index!;
    this.lastSlot = -1;
    const k = keyOfRow(index.spec, (c) => get(this.at(c)));
    if (k === null) return randomUUID(); // an empty key never matches
    const hit = index.find(k.alt, k.key);
    if (hit === null) {
      const id = randomUUID();
      index.mark(index.add(id, [k]));
      return id;
    }
    if ('ambiguous' in hit) return { code: 'ambiguous-key', message: `the key ${index.spec[k.alt].join(', ')} “${showKey(k.key)}” matches ${hit.ambiguous.length} ${index.table}: ${hit.ambiguous.join(', ')} (give the row an id, or fix the duplicates: catalog check)` };
    if (!index.mark(hit.slot)) return REPEAT;
    this.lastSlot = hit.slot;
    return index.idOf(hit.slot);
  }

  /** Whether the last row `assign` matched to a stored record must be compared with it (the index holds digests). */
  get comparing(): boolean {
    return this.natural && this.lastSlot >= 0 && this.index!.hasContent;
  }

  /** Whether the last matched row (shaped, with its injected ids) equals its stored record: then it is not sent. */
  unchanged(row: Readonly<Record<string, unknown>>): boolean {
    return this.comparing && this.index!.sameContent(this.lastSlot, row);
  }

  /** The injected cells as the start of a COPY line (`id,label_id,` …). */
  prefix(values: Array<string | null>): string {
    let s = '';
    for (const v of values) s += v === null ? ',' : `${v},`;
    return s;
  }

  /** Sends parent records made for unknown names (`--create-missing`) before rows that name them. */
  async flush(transport: Transport): Promise<void> {
    for (const r of this.resolvers) await r.flush(transport);
    await this.credits?.resolver.flush(transport);
  }

  /** Parent records made (or in a dry run, to be made) per collection. */
  created(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const r of [...this.resolvers, ...(this.credits ? [this.credits.resolver] : [])]) if (r.created) out[r.ref.collection] = (out[r.ref.collection] ?? 0) + r.created;
    return out;
  }
}

/** The natural key that applies: `--key`, else the collection's default, when the input has its columns. */
function naturalKey(table: TableDef, plan: ShapePlan, key: string[] | undefined): KeySpec | null {
  if (key?.length) {
    for (const c of key) if (!table.columns.some((col) => col.name === c)) throw new ImportError(`--key ${key.join(',')}: ${table.name} has no field "${c}"`, 'usage');
    const missing = key.filter((c) => !plan.columns.includes(c));
    if (missing.length) throw new ImportError(`--key ${key.join(',')}: the input has no ${missing.join(', ')} field`, 'usage');
    return [key];
  }
  const spec = table.naturalKey;
  if (!spec) return null;
  const present = spec.filter((alt) => alt.every((c) => plan.columns.includes(c)));
  return present.length ? present : null;
}

/** The references to resolve by name: text given, id field not in the input. */
function referencesOf(table: TableDef, plan: ShapePlan, extra: RefSpec[]): RefSpec[] {
  return tableReferences(table, extra).filter((r) => plan.columns.includes(r.field) && !plan.columns.includes(r.idField));
}
