import { COPY_CSV, parseMediaType } from '../grammar/media.js';
import { MAX_JSON_DEPTH, jsonTextTooDeep, jsonTooDeep, tooDeepMessage } from '../schema/json-depth.js';
import { SOURCE_IDS, SOURCE_IDS_HINT, sourceIdsProblem } from '../schema/source-ids.js';
import { ApiError } from './errors.js';
import { nextTurn, SLICE_RECORDS } from '../shared/turns.js';
import { CR, CsvTokenizer, ESCAPED, fieldText, LF, QUOTED, TOKENS_OK } from '../format/csv-tokens.js';

/**
 * A write body, checked and normalised to one JSON array text that the database reads in a single
 * statement (`json_populate_recordset`). `keys` are the columns the body sets.
 */
export interface Payload {
  /** JSON array of objects, as text: bound as ONE parameter. */
  json: string;
  /** Keys of the rows (of the first object; the union when `uniform` is false). */
  keys: string[];
  /** Number of row objects. */
  rows: number;
  /**
   * False when rows may lack some keys on purpose (CSV with `missing=default`, or a `columns`
   * list): absent keys then take the column DEFAULT or NULL.
   */
  uniform: boolean;
  /** The first row (PATCH and PUT use one row), or null for an empty array. */
  first: Record<string, unknown> | null;
  /**
   * A `COPY_CSV` body, header line included: loaded with COPY into a staging table instead of
   * being bound as JSON (`json` is then empty and `rows` unknown, -1).
   */
  copy?: Uint8Array;
  /** A `COPY_CSV` body's header: its columns in order, `source_ids` included (`keys` leaves it out). */
  copyColumns?: string[];
  /**
   * The body carries `source_ids` (our extension, src/schema/source-ids.ts): a field of its
   * objects (checked here; a CSV or form cell parsed from its JSON text into the row) or a COPY
   * column (checked by the database). `keys` leaves it out: it is no column.
   */
  sourceIds?: boolean;
  /**
   * A `COPY_CSV` body's jsonb cells where the depth check read them (checkCopyCells), so the
   * credits read (link-batch.ts) does not tokenize the body a second time.
   */
  copyCells?: CopyCells;
}

/**
 * Where a COPY body's jsonb cells are, per record after the header: `counts[r]` the record's field
 * count (0 for a blank line), and for the j-th of the `columns` (jsonb columns, in header order)
 * `at[(r * columns.length + j) * 2]` and `+ 1` its byte range (quotes included), `flags[…]` the
 * tokenizer's flags; a record too short to reach a column has the range -1, -1.
 */
export interface CopyCells {
  /** The body's header, in order. */
  keys: readonly string[];
  /** The jsonb columns indexed, in header order. */
  columns: readonly string[];
  records: number;
  counts: Int32Array;
  at: Int32Array;
  flags: Uint8Array;
}


/** 400 PGRST102 with PostgREST's message. */
function invalidBody(message: string): ApiError {
  return new ApiError(400, 'PGRST102', message);
}

export interface PayloadOptions {
  /** `columns=` from the query string: only these keys are read, uniformity is not checked. */
  columns?: string[];
  /** `Prefer: missing=default`: empty unquoted CSV cells mean "absent" (column default). */
  missingDefault?: boolean;
  /** The request's method (a `COPY_CSV` body is for POST only). */
  method?: string;
  /** The table's jsonb columns: their CSV and COPY cells are JSON text, checked for depth here. */
  jsonColumns?: ReadonlySet<string>;
  /** The table has the computed field `source_ids`, which a write may carry (our extension). */
  sourceIds?: boolean;
}

/** The body's own array and row object around a value: a JSON body may nest this much deeper than a value. */
const BODY_LEVELS = 2;

/** 400 PGRST102: a JSON value nested past MAX_JSON_DEPTH (which the database would answer with a stack overflow, or worse). */
function tooDeep(where: string): ApiError {
  return new ApiError(400, 'PGRST102', tooDeepMessage(), { details: `${where} nests deeper than ${MAX_JSON_DEPTH} levels.`, hint: null });
}

/**
 * The body as text, refusing bytes that are not UTF-8 (never replaced with U+FFFD and stored).
 * `kind` names the format in PostgREST's message ("Empty or invalid json").
 */
