import { UsageError } from '../errors.js';
import type { TableDef } from '../../schema/model.js';
import { requireField } from './fields.js';
import { bodyValue, checkJsonValue } from './values.js';

/** A record to write. */
export type WriteRecord = Record<string, unknown>;

/**
 * `FIELD=VALUE` arguments as one record: the value is converted by the field's type (text stays
 * exactly as typed); `FIELD:=JSON` takes a raw JSON value (`name:=null`, `tracks:='["a"]'`).
 * @example parseAssignments(['name=Blue Note', 'is_signed=yes'], artists) // { name: 'Blue Note', is_signed: true }
 */
export function parseAssignments(args: readonly string[], table: TableDef, removed: readonly string[] = []): WriteRecord {
  const out: WriteRecord = {};
  for (const arg of args) {
    const eq = arg.indexOf('=');
    if (eq <= 0) {
      throw new UsageError(`expected FIELD=VALUE, got '${arg}'`, `for example name='Blue Note' (fields of ${table.name}: ${table.columns.map((f) => f.name).join(', ')})`);
    }
    const raw = arg[eq - 1] === ':';
    const name = arg.slice(0, raw ? eq - 1 : eq).trim();
    const text = arg.slice(eq + 1);
    const field = requireField(table, name, removed);
    if (name in out) throw new UsageError(`the field '${name}' is given twice`);
    if (raw) {
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        throw new UsageError(`${name}:= needs a JSON value, not '${text}'`, `for example ${name}:=null or ${name}:='{"key":"value"}'`);
      }
      checkJsonValue(field, value);
      out[name] = value;
    } else {
      out[name] = bodyValue(field, text);
    }
  }
  return out;
}

/** Checks a record from --json/--file: every key a field, every value of the field's type. */
export function checkRecord(rec: unknown, table: TableDef, removed: readonly string[] = [], where = 'the record'): WriteRecord {
  if (!rec || typeof rec !== 'object' || Array.isArray(rec)) throw new UsageError(`${where} must be a JSON object`);
  for (const [k, v] of Object.entries(rec as WriteRecord)) checkJsonValue(requireField(table, k, removed), v);
  return rec as WriteRecord;
}

/**
 * A JSON (or YAML) document as records to add: one object, or an array of objects.
 * Returns the records and whether the input was a single object.
 */
export function checkRecords(doc: unknown, table: TableDef, removed: readonly string[] = []): { records: WriteRecord[]; single: boolean } {
  if (Array.isArray(doc)) return { records: doc.map((r, i) => checkRecord(r, table, removed, `item ${i + 1}`)), single: false };
  return { records: [checkRecord(doc, table, removed)], single: true };
}
