import { Command } from 'commander';
import type { TableDef } from '../../schema/catalog.js';
import type { Context } from '../context.js';
import { outputFormat, writeRows } from '../output.js';
import { displayDefault, relationsOf } from '../../schema/model.js';
import { COMPUTED_FIELDS } from '../../schema/source-ids.js';
import { examples } from './shared.js';

export interface DescribeOptions {
  collection: string;
}

/** `catalog <collection> describe`. */
export function defineDescribe(ctx: Context, table: TableDef): Command {
  const cmd = new Command('describe')
    .description(`Show the fields of ${table.name}: types, defaults, required, keys, computed fields and what it can embed`)
    .action(async () => runDescribe({ collection: table.name }, ctx));
  return examples(cmd, [`catalog ${table.name} describe`, `catalog ${table.name} describe -o json`, `catalog --url https://catalog.example.com --refresh-schema ${table.name} describe`]);
}

/** Prints a collection's fields from the root description (one row per field; JSON/YAML get the whole description). */
export async function runDescribe(opts: DescribeOptions, ctx: Context): Promise<void> {
  const table = await ctx.table(opts.collection);
  const schema = await ctx.schema();
  const relations = relationsOf(schema, table.name);
  const format = await outputFormat(ctx);
  const fields = table.columns.map((f) => ({
    field: f.name,
    type: f.type,
    required: !f.nullable,
    default: f.default === undefined ? null : displayDefault(f.default),
    key: [f.primaryKey ? 'primary key' : '', f.foreignKey ? `→ ${f.foreignKey.table}.${f.foreignKey.column}` : ''].filter(Boolean).join(', ') || null,
    ...(f.description ? { description: f.description } : {}),
  }));
  // The root description shows columns only (as PostgREST's does); the catalog's computed fields
  // are known here, as its computed relationships are (a service without them answers 42703).
  const computed = (COMPUTED_FIELDS[table.name] ?? []).map((f) => ({ field: f.name, type: f.type, description: f.description }));
  if (format === 'json' || format === 'yaml') {
    const doc = { collection: table.name, primaryKey: table.primaryKey, fields, computed, embeds: relations };
    await writeRows(ctx, [doc], { single: true, format });
    return;
  }
  await writeRows(ctx, fields, { format });
  if (format === 'table') {
    const s = ctx.style('stdout');
    const lines = relations.map((r) => `  ${r.table} (${r.computed ? `computed, through ${r.via}` : `${r.cardinality} via ${r.cardinality === 'many-to-one' ? r.via : `${r.table}.${r.via}`}`})`);
    if (computed.length) {
      const fieldLines = (COMPUTED_FIELDS[table.name] ?? []).map((f) => `  ${f.name} (${f.type}, computed, not in *): ${f.summary}`);
      await ctx.io.stdout.write(`\n${s.bold('Computed fields:')}\n${fieldLines.join('\n')}\n`);
    }
    await ctx.io.stdout.write(`\n${s.bold('Embeds:')}${lines.length ? `\n${lines.join('\n')}` : ' none'}\n`);
    await ctx.note(ctx.style().dim(`Source: ${schema.source === 'builtin' ? 'built-in schema' : 'the service\'s root description'} (interface ${schema.version ?? 'unknown'})`));
  }
}
