import { writeFileSync } from 'node:fs';
import { Command } from 'commander';
import { isFormat } from '../../format/types.js';
import { type Context, DEFAULT_SERVE_URL } from '../context.js';
import { UsageError } from '../errors.js';
import { addFlags, type FlagRow, type FlagsOf } from './flag-table.js';
import { examples } from './shared.js';

/** Every flag of `catalog schema`, one row each: its commander chain and SchemaFlags come from it. */
export const SCHEMA_FLAGS = [
  { flag: 'format', value: 'format', help: 'json or yaml', fallback: 'from the -o file name, else json' },
] as const satisfies readonly FlagRow[];

/** The flags of `catalog schema`, as commander parses them: one key per SCHEMA_FLAGS row. */
export type SchemaFlags = FlagsOf<typeof SCHEMA_FLAGS>;

export interface SchemaOptions extends SchemaFlags {
  /** Write here instead of stdout. */
  file?: string;
}

/** `catalog schema`. */
export function defineSchema(ctx: Context): Command {
  const cmd = addFlags(new Command('schema').description("Download the service's root description (OpenAPI 2.0) as JSON or YAML"), SCHEMA_FLAGS).action(async (opts: SchemaFlags) => {
    // -o is the global output option; here it names a file (or the format, for -o yaml).
    const o = ctx.globals.output;
    ctx.globals = { ...ctx.globals, output: undefined };
    if (o && isFormat(o) && o !== 'json' && o !== 'yaml') throw new UsageError(`the root description is JSON or YAML, not ${o}`, 'catalog schema --format yaml -o catalog.yaml');
    const asFormat = o === 'json' || o === 'yaml';
    await runSchema({ format: opts.format ?? (asFormat ? o : undefined), file: asFormat ? undefined : o }, ctx);
  });
  return examples(cmd, ['catalog schema > catalog.json', 'catalog schema --format yaml -o catalog.yaml', 'catalog --url https://catalog.example.com schema -o remote.json']);
}

/** Fetches GET / and writes it; YAML is asked of the service and converted locally when it only speaks JSON. */
export async function runSchema(opts: SchemaOptions, ctx: Context): Promise<void> {
  const format = opts.format ?? (opts.file && /\.ya?ml$/i.test(opts.file) ? 'yaml' : 'json');
  if (format !== 'json' && format !== 'yaml') throw new UsageError(`--format must be json or yaml, not '${format}'`);
  const accept = format === 'yaml' ? 'application/yaml, application/openapi+json;q=0.5' : 'application/openapi+json, application/json;q=0.9';
  await ctx.endpoint();
  // Served by this command on a temporary port: describe the address `catalog serve` gives it by default.
  const host: Record<string, string> = ctx.servesEmbeddedItself() ? { host: DEFAULT_SERVE_URL.replace(/^https?:\/\//, '') } : {};
  const res = await ctx.send({ method: 'GET', path: '/', headers: { accept, ...host } });
  if (!res) return;
  let text = res.body;
  const isYaml = /yaml/i.test(res.headers['content-type'] ?? '');
  if (format === 'yaml' && !isYaml) text = (await import('yaml')).stringify(JSON.parse(text), { lineWidth: 0 });
  if (format === 'json') text = `${JSON.stringify(JSON.parse(text), null, 2)}`;
  if (!text.endsWith('\n')) text += '\n';
  if (opts.file) {
    writeFileSync(opts.file, text);
    await ctx.note(`Wrote the root description to ${opts.file}`);
  } else await ctx.io.stdout.write(text);
}
