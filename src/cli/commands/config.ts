import { Command } from 'commander';
import { redactHeader } from '../../client/curl.js';
import type { Context } from '../context.js';
import { examples } from './shared.js';

/** `catalog config`. */
export function defineConfig(ctx: Context): Command {
  const cmd = new Command('config')
    .description('Show the effective settings and where each comes from (tokens redacted)')
    .action(async () => runConfig(ctx));
  return examples(cmd, ['catalog config', 'catalog --profile staging config', 'CATALOG_URL=http://127.0.0.1:3000 catalog config -o json']);
}

/**
 * A token as it may be shown: never the secret itself.
 * @example redact('eyJhbGciOiJIUzI1NiJ9.x.y') // '<redacted, 24 characters>'
 */
export function redact(token: string): string {
  return `<redacted, ${token.length} characters>`;
}

/** Prints setting, value and source for each setting. */
export async function runConfig(ctx: Context): Promise<void> {
  // Loaded when the command runs: defining it (for `catalog --help`) must stay cheap.
  const { outputFormat, writeRows } = await import('../output.js');
  const c = await ctx.config();
  const lock = c.url ? null : (await ctx.serverControl()).readServeLock(ctx.paths.dataDir);
  const rows: Array<{ setting: string; value: string; source: string }> = [
    { setting: 'profile', value: c.profile?.value ?? '(none)', source: c.profile?.source ?? 'default' },
    {
      setting: 'url',
      value: c.url?.value ?? (lock ? `${lock.url} (${lock.key ? 'private holder, only your commands' : 'catalog serve'}, pid ${lock.pid})` : 'embedded catalog, started per command'),
      source: c.url?.source ?? 'default',
    },
    { setting: 'token', value: c.token ? redact(c.token.value) : '(none)', source: c.token?.source ?? 'default' },
    ...c.headers.map((h) => ({ setting: `header ${h.name}`, value: redactHeader(h.name, h.value), source: h.source })),
    { setting: 'output', value: await outputFormat(ctx), source: c.output?.source ?? 'default' },
    { setting: 'config file', value: c.configFile, source: 'default' },
    { setting: 'data dir', value: ctx.paths.dataDir, source: ctx.env.CATALOG_DATA ? 'env' : 'default' },
    { setting: 'cache dir', value: ctx.paths.cacheDir, source: 'default' },
  ];
  await writeRows(ctx, rows);
}