function utf8(body: string | Uint8Array, kind: string): string {
  if (typeof body === 'string') return body;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    const at = firstInvalidUtf8(body);
    throw new ApiError(400, 'PGRST102', `Empty or invalid ${kind}`, {
      details: `The body is not valid UTF-8: invalid byte sequence at byte ${at} (0x${body[at]?.toString(16).padStart(2, '0') ?? '??'}).`,
      hint: 'Send the body encoded as UTF-8.',
    });
  }
}

/** Offset of the first byte at which the bytes stop being UTF-8 (for a sequence cut short by the end: where it starts). */
function firstInvalidUtf8(bytes: Uint8Array): number {
  let lo = 0;
  let hi = bytes.length;
  // the longest prefix that decodes (streaming: a sequence cut by the prefix's end is not yet wrong), by halving
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(0, mid), { stream: true });
      lo = mid;
    } catch {
      hi = mid - 1;
    }
  }
  if (lo < bytes.length) return lo;
  // every byte fits, but the last sequence is cut short: name the byte it starts at
  let at = bytes.length - 1;
  while (at > 0 && (bytes[at] & 0xc0) === 0x80) at--;
  return at;
}

/**
 * Parses a request body by its Content-Type: JSON (also when no Content-Type is given), CSV
 * (`text/csv`) or a form (`application/x-www-form-urlencoded`). Anything else is PGRST102.
 * Example: `parsePayload('[{"name":"a"},{"name":"b"}]', null)` → keys `['name']`, 2 rows.
 */
export function parsePayload(body: string | Uint8Array, contentType: string | null, opts: PayloadOptions = {}): Payload {
  const mime = parseMediaType(contentType ?? '').type;
  // a COPY body goes to the database as the bytes it came in (PostgreSQL checks their encoding)
  if (mime === COPY_CSV) return fromCopyCsv(typeof body === 'string' ? Buffer.from(body) : body, opts);
  if (mime === '' || mime === 'application/json' || mime === '*/*' || mime === 'application/vnd.pgrst.object+json' || mime === 'application/vnd.pgrst.object') {
    const bytes = typeof body === 'string' ? Buffer.from(body) : body;
    const text = utf8(body, 'json');
    // before JSON.parse and long before the database, whose jsonb parser recurses
    if (jsonTooDeep(bytes, MAX_JSON_DEPTH + BODY_LEVELS) >= 0) throw tooDeep('A value in the body');
    return fromJson(text, opts);
  }
  if (mime === 'text/csv') return fromCsv(utf8(body, 'csv'), opts);
  if (mime === 'application/x-www-form-urlencoded') return fromForm(utf8(body, 'form'), opts);
  throw invalidBody(`Content-Type not acceptable: ${mime}`);
}

function fromJson(text: string, opts: PayloadOptions): Payload {
  let value: unknown;
  try {
    if (text.trim() === '') throw new Error('empty');
    value = JSON.parse(text);
  } catch {
    throw invalidBody('Empty or invalid json');
  }
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (isObject(value)) {
    const keys = Object.keys(value);
    return finish([value], keys, true, opts, `[${text.trim()}]`);
  }
  if (!Array.isArray(value)) throw invalidBody('Empty or invalid json');
  if (!value.every(isObject)) throw invalidBody('All object keys must match');
  const rows = value as Record<string, unknown>[];
  const keys = rows.length > 0 ? Object.keys(rows[0]) : [];
  if (!opts.columns) {
    const want = [...keys].sort().join('\u0000');
    for (const r of rows) {
      const ks = Object.keys(r);
      if (ks.length !== keys.length || ks.sort().join('\u0000') !== want) throw invalidBody('All object keys must match');
    }
  }
  return finish(rows, keys, true, opts, text);
}

function fromForm(text: string, opts: PayloadOptions): Payload {
  const row: Record<string, string> = {};
  for (const [k, v] of new URLSearchParams(text)) row[k] = v;
  checkTextCells([row], opts, 'field');
  parseSourceIdCells([row], opts);
  return finish([row], Object.keys(row), true, opts, JSON.stringify([row]));
}

