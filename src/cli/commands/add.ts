import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { compileQuery } from '../../grammar/compile.js';
import { renderPrefer } from '../../grammar/prefer.js';
import type { Row } from '../../format/types.js';
import { readAll } from '../../io/streams.js';
import type { Context } from '../context.js';
import type { TableDef } from '../../schema/model.js';
import { UsageError } from '../errors.js';
import { checkRecords, parseAssignments, type WriteRecord } from '../flags/body.js';
import { plural, success, writeRows } from '../output.js';
import { REF_ROW } from './flag-rows.js';
import type { FlagRow, FlagsOf } from './flag-table.js';
import { defineRecordCommand } from './record-command.js';
import { pathOf, singularOf, titleField } from './shared.js';
import { resolveReferences } from './references.js';

/** Every flag of `catalog <collection> add`, one row each: its commander chain and AddFlags come from it. */
export const ADD_FLAGS = [
  { flag: 'json', value: 'json', help: 'the record(s) as JSON: {"field": value} or [{...}, ...]' },
  { flag: 'file', short: 'f', value: 'file', help: 'read the record(s) from a JSON or YAML file (- for stdin)' },
  { flag: 'interactive', short: 'i', help: 'ask for each field on the terminal (FIELD=VALUE pairs fill answers in)' },
  REF_ROW,
] as const satisfies readonly FlagRow[];

/** The flags of `catalog <collection> add`, as commander parses them: one key per ADD_FLAGS row. */
export type AddFlags = FlagsOf<typeof ADD_FLAGS>;

export interface AddOptions extends Omit<AddFlags, 'interactive'> {
  collection: string;
  pairs: string[];
}

/** `catalog <collection> add`. */
export function defineAdd(ctx: Context, table: TableDef, interactive?: (opts: Record<string, unknown>, ctx: Context) => Promise<void>): Command {
  const title = titleField(table);
  const extra = table.columns.find((c) => c.type === 'date')?.name;
  return defineRecordCommand<AddFlags>({
    name: 'add',
    description: `Add ${table.name}: FIELD=VALUE pairs, or JSON (one object or an array)`,
    argument: ['[FIELD=VALUE...]', 'field values; text is taken exactly as written, FIELD:=JSON for a raw JSON value'],
    flags: ADD_FLAGS,
    action: async (pairs, opts) => {
      if (!opts.interactive || !interactive) return runAdd({ json: opts.json, file: opts.file, pairs, collection: table.name, ref: opts.ref }, ctx);
      return interactive({ collection: table.name, presets: pairs, json: opts.json, file: opts.file }, ctx);
    },
    examples: [
      `catalog ${table.name} add ${title}='Blue Note'${extra ? ` ${extra}=2024-05-17` : ''}`,
      `catalog ${table.name} add --json '[{"${title}":"One"},{"${title}":"Two"}]'`,
      `catalog ${table.name} add --file new-${table.name}.json -o json`,
    ],
  });
}

