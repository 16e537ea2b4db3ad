import type { ColumnDef, TableDef } from '../../schema/catalog.js';
import { knownDefault } from '../../schema/conventions.js';
import type { FieldResolver } from './mapping.js';
import { buildRow, keyOf, type RowResult } from './rows.js';
import { ImportError, type SourceRecord } from '../types.js';
import { type RowCheck, runChecks } from './check.js';
import { CsvBytesRecord, type CsvForm } from '../pass/pass.js';
import type { DateCells } from './dates.js';

/**
 * The shape stage: a source record becomes a row of the table. Fields are mapped (`--map`, name
 * matching), values coerced by column type (the null token, empty cell = column default), the
 * check stage runs on the result, and cells left out get their known constant defaults.
 */
export class RowShaper {
  constructor(
    readonly resolver: FieldResolver,
    /** CSV: values are cell text (empty = default, the null token = null). */
    readonly fromText: boolean,
    readonly nullToken: string | null,
    readonly checks: readonly RowCheck[],
    /** Date cells written the `--date-format` way (src/import/shape/dates.ts), when the import has date columns. */
    readonly dates: DateCells | null = null,
  ) {}

  /** The record mapped, coerced and checked, or why it is rejected. */
  shape(rec: SourceRecord): RowResult {
    let source = rec;
    if (this.dates && (this.dates.format || rec.dateOf)) {
      const converted = this.dates.convert(rec);
      if ('code' in converted) return { ok: false, code: converted.code, message: converted.message };
      source = converted;
    }
    const built = buildRow(source, this.resolver, this.fromText, this.nullToken);
    if (!built.ok || this.checks.length === 0) return built;
    const fault = runChecks(this.checks, built.row, rec);
    return fault ? { ok: false, code: fault.code, message: fault.message } : built;
  }

  /** The conflict key of a record when it shapes well, else null. */
  keyOf(rec: SourceRecord, keyColumns: string[]): string | null {
    const s = this.shape(rec);
    return s.ok ? keyOf(s.row, keyColumns) : null;
  }
}

/** What the whole input sends, known once the scan has seen every field. */
export interface ShapePlan {
  /** The table's columns the input has, in table order (`columns=`). */
  columns: string[];
  /** The conflict key when the input carries it, else null (plain inserts). */
  conflictKey: string[] | null;
  /** The single key column (lookups of stored rows), when the key is one column. */
  keyColumn: ColumnDef | null;
  /** Columns compared with stored rows (the input's). */
  compareColumns: ColumnDef[];
  ignoredFields: string[];
  /** Columns the match stage writes before the input's own (src/import/match/match.ts). */
  injected?: string[];
}

/** The plan after the scan, with the checks that need the whole input's fields. */
export function planShape(table: TableDef, resolver: FieldResolver, keyColumns: string[], opts: { onConflict?: string[]; ignoreDuplicates: boolean }): ShapePlan {
  const fields = [...resolver.fields.values()];
  const columns = table.columns.filter((c) => fields.includes(c)).map((c) => c.name);
  if (opts.onConflict?.length) {
    const missing = opts.onConflict.filter((c) => !columns.includes(c));
    if (missing.length) throw new ImportError(`--on-conflict ${opts.onConflict.join(',')}: the input has no ${missing.join(', ')} field`, 'usage');
  }
  const keyed = keyColumns.every((c) => columns.includes(c));
  if (opts.ignoreDuplicates && !keyed) throw new ImportError(`--ignore-duplicates needs the conflict key (${keyColumns.join(', ')}) in the input`, 'usage');
  return {
    columns,
    conflictKey: keyed ? keyColumns : null,
    keyColumn: keyed && keyColumns.length === 1 ? (table.columns.find((c) => c.name === keyColumns[0]) ?? null) : null,
    compareColumns: table.columns.filter((c) => columns.includes(c.name)),
    ignoredFields: resolver.ignored,
  };
}

/** A row on its way to the service, as the batch, send and account stages see it. */
export interface PendingRow {
  readonly record: SourceRecord;
  /** The row as a JSON body carries it (null until needed when it is a COPY line); parsed back only to compare with a stored row. */
  json: string | null;
  /**
   * The buffer holding the row as a COPY CSV line (at `copyAt`, `bytes` long), when the service
   * takes COPY bodies and the row can be one. Offsets, not a view per row: 100k Buffer views were
   * a fifth of an import's garbage.
   */
  copyOut: Buffer | null;
  copyAt: number;
  bytes: number;
  readonly key: string | null;
  kind: 'insert' | 'update';
  /** Every column of the request is in the row (left-out cells filled with known constant defaults). */
  complete: boolean;
}

/**
 * A row the COPY transcoder wrote as a line; its record (a CsvBytesRecord, pass/pass.ts) is
 * made from the bytes only when asked (a reject, a JSON body): most rows never are, and make none.
 */
export class CopyRow implements PendingRow {
  json: string | null = null;
  kind: 'insert' | 'update' = 'insert';
  complete = true;
  copyOut: Buffer | null = null;
  copyAt = 0;
  bytes = 0;
  constructor(
    readonly key: string | null,
    readonly index: number,
    private readonly line: number,
    private readonly src: Buffer,
    private readonly a: number,
    private readonly z: number,
    private readonly form: CsvForm,
    /** The record, when something decoded it while the pass stood on it. */
    private rec: SourceRecord | null = null,
  ) {}

  get record(): SourceRecord {
    this.rec ??= new CsvBytesRecord(this.index, this.line, this.src, this.a, this.z, this.form);
    return this.rec;
  }
}

/** The shaper with the plan: builds the JSON form of rows, left-out cells filled with their known defaults. */
export class Shape {
  /** Left-out cells of columns with a constant default (NULL, '', false) are filled in; volatile ones (now()) are left to the server. */
  private readonly fill: Array<{ name: string; value: unknown }>;

  constructor(
    readonly shaper: RowShaper,
    readonly plan: ShapePlan,
  ) {
    this.fill = plan.compareColumns.map((col) => ({ name: col.name, value: knownDefault(col) }));
  }

  /** Fills the cells the row left out with their known constant defaults; false when a volatile one is left to the service. */
  fillDefaults(row: Record<string, unknown>): boolean {
    let complete = true;
    for (const f of this.fill) {
      if (f.name in row) continue;
      if (f.value === undefined) complete = false;
      else row[f.name] = f.value;
    }
    return complete;
  }

  /** A shaped row as a JSON row of a batch. */
  jsonRow(rec: SourceRecord, row: Record<string, unknown>, key: string | null): PendingRow {
    const complete = this.fillDefaults(row);
    const json = JSON.stringify(row);
    return { record: rec, json, copyOut: null, copyAt: 0, bytes: Buffer.byteLength(json) + 1, key, kind: 'insert', complete };
  }

  /** The JSON text of a row (a COPY line's row is shaped again the ordinary way, once). */
  jsonOf(r: PendingRow): string {
    if (r.json !== null) return r.json;
    const built = buildRow(r.record, this.shaper.resolver, this.shaper.fromText, this.shaper.nullToken);
    if (!built.ok) throw new Error(`line ${r.record.line}: ${built.message}`); // the transcoder accepted it: cannot happen
    if (!this.fillDefaults(built.row)) r.complete = false;
    r.json = JSON.stringify(built.row);
    return r.json;
  }
}
