import type { Transport } from '../client/transport.js';
import type { Context } from './context.js';

/**
 * The service as the engines' Transport (import, export, check): the context's (the CLI's client,
 * or an in-process one); writes are not retried by it (the import engine retries keyed batches
 * itself). Engine errors reach the CLI as they are: ImportError (usage or input) and the
 * service's ServiceError, which src/cli/errors.ts maps to exit codes.
 */
export async function contextTransport(ctx: Context): Promise<Transport> {
  return (await ctx.endpoint()).client;
}