/**
 * A `text/csv` body's records, read with the CSV tokenizer (src/format/csv-tokens.ts), blank lines
 * skipped: an unquoted NULL is SQL null and a quoted "NULL" stays text (reference §7.1); with
 * missing=default (our extension for bulk imports) an empty unquoted cell is undefined, the column DEFAULT.
 */
function csvRecords(text: string, missingDefault: boolean): Array<Array<string | null | undefined>> {
  const bytes = Buffer.from(text);
  const n = bytes.length;
  const t = new CsvTokenizer();
  const records: Array<Array<string | null | undefined>> = [];
  let p = 0;
  while (p < n) {
    if (bytes[p] === LF || (bytes[p] === CR && bytes[p + 1] === LF)) {
      p += bytes[p] === CR ? 2 : 1;
      continue;
    }
    if (t.read(bytes, p, n, true) !== TOKENS_OK) throw invalidBody('Empty or invalid csv');
    const cells = new Array<string | null | undefined>(t.count);
    for (let f = 0; f < t.count; f++) {
      const value = fieldText(bytes, t.from(f), t.to(f), (t.flags[f] & ESCAPED) !== 0);
      cells[f] = t.flags[f] & QUOTED ? value : value === 'NULL' ? null : value === '' && missingDefault ? undefined : value;
    }
    records.push(cells);
    p = t.next;
  }
  return records;
}

function fromCsv(text: string, opts: PayloadOptions): Payload {
  const records = csvRecords(text, opts.missingDefault === true);
  if (records.length === 0) return finish([], [], true, opts, '[]');
  const header = records[0].map((h) => (h === null ? 'NULL' : (h ?? '')));
  const rows: Record<string, unknown>[] = [];
  let uniform = true;
  for (let i = 1; i < records.length; i++) {
    const rec = records[i];
    if (rec.length !== header.length) throw invalidBody('All lines must have same number of fields');
    const row: Record<string, unknown> = {};
    header.forEach((h, j) => {
      const v = rec[j];
      if (v === undefined) uniform = false;
      else row[h] = v;
    });
    rows.push(row);
  }
  checkTextCells(rows, opts, 'row');
  parseSourceIdCells(rows, opts);
  return finish(rows, header, uniform, opts, JSON.stringify(rows));
}

/** CSV and form cells of jsonb columns are JSON text the database parses: refused when nested too deep. */
function checkTextCells(rows: Record<string, unknown>[], opts: PayloadOptions, noun: string): void {
  if (!opts.jsonColumns || opts.jsonColumns.size === 0) return;
  rows.forEach((row, i) => {
    for (const name of opts.jsonColumns!) {
      const v = row[name];
      if (typeof v === 'string' && jsonTextTooDeep(v)) throw tooDeep(`The ${name} value of ${noun === 'row' ? `data row ${i + 1}` : 'the form'}`);
    }
  });
}

/** Unquoted or plainly quoted names of a header line (no separators or quotes inside names). */
const HEADER_NAME = /^(?:"([^",\r\n]*)"|([^",\r\n]*))$/;

/**
 * `COPY_CSV` bodies (see grammar/media.ts): a header line of column names, then one record per
 * row; an unquoted empty field is NULL, a quoted `""` the empty string; values are PostgreSQL
 * input text of the column's type (jsonb as JSON text). POST (insert/upsert) only.
 */
function fromCopyCsv(bytes: Uint8Array, opts: PayloadOptions): Payload {
  const head = copyHeader(bytes, opts);
  const check = new CopyCellCheck(bytes, head.start, head.keys, head.jsonCells);
  check.step(Infinity);
  return copyPayload(bytes, opts, head.keys, check.result());
}

/**
 * parsePayload, with a COPY body's cells read a slice of records at a time, letting the event loop
 * turn between slices: a 5,000-row body is ~40 ms of reading, and the embedded store's thread
 * (store/pglite-remote.ts) waits for this one between the statements of another batch's transaction.
 */
export async function parsePayloadSliced(body: Uint8Array, contentType: string | null, opts: PayloadOptions = {}): Promise<Payload> {
  if (parseMediaType(contentType ?? '').type !== COPY_CSV) return parsePayload(body, contentType, opts);
  const head = copyHeader(body, opts);
  const check = new CopyCellCheck(body, head.start, head.keys, head.jsonCells);
  while (!check.step(SLICE_RECORDS)) await nextTurn();
  return copyPayload(body, opts, head.keys, check.result());
}

