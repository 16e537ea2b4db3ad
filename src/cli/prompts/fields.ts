import { resolveRelativeDate } from '../flags/relative-date.js';
import { isDate, isTimestamp } from '../flags/values.js';
import { type ColumnDef, displayDefault, type TableDef, titleOf, typeKind } from '../../schema/model.js';
import { UUID_TEXT } from '../../schema/codecs.js';

/** How a field is asked for. */
export type PromptKind = 'text' | 'boolean' | 'date' | 'uuid' | 'reference' | 'json' | 'timestamp' | 'integer' | 'number';

/** Fields the service fills in itself: never asked. */
const SERVICE_FIELDS = new Set(['created', 'updated']);

/** Above this many fields, the user first picks which ones to fill in instead of answering every one. */
export const MANY_FIELDS = 12;

/** The fields interactive entry asks for, title first: everything but the primary key and created/updated. */
export function askableFields(table: TableDef): ColumnDef[] {
  const fields = table.columns.filter((f) => !f.primaryKey && !SERVICE_FIELDS.has(f.name));
  const title = titleOf(table);
  const rank = (f: ColumnDef) => (f.name === title ? 0 : 1);
  return fields.map((f, i) => ({ f, i })).sort((a, b) => rank(a.f) - rank(b.f) || a.i - b.i).map(({ f }) => f);
}

/** The prompt a field gets: a searchable list for foreign keys, a confirm for booleans, an editor for JSON, else a line of text. */
export function promptKind(field: ColumnDef): PromptKind {
  if (field.foreignKey) return 'reference';
  const k = typeKind(field.type);
  return k === 'other' ? 'text' : k;
}

/** Fields worth filling in on a new record of a long table: its title (always offered, preselected), foreign keys and dates. */
export function isKeyField(table: TableDef, field: ColumnDef): boolean {
  return field.name === titleOf(table) || Boolean(field.foreignKey) || typeKind(field.type) === 'date';
}

const PARTIAL_DATE = /^\d{0,4}(-(\d{0,2}(-\d{0,2})?)?)?$/;

/**
 * Feedback on a date while it is being typed: nothing when it is fine (or empty), "keep typing"
 * while it is an incomplete YYYY-MM-DD, and what is wrong otherwise.
 * @example dateFeedback('2024-02-30') // '2024-02-30 is not a real date'
 */
export function dateFeedback(text: string, now?: number): string | null {
  const t = text.trim();
  if (t === '' || isDate(t)) return null;
  // as in filters: today, yesterday, tomorrow, +7d, -2w, today+1mo
  if (now !== undefined && resolveRelativeDate(t, 'date', now) !== null) return null;
  if (/^\d{4}-\d{2}-\d{2}$/.test(t)) return `${t} is not a real date`;
  if (PARTIAL_DATE.test(t)) return 'YYYY-MM-DD';
  return `write the date as YYYY-MM-DD, such as 2024-05-17${now !== undefined ? ', or today, +7d, -1w' : ''}`;
}

/** Checks a finished date answer (empty allowed: no date). */
export function validateDate(text: string, now?: number): true | string {
  const f = dateFeedback(text, now);
  if (f === null) return true;
  return f === 'YYYY-MM-DD' ? `incomplete date: write YYYY-MM-DD, such as 2024-05-17 (or today, +7d, -1w)` : f;
}

/** Checks a UUID answer (empty allowed: no value). */
export function validateUuid(text: string): true | string {
  const t = text.trim();
  return t === '' || UUID_TEXT.test(t) ? true : 'expected a UUID such as 3f2a9c1e-8b1d-4e7a-9c55-0d6f1b2a4e10';
}

/** Checks a JSON answer from the editor (empty allowed: null). */
export function validateJson(text: string): true | string {
  if (text.trim() === '') return true;
  try {
    JSON.parse(text);
    return true;
  } catch (err) {
    return `not valid JSON: ${(err as Error).message}`;
  }
}

/** Checks a timestamp, whole number or number answer (empty allowed). */
export function validateScalar(kind: PromptKind, text: string): true | string {
  const t = text.trim();
  if (t === '') return true;
  if (kind === 'timestamp') return isTimestamp(t) ? true : 'expected a timestamp such as 2024-05-17T12:00:00Z';
  if (kind === 'integer') return /^-?\d+$/.test(t) ? true : 'expected a whole number';
  if (kind === 'number') return /^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(t) ? true : 'expected a number';
  return true;
}

/**
 * The value an answer stands for: text exactly as typed; for other types an empty answer is null.
 * @example answerValue('number', ' 42 ') // 42
 */
export function answerValue(kind: PromptKind, text: string): unknown {
  if (kind === 'text') return text;
  const t = text.trim();
  if (t === '') return null;
  if (kind === 'json') return JSON.parse(t) as unknown;
  if (kind === 'integer' || kind === 'number') return Number(t);
  return t;
}

/**
 * A stored value as a prompt shows it and accepts it back: null is empty, JSON compact.
 * @example valueText({ genres: ['house'] }) // '{"genres":["house"]}'
 */
export function valueText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  return JSON.stringify(value);
}

/** A column default as the prompt mentions it (`default ""`, `default false`), or null when there is none. */
export function defaultNote(field: ColumnDef): string | null {
  const shown = displayDefault(field.default);
  if (shown === undefined || shown === null) return field.nullable ? 'empty if left out' : null;
  if (shown === '') return 'default: empty';
  return `default: ${typeof shown === 'string' ? shown : JSON.stringify(shown)}`;
}

/** The column default as a boolean, for the confirm prompt of a boolean field. */
export function booleanDefault(field: ColumnDef): boolean {
  return displayDefault(field.default) === true;
}

/** True when two values are the same as far as the service is concerned (compared as JSON). */
export function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}
