import type { Transport } from '../../client/transport.js';
import type { ColumnDef, TableDef } from '../../schema/catalog.js';
import { fetchExisting } from './existing.js';
import { KeyIndex } from '../match/keys.js';
import { CREDIT_REF } from '../match/names.js';
import { isrcBare, nameKey } from '../../schema/keys.js';
import { UUID_TEXT } from '../../schema/codecs.js';
import { jsonbKeys, jsonbText } from '../../format/csv-dialect.js';
import { CREDIT_FIELDS, creditProblems, keyList, releaseTrackProblems } from '../../schema/links.js';
import type { Reject } from '../account/rejects.js';
import type { PendingRow } from '../shape/shape.js';

/** Most references remembered per column (present or missing) before the memory starts over. */
const MAX_REMEMBERED = 100_000;

/**
 * A check in advance of what the database refuses about a row's links and references: a link of
 * the wrong shape (23514, by the rules of src/schema/links.ts), a link id or foreign key naming
 * nothing (23503: this asks the service which of a batch's references exist, one `id=in.(…)` GET
 * per referenced collection and batch). Rows it finds are rejected with the database's message.
 * A dry run always uses it (its reject count then agrees with the real run's); a real run turns
 * it on once the database has refused many rows so (tracks imported before their artists: every
 * batch would otherwise be bisected down to single rows, two requests per row).
 * Answers are remembered; a reference found missing is asked again in a real run (another
 * import may have made it since), in a dry run nothing changes.
 */
export class ReferenceCheck {
  private readonly present = new Map<string, Set<string>>();
  private readonly absent = new Map<string, Set<string>>();
  /** The link columns the check reads, in the order the database's trigger checks them. */
  private readonly linkColumns: ColumnDef[];

  private constructor(
    private readonly transport: Transport,
    private readonly table: TableDef,
    private readonly columns: ColumnDef[],
    /** Remember missing references across batches (a dry run: nothing is written meanwhile). */
    private readonly rememberAbsent: boolean,
    /** Ids the run has made that the service does not have yet (ImportOptions.knownIds). */
    private readonly known?: (collection: string, id: string) => boolean,
    /** Credit names are checked against the artists (not when the import creates the missing ones). */
    private readonly names = false,
  ) {
    const order = (c: ColumnDef) => (CREDIT_FIELDS.includes(c.name) ? CREDIT_FIELDS.indexOf(c.name) : -1);
    this.linkColumns = columns.filter((c) => c.keyList).sort((a, b) => order(a) - order(b));
  }

  /** A check for the foreign-key and link columns the import writes, or null when it writes none. */
  static for(transport: Transport, table: TableDef, columns: string[], rememberAbsent = true, known?: (collection: string, id: string) => boolean, names = false): ReferenceCheck | null {
    // a key to the table itself is left to the database: a parent may be in the same batch
    const refs = table.columns.filter((c) => ((c.foreignKey && c.foreignKey.table !== table.name) || c.keyList) && columns.includes(c.name));
    return refs.length ? new ReferenceCheck(transport, table, refs, rememberAbsent, known, names) : null;
  }

  /** The rows whose references all exist; the others are added to `rejects`. `jsonOf` gives a row's JSON text. */
  async keep(rows: PendingRow[], jsonOf: (r: PendingRow) => string, rejects: Reject[]): Promise<PendingRow[]> {
    const values = rows.map((r) => JSON.parse(jsonOf(r)) as Record<string, unknown>);
    const bad = new Map<PendingRow, { code: string; message: string }>();
    // the database checks links in its row triggers (shape first, then ids), before foreign keys
    rows.forEach((r, i) => {
      const shape = linkShapeFault(this.linkColumns, values[i]);
      if (shape) bad.set(r, { code: '23514', message: shape });
    });
    for (const col of this.linkColumns) await this.checkLinks(col, rows, values, bad);
    for (const col of this.columns) {
      const fk = col.foreignKey;
      if (!fk) continue;
      const refs = values.map((v) => v[col.name]).filter((ref): ref is string => typeof ref === 'string');
      const absent = await this.absentOf(col.name, fk.table, { name: fk.column, type: col.type, nullable: false }, refs);
      rows.forEach((r, i) => {
        const ref = values[i][col.name];
        if (typeof ref === 'string' && absent.has(ref) && !bad.has(r)) {
          bad.set(r, { code: '23503', message: `insert or update on table "${this.table.name}" violates foreign key constraint "${fk.constraint}" (Key (${col.name})=(${ref}) is not present in table "${fk.table}".)` });
        }
      });
    }
    for (const [r, { code, message }] of bad) rejects.push({ record: r.record, code, message });
    return bad.size ? rows.filter((r) => !bad.has(r)) : rows;
  }

