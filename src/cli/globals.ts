import { type Command, Option } from 'commander';
import { FORMATS } from '../format/types.js';
import { collect } from './commands/shared.js';

/** The global options: one table drives their registration and help. */
export const GLOBAL_OPTIONS: ReadonlyArray<{ flags: string; description: string; repeatable?: boolean }> = [
  { flags: '--url <url>', description: 'service base URL (env CATALOG_URL); default: the embedded catalog' },
  { flags: '--token <token>', description: 'bearer token sent as Authorization (env CATALOG_TOKEN)' },
  { flags: '-H, --header <name:value>', description: 'extra request header, repeatable (e.g. apikey:KEY for Supabase)', repeatable: true },
  { flags: '--timeout <seconds>', description: 'longest wait for an answer from the service (env CATALOG_TIMEOUT; default 60)' },
  { flags: '--profile <name>', description: 'settings from a profile in the config file (env CATALOG_PROFILE)' },
  { flags: '-o, --output <format>', description: `output format: ${FORMATS.join('|')} (default: table on a terminal, json when piped)` },
  { flags: '--dry-run', description: 'print the request(s) as curl commands and send nothing' },
  { flags: '-v, --verbose', description: 'print each HTTP exchange (method, URL, status, ms) on stderr' },
  { flags: '-q, --quiet', description: 'print only data and errors' },
  { flags: '--no-color', description: 'no colour (also NO_COLOR=1; FORCE_COLOR=1 forces it)' },
  { flags: '--refresh-schema', description: "re-read the service's root description instead of the cached copy" },
];

/** Registers the global options on the root program. */
export function addGlobalOptions(program: Command): Command {
  for (const o of GLOBAL_OPTIONS) {
    const opt = new Option(o.flags, o.description);
    program.addOption(o.repeatable ? opt.argParser(collect) : opt);
  }
  return program;
}
