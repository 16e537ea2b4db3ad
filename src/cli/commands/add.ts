import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { compileQuery } from '../../grammar/compile.js';
import { renderPrefer } from '../../grammar/prefer.js';
import type { TableDef } from '../../schema/catalog.js';
import type { Row } from '../../format/types.js';
import { readAll } from '../../io/streams.js';
import type { Context } from '../context.js';
import { UsageError } from '../errors.js';
import { checkRecords, parseAssignments, type WriteRecord } from '../flags/body.js';
import { plural, success, writeRows } from '../output.js';
import { collect, examples, pathOf, singularOf, titleField } from './shared.js';
import { resolveReferences } from './references.js';

export interface AddOptions {
  collection: string;
  pairs: string[];
  json?: string;
  file?: string;
  /** `--ref FIELD=COLLECTION.COLUMN` (releases resolve label, genre, subgenre names unasked). */
  ref?: string[];
}

/** `catalog <collection> add`. */
export function defineAdd(ctx: Context, table: TableDef, interactive?: (opts: Record<string, unknown>, ctx: Context) => Promise<void>): Command {
  const title = titleField(table);
  const cmd = new Command('add')
    .description(`Add ${table.name}: FIELD=VALUE pairs, or JSON (one object or an array)`)
    .argument('[FIELD=VALUE...]', 'field values; text is taken exactly as written, FIELD:=JSON for a raw JSON value')
    .option('--json <json>', 'the record(s) as JSON: {"field": value} or [{...}, ...]')
    .option('-f, --file <file>', 'read the record(s) from a JSON or YAML file (- for stdin)')
    .option('-i, --interactive', 'ask for each field on the terminal (FIELD=VALUE pairs fill answers in)')
    .option('--ref <field=collection.column>', 'resolve a text field to its id by name, repeatable (releases do label, genre, subgenre unasked)', collect)
    .action(async (pairs: string[], opts: { json?: string; file?: string; interactive?: boolean; ref?: string[] }) => {
      if (!opts.interactive || !interactive) return runAdd({ json: opts.json, file: opts.file, pairs, collection: table.name, ref: opts.ref }, ctx);
      return interactive({ collection: table.name, presets: pairs, json: opts.json, file: opts.file }, ctx);
    });
  const extra = table.columns.find((c) => c.type === 'date')?.name;
  return examples(cmd, [
    `catalog ${table.name} add ${title}='Blue Note'${extra ? ` ${extra}=2024-05-17` : ''}`,
    `catalog ${table.name} add --json '[{"${title}":"One"},{"${title}":"Two"}]'`,
    `catalog ${table.name} add --file new-${table.name}.json -o json`,
  ]);
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
      `for example: catalog ${table.name} add ${table.fields.find((f) => !f.primaryKey && f.type === 'text')?.name ?? 'name'}='…' (see catalog ${table.name} describe)`,
    );
  }
  if (opts.pairs.length > 0 && opts.json === undefined && opts.file === undefined) records = [parseAssignments(opts.pairs, table, removed)];
  else ({ records, single } = checkRecords(await readDocument(opts, ctx), table, removed));
  await resolveReferences(records, table.name, opts.ref ?? [], ctx);

  // PostgREST wants every object of a bulk insert to carry the same keys; when they differ,
  // name the union in ?columns= and let missing keys take their defaults (Prefer: missing=default).
  const keys = [...new Set(records.flatMap((r) => Object.keys(r)))];
  const ragged = records.some((r) => Object.keys(r).length !== keys.length);
  const prefer = renderPrefer(ragged ? { return: 'representation', missing: 'default' } : { return: 'representation' });
  const res = await ctx.send({
    method: 'POST',
    path: pathOf(table),
    query: ragged ? compileQuery({ columns: keys, where: [], order: [], page: [] }) : undefined,
    headers: { Prefer: prefer },
    body: JSON.stringify(single ? records[0] : records),
  });
  if (!res) return;
  const rows = JSON.parse(res.body || '[]') as Row[];
  await writeRows(ctx, single ? rows.slice(0, 1) : rows, { table, single });
  await success(ctx, `Added ${plural(rows.length, singularOf(table.name), table.name)}`);
}