/** A COPY body's header line, checked: its column names, the jsonb columns among them, and where the records start. */
function copyHeader(bytes: Uint8Array, opts: PayloadOptions): { keys: string[]; jsonCells: ReadonlySet<string> | undefined; start: number } {
  if (opts.method !== undefined && opts.method !== 'POST') throw invalidBody(`Content-Type not acceptable: ${COPY_CSV} (POST only)`);
  if (opts.columns) throw invalidBody(`columns= cannot be combined with ${COPY_CSV}: the header line names the columns`);
  if (opts.missingDefault) throw invalidBody(`missing=default cannot be combined with ${COPY_CSV}: an unquoted empty field is NULL`);
  const eol = bytes.indexOf(LF);
  const line = new TextDecoder('utf-8').decode(eol < 0 ? bytes : bytes.subarray(0, eol)).replace(/\r$/, '');
  if (line.trim() === '') throw invalidBody('Empty or invalid csv');
  const keys = line.split(',').map((cell) => {
    const m = HEADER_NAME.exec(cell);
    if (!m || (m[1] ?? m[2]) === '') throw invalidBody('Empty or invalid csv');
    return m[1] ?? m[2];
  });
  const jsonCells = opts.sourceIds && keys.includes(SOURCE_IDS) ? new Set([...(opts.jsonColumns ?? []), SOURCE_IDS]) : opts.jsonColumns;
  return { keys, jsonCells, start: eol < 0 ? bytes.length : eol + 1 };
}

/** The payload of a checked COPY body. */
function copyPayload(bytes: Uint8Array, opts: PayloadOptions, keys: string[], copyCells: CopyCells | undefined): Payload {
  if (opts.sourceIds && keys.includes(SOURCE_IDS)) {
    return { json: '', keys: keys.filter((k) => k !== SOURCE_IDS), rows: -1, uniform: true, first: null, copy: bytes, copyColumns: keys, sourceIds: true, copyCells };
  }
  return { json: '', keys, rows: -1, uniform: true, first: null, copy: bytes, copyCells };
}

/**
 * The jsonb cells of a COPY body, checked for depth before COPY hands them to the database's
 * recursive jsonb parser (a cell nested 10k deep made PGlite spin, out of reach of SIGTERM). Reads
 * the records once, in place, with the CSV tokenizer (src/format/csv-tokens.ts), `step` by `step`;
 * a body that is not RFC 4180 CSV is refused here, since past a record the tokenizer cannot read,
 * the cells COPY sees are not the ones checked.
 */
class CopyCellCheck {
  private readonly json: boolean[];
  private readonly index: CellIndex | null;
  private readonly t = new CsvTokenizer();
  private p: number;

  constructor(
    private readonly bytes: Uint8Array,
    start: number,
    private readonly keys: string[],
    jsonColumns: ReadonlySet<string> | undefined,
  ) {
    this.json = keys.map((k) => jsonColumns?.has(k) ?? false);
    this.index = this.json.includes(true) ? new CellIndex(keys, keys.filter((_, f) => this.json[f])) : null;
    this.p = start;
  }

  /** Reads up to `records` more records; true once the body is read to its end. */
  step(records: number): boolean {
    const { bytes, t, json, index } = this;
    if (!index) return true;
    const length = bytes.length;
    let p = this.p;
    for (let n = 0; p < length && n < records; n++, p = t.next) {
      if (t.read(bytes, p, length, true) !== TOKENS_OK) throw invalidBody(`Malformed csv on line ${lineAt(bytes, p) + t.problemLine}: ${t.problem}`);
      const count = Math.min(t.count, json.length);
      const r = index.record(t.count === 1 && t.to(0) === t.from(0) ? 0 : t.count);
      for (let f = 0, j = 0; f < json.length; f++) {
        if (!json[f]) continue;
        if (f >= count) {
          index.cell(r, j++, -1, -1, 0);
          continue;
        }
        const a = t.from(f);
        const b = t.to(f);
        index.cell(r, j++, a, b, t.flags[f]);
        // a cell shorter than the limit cannot hold that many brackets: most are skipped unread
        if (b - a > MAX_JSON_DEPTH && jsonTooDeep(bytes, MAX_JSON_DEPTH, a, b, t.flags[f] & QUOTED ? 2 : 1) >= 0) {
          throw tooDeep(`The ${this.keys[f]} cell on line ${lineAt(bytes, t.starts[f])}`);
        }
      }
    }
    this.p = p;
    return p >= length;
  }

