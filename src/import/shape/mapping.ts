import type { ColumnDef, TableDef } from '../../schema/catalog.js';
import { clip } from '../readers/input.js';
import { ImportError } from '../types.js';

/** Columns a rejects file adds in front of the original ones; an import skips them silently. */
export const REJECT_COLUMNS = ['_line', '_code', '_message'] as const;

/** How source keys (CSV headers, JSON keys) map to table columns. */
export interface FieldMapping {
  /** Source key → column, in source order. */
  fields: Map<string, ColumnDef>;
  /** Unknown source keys skipped because of `--ignore-unknown`. */
  ignored: string[];
}

/** Lower-cases and drops spaces, underscores and hyphens: `Release Title` ~ `release_title`. */
export function normalizeName(s: string): string {
  return s.toLowerCase().replace(/[\s_-]+/g, '');
}

/**
 * Parses repeated `--map "Source Header=field"` values into source → field.
 * @example parseMaps(['UPC=upc_code', 'Title = release_title']) // { UPC: 'upc_code', Title: 'release_title' }
 */
export function parseMaps(values: string[] = []): Record<string, string> {
  const out: Record<string, string> = {};
  for (const v of values) {
    const eq = v.lastIndexOf('=');
    if (eq <= 0 || eq === v.length - 1) throw new ImportError(`--map expects "Source Header=field", got "${v}"`, 'usage');
    out[v.slice(0, eq).trim()] = v.slice(eq + 1).trim();
  }
  return out;
}

/**
 * Maps source keys to the table's columns one key at a time (JSON inputs discover keys as they
 * go): `--map` first, then an exact name, then a case/space/underscore-insensitive match.
 * `finish()` raises what is wrong with the keys seen: unknown keys (an error listing the valid
 * fields, unless `ignoreUnknown`), two keys claiming one field, a `--map` naming no key.
 * @example new FieldResolver(labels).resolve('Name')?.name // 'name'
 */
export class FieldResolver {
  private readonly byName: Map<string, ColumnDef>;
  private readonly byNormal: Map<string, ColumnDef>;
  private readonly cache = new Map<string, ColumnDef | null>();
  private readonly claimedBy = new Map<string, string>();
  private readonly unknown: string[] = [];
  private readonly conflicts: string[] = [];
  /** Source key → column for every key resolved so far, in first-seen order. */
  readonly fields = new Map<string, ColumnDef>();

  constructor(
    private readonly table: TableDef,
    private readonly opts: { map?: Record<string, string>; ignoreUnknown?: boolean } = {},
  ) {
    this.byName = new Map(table.columns.map((c) => [c.name, c]));
    this.byNormal = new Map(table.columns.map((c) => [normalizeName(c.name), c]));
    for (const [src, field] of Object.entries(opts.map ?? {})) {
      if (!this.byName.has(field)) {
        throw new ImportError(`--map ${src}=${field}: ${table.name} has no field "${field}". Valid fields: ${this.validList()}`, 'usage');
      }
    }
  }

  private validList(): string {
    return this.table.columns.map((c) => c.name).join(', ');
  }

  /** The column a source key maps to, or null (unknown, ignored, or a rejects-file column). */
  resolve(key: string): ColumnDef | null {
    const hit = this.cache.get(key);
    if (hit !== undefined) return hit;
    let col: ColumnDef | null = null;
    if (!(REJECT_COLUMNS as readonly string[]).includes(key) && key !== '_raw') {
      const map = this.opts.map ?? {};
      const mapped = map[key] ?? map[key.trim()];
      col = (mapped !== undefined ? this.byName.get(mapped) : this.byName.get(key) ?? this.byNormal.get(normalizeName(key))) ?? null;
      if (!col) this.unknown.push(key);
      else {
        const other = this.claimedBy.get(col.name);
        if (other !== undefined) {
          this.conflicts.push(`both "${other}" and "${key}" map to the field ${col.name}: drop one or use --map`);
          col = null;
        } else {
          this.claimedBy.set(col.name, key);
          this.fields.set(key, col);
        }
      }
    }
    this.cache.set(key, col);
    return col;
  }

  /** Unknown keys skipped because of `--ignore-unknown`. */
  get ignored(): string[] {
    return this.opts.ignoreUnknown ? [...this.unknown] : [];
  }

  /** Throws a usage ImportError for unknown or conflicting keys and unused --map entries. */
  finish(): void {
    if (this.conflicts.length) throw new ImportError(this.conflicts[0], 'usage');
    if (this.unknown.length && !this.opts.ignoreUnknown) {
      const list = this.unknown.map((k) => clip(k, 60)).join(', ');
      throw new ImportError(
        `unknown field${this.unknown.length > 1 ? 's' : ''} ${list} for ${this.table.name}. Valid fields: ${this.validList()}. ` +
          'Map a header with --map "Header=field" or skip unknown ones with --ignore-unknown.',
        'usage',
      );
    }
    const seen = this.cache.size;
    for (const [src, field] of Object.entries(this.opts.map ?? {})) {
      if (seen > 0 && !this.cache.has(src) && !this.cache.has(src.trim())) {
        throw new ImportError(`--map "${src}=${field}": the input has no field "${src}"`, 'usage');
      }
    }
  }
}

/** Resolves a known list of keys at once (CSV headers); see FieldResolver. */
export function resolveFields(
  keys: Iterable<string>,
  table: TableDef,
  opts: { map?: Record<string, string>; ignoreUnknown?: boolean } = {},
): FieldMapping {
  const r = new FieldResolver(table, opts);
  for (const k of keys) r.resolve(k);
  r.finish();
  return { fields: r.fields, ignored: r.ignored };
}