  /**
   * A link field's ids (`releases.tracks` → tracks, a credits list → artists): the first element
   * whose id names no record rejects the row as the database's trigger would (its path and
   * reason, without the element it adds as detail). Elements are read in order up to the first
   * that is not an object with a uuid id (a name, or a shape the database refuses itself).
   */
  private async checkLinks(col: ColumnDef, rows: PendingRow[], values: Array<Record<string, unknown>>, bad: Map<PendingRow, { code: string; message: string }>): Promise<void> {
    const target = col.keyList === 'tracks' ? 'tracks' : 'artists';
    const named = values.map((v, i) => (bad.has(rows[i]) ? [] : linkedIds(v[col.name], target === 'tracks', this.names)));
    const artistNames = named.some((els) => els.some((e) => e.kind === 'name')) ? await this.artistNames() : null;
    const ids = named.flatMap((els) => els.filter((e) => e.kind === 'id').map((e) => e.value));
    const absent = await this.absentOf(col.name, target, { name: 'id', type: 'uuid', nullable: false }, ids);
    // ISRCs as keys: present when a track has the key as written, or without separators in upper case (as the database resolves it)
    const isrcs = named.flatMap((els) => els.filter((e) => e.kind === 'isrc').flatMap((e) => [e.value, isrcBare(e.value)]));
    const absentIsrc = isrcs.length ? await this.absentOf(`${col.name}:isrc`, 'tracks', { name: 'isrc_code', type: 'text', nullable: false }, isrcs) : new Set<string>();
    rows.forEach((r, i) => {
      if (bad.has(r)) return;
      const missing = named[i].find((e) =>
        e.kind === 'id' ? absent.has(e.value) : e.kind === 'isrc' ? absentIsrc.has(e.value) && absentIsrc.has(isrcBare(e.value)) : artistNames!.find(0, nameKey(e.value)) === null,
      );
      if (!missing) return;
      const element = () => [...jsonbText(missing.value, jsonbKeys)].join('');
      const message =
        missing.kind === 'id'
          ? `${col.name}[${missing.at}].id: no ${target === 'tracks' ? 'track' : 'artist'} has id ${missing.value}`
          : missing.kind === 'isrc'
            ? `${col.name}[${missing.at}]: no track has ISRC ${missing.value} (the element: ${element()})`
            : `${col.name}[${missing.at}]: no artist is named "${missing.value}" (the element: ${element()})`;
      bad.set(r, { code: '23503', message });
    });
  }

  private names$: Promise<KeyIndex> | null = null;

  /** Every artist's stage name, by name key (read once; credit names resolve against them as the database's do). */
  private artistNames(): Promise<KeyIndex> {
    this.names$ ??= KeyIndex.load(this.transport, CREDIT_REF.collection, [[CREDIT_REF.column]]);
    return this.names$;
  }

  /**
   * Which of `refs` (values of `column`) no record of `collection` has in `key`: the ones not
   * remembered are asked for (one `in.(…)` GET per URL's worth), and the answers remembered.
   */
  private async absentOf(column: string, collection: string, key: ColumnDef, refs: string[]): Promise<Set<string>> {
    const present = this.memory(this.present, column);
    const absent = this.rememberAbsent ? this.memory(this.absent, column) : new Set<string>();
    const ask = new Set(refs.filter((ref) => !present.has(ref) && !absent.has(ref) && !this.known?.(collection, ref)));
    if (ask.size) {
      const found = await fetchExisting(this.transport, collection, key, [...ask], [key.name]);
      for (const ref of ask) (found.has(ref) ? present : absent).add(ref);
    }
    return absent;
  }

  private memory(m: Map<string, Set<string>>, column: string): Set<string> {
    let s = m.get(column);
    if (!s || s.size > MAX_REMEMBERED) m.set(column, (s = new Set()));
    return s;
  }
}

/** A link element the check can answer for: an id to look up, or (releases.tracks) an ISRC given as the key. */
interface LinkedKey {
  at: number;
  kind: 'id' | 'isrc' | 'name';
  value: string;
}

/**
 * A link value's element ids (lower-cased) and ISRC keys in order, with each element's index, up
 * to the first element the database would refuse or resolve itself (a name, a shape it refuses);
 * an element with a name and no id is passed over. A string cell is its `;`-separated keys, as
 * the database splits it (empty keys dropped).
 */
function linkedIds(value: unknown, tracks: boolean, names = false): LinkedKey[] {
  const list = keyList(value);
  if (!Array.isArray(list)) return [];
  const out: LinkedKey[] = [];
  for (let i = 0; i < list.length; i++) {
    const el = list[i] as unknown;
    if (typeof el === 'string') {
      const k = el.trim();
      if (UUID_TEXT.test(k)) out.push({ at: i, kind: 'id', value: k.toLowerCase() });
      else if (tracks && k !== '') out.push({ at: i, kind: 'isrc', value: k });
      else if (names && k !== '') out.push({ at: i, kind: 'name', value: k });
      else break; // a name: the database resolves it (and says if it cannot)
      continue;
    }
    if (el === null || typeof el !== 'object' || Array.isArray(el)) break;
    const { id, name } = el as Record<string, unknown>;
    if (id === undefined || id === null) {
      if (typeof name === 'string' && name.trim() !== '') continue;
      break;
    }
    if (typeof id !== 'string' || !UUID_TEXT.test(id)) break;
    out.push({ at: i, kind: 'id', value: id.toLowerCase() });
  }
  return out;
}

/**
 * The database trigger's refusal (23514) of a row's links for their shape, as the import reports
 * it (`path: reason (the element: …)`), or null. The rules are src/schema/links.ts's, which the
 * link test holds to the triggers'. A row with a key written as text (`"ISRC;ISRC"`, a name in
 * place of an element) is left to the database, which resolves it first.
 */
function linkShapeFault(columns: ColumnDef[], row: Record<string, unknown>): string | null {
  for (const c of columns) {
    const v = row[c.name];
    if (v === undefined || v === null || typeof v === 'string') continue;
    if (Array.isArray(v) && v.some((el) => typeof el === 'string')) return null;
    const p = (c.keyList === 'tracks' ? releaseTrackProblems(v) : creditProblems(c.name, v)).find((x) => x.kind === 'shape');
    if (!p) continue;
    const at = /^[a-z_]+\[(\d+)\]/.exec(p.path);
    const element = at && Array.isArray(v) ? v[Number(at[1])] : undefined;
    return element === undefined ? `${p.path}: ${p.reason}` : `${p.path}: ${p.reason} (the element: ${[...jsonbText(element, jsonbKeys)].slice(0, 200).join('')})`;
  }
  return null;
}
