import { Command } from 'commander';
import type { Context } from '../context.js';
import { UsageError } from '../errors.js';
import { loadAuth } from '../embedded.js';
import { addFlags, type FlagRow, type FlagsOf } from './flag-table.js';
import { examples } from './shared.js';

/** Roles a minted token may carry (anonymous access needs no token). */
export const TOKEN_ROLES = ['reader', 'editor', 'admin'] as const;

/** A token's lifetime unless --expires says otherwise. */
export const DEFAULT_LIFETIME = '1h';

/**
 * Every flag of `catalog token create`, one row each: its commander chain and TokenCreateOptions
 * come from it. `--expires` takes a lifetime such as `1h`, `30m`, `7d`, `1y`; `never` for no expiry.
 */
export const TOKEN_CREATE_FLAGS = [
  { flag: 'role', value: 'role', required: true, help: `what the token may do: ${TOKEN_ROLES.join('|')} (reader reads, editor also writes, admin also deletes)` },
  { flag: 'expires', value: 'lifetime', preset: DEFAULT_LIFETIME, help: 'how long it is valid: 30m, 1h, 7d, 1y, or never' },
  { flag: 'secret', value: 'secret', help: 'the secret the service checks tokens with (env CATALOG_JWT_SECRET)' },
] as const satisfies readonly FlagRow[];

/** The flags of `catalog token create`, as commander parses them: one key per TOKEN_CREATE_FLAGS row. */
export type TokenCreateOptions = FlagsOf<typeof TOKEN_CREATE_FLAGS>;

/** The shortest secret PostgREST accepts for HS256. */
const MIN_SECRET = 32;

/**
 * A token lifetime in the form the signer reads: a number and a unit (s, m, h, d, w, y), or
 * `never`. Returns undefined for `never`.
 * @example tokenLifetime('1h') // '1h'
 */
export function tokenLifetime(text: string): string | undefined {
  const t = text.trim().toLowerCase();
  if (t === 'never') return undefined;
  if (!/^\d+\s*(s|sec|secs|seconds?|m|min|mins|minutes?|h|hr|hrs|hours?|d|days?|w|weeks?|y|yr|yrs|years?)$/.test(t)) {
    throw new UsageError(`--expires '${text}' is not a lifetime`, 'for example --expires 30m, --expires 1h, --expires 7d, or --expires never');
  }
  return t.replace(/\s+/g, '');
}

/** `catalog token` with `create`. */
export function defineToken(ctx: Context): Command {
  const create = addFlags(new Command('create').description('Mint a signed token (HS256) for a role; prints only the token, for scripts and CI'), TOKEN_CREATE_FLAGS).action(async (opts: TokenCreateOptions) => runTokenCreate(opts, ctx));
  examples(create, [
    'catalog token create --role editor --secret "$CATALOG_JWT_SECRET"',
    'CATALOG_TOKEN=$(catalog token create --role admin --expires 10m) catalog labels list',
    'catalog token create --role reader --expires 7d > reader.jwt',
  ]);
  const cmd = new Command('token').description('Make tokens for a service run with --jwt-secret (CI scripts, test catalogs)').addCommand(create);
  return examples(cmd, ['catalog token create --role editor', 'catalog token create --role reader --expires 7d']);
}

/** Signs a token with the role claim and prints it on stdout (nothing else there). */
export async function runTokenCreate(opts: TokenCreateOptions, ctx: Context): Promise<void> {
  const role = opts.role ?? '';
  if (!(TOKEN_ROLES as readonly string[]).includes(role)) {
    throw new UsageError(`--role must be one of ${TOKEN_ROLES.join(', ')}, not '${role}'`, 'reader reads, editor also adds and updates, admin also removes');
  }
  const secret = opts.secret ?? ctx.env.CATALOG_JWT_SECRET;
  if (!secret) {
    throw new UsageError('no secret to sign the token with', 'pass --secret or set CATALOG_JWT_SECRET: the same secret the service runs with (catalog serve --jwt-secret)');
  }
  if (secret.length < MIN_SECRET) {
    await ctx.warn(`the secret has ${secret.length} characters; PostgREST refuses secrets shorter than ${MIN_SECRET}`);
  }
  const lifetime = tokenLifetime(opts.expires ?? DEFAULT_LIFETIME);
  const { mintToken } = await loadAuth();
  const token = await mintToken(secret, role, lifetime);
  await ctx.io.stdout.write(`${token}\n`);
  if (ctx.io.stderr.isTTY) await ctx.note(ctx.style().dim(`A ${role} token, ${lifetime ? `valid for ${lifetime}` : 'that never expires'}. Use it with --token or CATALOG_TOKEN.`));
}
