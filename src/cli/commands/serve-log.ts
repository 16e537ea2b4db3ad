import type { RequestFigures } from '../embedded.js';
import { UsageError } from '../errors.js';

export const LOG_LEVELS = ['crit', 'error', 'warn', 'info'] as const;
type Level = (typeof LOG_LEVELS)[number];

/** `--log-level` and `--log-format`, checked (exit 2 naming the flag). */
export function logSettings(levelText: string | undefined, formatText: string | undefined): { level: Level; json: boolean } {
  const level = (levelText ?? 'error').toLowerCase();
  if (!(LOG_LEVELS as readonly string[]).includes(level)) throw new UsageError(`--log-level must be one of ${LOG_LEVELS.join(', ')}, not '${levelText}'`);
  const format = (formatText ?? 'text').toLowerCase();
  if (format !== 'text' && format !== 'json') throw new UsageError(`--log-format must be text or json, not '${formatText}'`);
  return { level: level as Level, json: format === 'json' };
}

/**
 * The service's log on stderr (`--log-level`, `--log-format`), as PostgREST's `log-level`: at
 * `error` and above internal errors and lost database connections, at `info` also one line per
 * request. Every line `serve` writes goes through it (what it serves, signals, retries, workers),
 * so under `--log-format json` each line on stderr is one JSON object with `time` and `level`.
 * SIGUSR2 may change level and format while it runs (`configure`).
 */
export class ServeLog {
  private rank = 1;
  private json = false;

  constructor(
    private readonly write: (line: string) => void,
    private readonly now: () => number,
    /** -v: internal errors are shown whatever the level. */
    private readonly verbose = false,
    /** -q: notes (stopping, retries) are not shown; what it serves and errors still are. */
    private readonly quiet = false,
  ) {}

  configure(level: Level, json: boolean): void {
    this.rank = LOG_LEVELS.indexOf(level);
    this.json = json;
  }

  private line(level: Level, message: string, fields: Record<string, unknown> = {}, text = message): void {
    this.write(this.json ? JSON.stringify({ time: new Date(this.now()).toISOString(), level, message, ...fields }) : text);
  }

  /** What the service is doing (serving at…, stopping, reloading): always, -q aside. */
  note(message: string, fields?: Record<string, unknown>): void {
    if (!this.quiet) this.line('info', message, fields);
  }

  /** What must be seen whatever -q says ("Serving the catalog at …"). */
  always(message: string, fields?: Record<string, unknown>): void {
    this.line('info', message, fields);
  }

  /** A failure the service survives (an internal error, a lost connection, a configuration not reloaded). */
  error(message: string): void {
    if (this.rank >= 1 || this.verbose) this.line('error', message);
  }

  /** A problem the operator should fix (a secret others can read, a setting that takes a restart): at every level. */
  warn(message: string): void {
    this.line('warn', message, {}, `warning: ${message}`);
  }

  /** One answered request, at `info`. */
  request(r: RequestFigures): void {
    if (this.rank < 3) return;
    const text = `${r.method} ${r.path} ${r.status} ${r.ms} ms ${r.bytes} bytes${r.role ? ` role=${r.role}` : ''}`;
    this.line('info', 'request', { ...r }, text);
  }
}