  /** The cells found (none when the body has no jsonb column). */
  result(): CopyCells | undefined {
    return this.index?.done();
  }
}

/** Builds a CopyCells, growing its arrays as records come. */
class CellIndex {
  private records = 0;
  private counts = new Int32Array(1024);
  private at: Int32Array;
  private flags: Uint8Array;
  constructor(
    private readonly keys: string[],
    private readonly columns: string[],
  ) {
    this.at = new Int32Array(1024 * columns.length * 2);
    this.flags = new Uint8Array(1024 * columns.length);
  }

  record(count: number): number {
    if (this.records === this.counts.length) {
      const grow = <T extends Int32Array | Uint8Array>(a: T, make: (n: number) => T): T => {
        const b = make(a.length * 2);
        b.set(a);
        return b;
      };
      this.counts = grow(this.counts, (n) => new Int32Array(n));
      this.at = grow(this.at, (n) => new Int32Array(n));
      this.flags = grow(this.flags, (n) => new Uint8Array(n));
    }
    this.counts[this.records] = count;
    return this.records++;
  }

  cell(r: number, j: number, from: number, to: number, flags: number): void {
    const k = r * this.columns.length + j;
    this.at[k * 2] = from;
    this.at[k * 2 + 1] = to;
    this.flags[k] = flags;
  }

  done(): CopyCells {
    return { keys: this.keys, columns: this.columns, records: this.records, counts: this.counts, at: this.at, flags: this.flags };
  }
}

/** The 1-based line a byte offset is on (only for an error message: counted when one is made). */
function lineAt(bytes: Uint8Array, offset: number): number {
  let line = 1;
  for (let at = bytes.indexOf(LF); at >= 0 && at < offset; at = bytes.indexOf(LF, at + 1)) line++;
  return line;
}

/** A CSV or form body's `source_ids` cells are JSON text: parsed into the rows, so the JSON handed on carries objects. */
function parseSourceIdCells(rows: Record<string, unknown>[], opts: PayloadOptions): void {
  if (!opts.sourceIds) return;
  rows.forEach((row, i) => {
    const v = row[SOURCE_IDS];
    if (typeof v !== 'string') return;
    try {
      row[SOURCE_IDS] = JSON.parse(v);
    } catch {
      throw sourceIdsError(i, { path: SOURCE_IDS, reason: 'is not JSON text (an object {"<source>": "<id>"})' }, v);
    }
  });
}

/** 400 23514 (a check violation, as the database's link checks answer): the row and what is wrong with its source_ids. */
export function sourceIdsError(index: number, problem: { path: string; reason: string }, value: unknown): ApiError {
  const shown = typeof value === 'string' ? value : JSON.stringify(value);
  return new ApiError(400, '23514', `${problem.path}: ${problem.reason}`, { details: `Failing row ${index + 1} of the body: ${shown.slice(0, 200)}`, hint: SOURCE_IDS_HINT });
}

function finish(rows: Record<string, unknown>[], keys: string[], uniform: boolean, opts: PayloadOptions, json: string): Payload {
  let names = opts.columns ?? keys;
  let sourceIds = false;
  if (opts.sourceIds && names.includes(SOURCE_IDS)) {
    rows.forEach((row, i) => {
      const problem = sourceIdsProblem(row[SOURCE_IDS]);
      if (problem) throw sourceIdsError(i, problem, row[SOURCE_IDS]);
    });
    names = names.filter((k) => k !== SOURCE_IDS);
    sourceIds = true;
  }
  const out: Payload = { json, keys: names, rows: rows.length, uniform: opts.columns ? false : uniform, first: rows[0] ?? null };
  if (sourceIds) out.sourceIds = true;
  return out;
}