async function readDocument(opts: AddOptions, ctx: Context): Promise<unknown> {
  const sources = [opts.pairs.length > 0, opts.json !== undefined, opts.file !== undefined].filter(Boolean).length;
  if (sources > 1) throw new UsageError('give the record one way: FIELD=VALUE pairs, --json or --file');
  let text: string;
  let yaml = false;
  if (opts.json !== undefined) text = opts.json;
  else if (opts.file === '-') text = await readAll(ctx.io.stdin.stream);
  else {
    try {
      text = readFileSync(opts.file as string, 'utf8');
    } catch (err) {
      throw new UsageError(`cannot read ${opts.file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    yaml = /\.ya?ml$/i.test(opts.file as string);
  }
  try {
    if (yaml) return (await import('yaml')).parse(text) as unknown;
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new UsageError(`${opts.json !== undefined ? '--json' : opts.file} is not valid ${yaml ? 'YAML' : 'JSON'}: ${(err as Error).message}`);
  }
}

/** Creates the record(s) with `Prefer: return=representation` and prints what the service stored. */
export async function runAdd(opts: AddOptions, ctx: Context): Promise<void> {
  const table = await ctx.table(opts.collection);
  const removed = ctx.removedFields(table.name);
  let records: WriteRecord[];
  let single = true;
  if (opts.pairs.length === 0 && opts.json === undefined && opts.file === undefined) {
    throw new UsageError(
      `nothing to add: give FIELD=VALUE pairs, --json or --file`,
      `for example: catalog ${table.name} add ${table.columns.find((f) => !f.primaryKey && f.type === 'text')?.name ?? 'name'}='…' (see catalog ${table.name} describe)`,
    );
  }
  if (opts.pairs.length > 0 && opts.json === undefined && opts.file === undefined) records = [parseAssignments(opts.pairs, table, removed)];
  else ({ records, single } = checkRecords(await readDocument(opts, ctx), table, removed));
  await resolveReferences(records, table.name, opts.ref ?? [], ctx);

  const keyed = withClientIds(table, records);
  // PostgREST wants every object of a bulk insert to carry the same keys; when they differ,
  // name the union in ?columns= and let missing keys take their defaults (Prefer: missing=default).
  const keys = [...new Set(records.flatMap((r) => Object.keys(r)))];
  const ragged = records.some((r) => Object.keys(r).length !== keys.length);
  const prefer = renderPrefer({ return: 'representation', ...(ragged ? { missing: 'default' as const } : {}), ...(keyed ? { resolution: 'ignore-duplicates' as const } : {}) });
  const query = ragged || keyed ? compileQuery({ ...(ragged ? { columns: keys } : {}), ...(keyed ? { onConflict: [keyed] } : {}), where: [], order: [], page: [] }) : undefined;
  const res = await ctx.send({
    method: 'POST',
    path: pathOf(table),
    query,
    headers: { Prefer: prefer },
    body: JSON.stringify(single ? records[0] : records),
    // with ids of our own and duplicates ignored, sending it again cannot add a row twice
    idempotent: keyed !== null,
  });
  if (!res) return;
  let rows = JSON.parse(res.body || '[]') as Row[];
  if (keyed) rows = await storedRows(ctx, table, keyed, records, rows);
  await writeRows(ctx, single ? rows.slice(0, 1) : rows, { table, single });
  await success(ctx, `Added ${plural(rows.length, singularOf(table.name), table.name)}`);
}

/**
 * `n` random (version 4) UUIDs in ascending order. The service inserts an upsert's rows in key
 * order, so ids in body order keep the rows in the order given, as a plain insert stores them. Not
 * time-ordered (UUIDv7): ids made in the same minute would share their first 8 hex digits, the
 * short form tables show and `get`/`update`/`remove` take.
 * @example orderedIds(2) // ['3f2a…', 'c71e…'], the first sorting before the second
 */
export function orderedIds(n: number): string[] {
  return Array.from({ length: n }, () => randomUUID()).sort();
}

/**
 * Gives every record an id made here (random, in body order: `orderedIds`) when the collection's key is one uuid
 * column with a default and no record names it: the insert then goes with `on_conflict=<key>` and
 * `resolution=ignore-duplicates`, so a resend after a connection lost before the answer (the
 * holder killed at the wrong millisecond) cannot store a row twice. Returns the key, or null when
 * the records go as a plain insert (a record brings its own id: a duplicate must stay a 409).
 */
function withClientIds(table: TableDef, records: WriteRecord[]): string | null {
  if (table.primaryKey.length !== 1) return null;
  const key = table.columns.find((f) => f.name === table.primaryKey[0]);
  if (!key || key.type !== 'uuid' || key.default === undefined || records.some((r) => key.name in r)) return null;
  const ids = orderedIds(records.length);
  records.forEach((r, i) => {
    // the id first, as a person reading the request (--dry-run) expects it
    const rest = { ...r };
    for (const k of Object.keys(r)) delete r[k];
    Object.assign(r, { [key.name]: ids[i] }, rest);
  });
  return key.name;
}

/**
 * The records as stored, in the order sent. Rows the answer does not list were stored by an earlier
 * attempt (this one was a resend, its duplicates ignored): they are read back.
 */
async function storedRows(ctx: Context, table: TableDef, key: string, records: WriteRecord[], answered: Row[]): Promise<Row[]> {
  const have = new Map(answered.map((r) => [String(r[key]), r]));
  const missing = records.map((r) => String(r[key])).filter((id) => !have.has(id));
  if (missing.length === 0) return records.map((r) => have.get(String(r[key]))!);
  const res = await ctx.send({ method: 'GET', path: pathOf(table), query: compileQuery({ where: [{ path: [], condition: { kind: 'filter', field: { name: key, jsonPath: [] }, negated: false, op: 'in', value: missing } }], order: [], page: [] }) });
  for (const r of JSON.parse(res?.body || '[]') as Row[]) have.set(String(r[key]), r);
  return records.map((r) => have.get(String(r[key]))).filter((r): r is Row => r !== undefined);
}
