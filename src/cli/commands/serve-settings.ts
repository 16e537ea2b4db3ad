/** `catalog serve`'s settings as strings, the way commander hands flags over. */
export interface ServeSettings {
  port?: string;
  host?: string;
  data?: string;
  databaseUrl?: string;
  jwtSecret?: string;
  maxBody?: string;
  workers?: string;
  dbSchema?: string;
  maxRows?: string;
  statementTimeout?: string;
  aggregates?: string;
  adminPort?: string;
  logLevel?: string;
  logFormat?: string;
  corsOrigins?: string;
  dbPool?: string;
  dbPoolAcquisitionTimeout?: string;
  jwtAud?: string;
  jwtRoleClaimKey?: string;
  dbRoles?: string;
  dbAnonRole?: string;
}

/** One setting of `catalog serve`: its flag, variable, config-file key and help, in one row. */
export interface ServeSetting {
  key: keyof ServeSettings;
  /** The long flag without `--`; also the setting's key in a `--config` file and in `--dump-config`. */
  flag: string;
  /** One-letter short flag, without `-`. */
  short?: string;
  /** The value's name in --help (`--port <port>`). */
  value: string;
  /** What --help says; the variable and the default are added from `env` and `fallback`. */
  help: string;
  /** The CATALOG_* variable; '' for none. */
  env: string;
  /** The value when neither a flag, the variable nor the file gives one (shown by --help and --dump-config). */
  fallback?: string;
  /** Shown redacted by `--dump-config`. */
  secret?: boolean;
  /** Taken up by a running service on SIGUSR2/SIGHUP; the others need a restart. */
  reload?: boolean;
}

/**
 * Every setting `catalog serve` takes from a flag, an environment variable or a config file, in
 * that order of precedence, then its default. One table: the flags and their help, the
 * variables, the file's keys and `--dump-config` all come from it, so a new setting is one row.
 * It lives apart from serve-config.ts (reading the file, settling, dumping) because defining the
 * command, which every `catalog --help` does, needs the table and nothing else.
 */
export const SERVE_SETTINGS: readonly ServeSetting[] = [
  { key: 'port', flag: 'port', short: 'p', value: 'port', help: 'TCP port (0 picks a free one)', env: 'CATALOG_PORT', fallback: '3000' },
  { key: 'host', flag: 'host', value: 'host', help: 'address to listen on (anything but loopback needs --jwt-secret)', env: 'CATALOG_HOST', fallback: '127.0.0.1' },
  // CATALOG_DATA already names the embedded catalog for every command (the default of --data)
  { key: 'data', flag: 'data', value: 'dir', help: 'embedded catalog directory (default: CATALOG_DATA or the XDG data directory)', env: '' },
  { key: 'databaseUrl', flag: 'database-url', value: 'url', help: 'use this PostgreSQL database instead of the embedded catalog (a password in it: prefer the variable or a 0600 --config file)', env: 'CATALOG_DATABASE_URL', secret: true },
  { key: 'dbSchema', flag: 'db-schema', value: 'name', help: 'PostgreSQL schema holding the catalog tables (default public)', env: 'CATALOG_DB_SCHEMA' },
  { key: 'dbPool', flag: 'db-pool', value: 'n', help: 'most PostgreSQL connections the service opens, all --workers together (PostgREST db-pool; default 10)', env: 'CATALOG_DB_POOL' },
  {
    key: 'dbPoolAcquisitionTimeout',
    flag: 'db-pool-acquisition-timeout',
    value: 'seconds',
    help: 'longest a request waits for a pooled connection before 504 PGRST003 (PostgREST db-pool-acquisition-timeout; default 10)',
    env: 'CATALOG_DB_POOL_ACQUISITION_TIMEOUT',
  },
  {
    key: 'jwtSecret',
    flag: 'jwt-secret',
    value: 'secret',
    help: 'require JWTs signed with this secret (32+ characters), JWK or JWKS (JSON), or @FILE holding one; give it by the variable or a 0600 --config file: a flag shows in ps',
    env: 'CATALOG_JWT_SECRET',
    secret: true,
    reload: true,
  },
  { key: 'jwtAud', flag: 'jwt-aud', value: 'audience', help: "refuse a JWT whose aud claim does not name this audience (PostgREST jwt-aud; a JWT without aud passes)", env: 'CATALOG_JWT_AUD', reload: true },
  { key: 'jwtRoleClaimKey', flag: 'jwt-role-claim-key', value: 'path', help: 'where the role is in the JWT, as PostgREST reads it: .role, .realm_access.roles[0], ."https://x.example/role"', env: 'CATALOG_JWT_ROLE_CLAIM_KEY', fallback: '.role', reload: true },
  { key: 'dbRoles', flag: 'db-roles', value: 'on|off', help: "run each request as the JWT's PostgreSQL role (SET LOCAL ROLE), so the database's grants and row-level security decide, as PostgREST (needs --database-url)", env: 'CATALOG_DB_ROLES', fallback: 'off', reload: true },
  { key: 'dbAnonRole', flag: 'db-anon-role', value: 'role', help: 'the PostgreSQL role of a request without a JWT, with --db-roles on (PostgREST db-anon-role; none: such requests get 401)', env: 'CATALOG_DB_ANON_ROLE', reload: true },
  { key: 'maxBody', flag: 'max-body', value: 'bytes', help: 'largest request body accepted, in bytes (default 64 MiB; 8 MiB on the embedded catalog)', env: 'CATALOG_MAX_BODY', reload: true },
  { key: 'maxRows', flag: 'max-rows', value: 'n', help: 'most rows one response carries (PostgREST db-max-rows); list --all and export still page through every row', env: 'CATALOG_MAX_ROWS', reload: true },
  { key: 'statementTimeout', flag: 'statement-timeout', value: 'ms', help: 'cancel a statement running longer than this (PostgreSQL only; answers 500 57014; default 30000, 0 for none)', env: 'CATALOG_STATEMENT_TIMEOUT' },
  { key: 'workers', flag: 'workers', value: 'n', help: 'processes serving one PostgreSQL together (needs --database-url)', env: 'CATALOG_WORKERS', fallback: '1' },
  { key: 'aggregates', flag: 'aggregates', value: 'on|off', help: 'count(), sum() … in select (PostgREST db-aggregates-enabled, which defaults to off; catalog count uses them)', env: 'CATALOG_AGGREGATES', fallback: 'on', reload: true },
  { key: 'logLevel', flag: 'log-level', value: 'level', help: 'crit, error (internal errors, lost connections), warn, or info (also one line per request)', env: 'CATALOG_LOG_LEVEL', fallback: 'error', reload: true },
  { key: 'logFormat', flag: 'log-format', value: 'format', help: 'text or json (every line on stderr one JSON object)', env: 'CATALOG_LOG_FORMAT', fallback: 'text', reload: true },
  { key: 'adminPort', flag: 'admin-port', value: 'port', help: 'serve /live, /ready (503 while the database does not answer) and /metrics (Prometheus) on this port', env: 'CATALOG_ADMIN_PORT' },
  { key: 'corsOrigins', flag: 'cors-origins', value: 'list', help: 'origins that get CORS headers, comma-separated (https://app.example.com,…); default every origin (*), as PostgREST', env: 'CATALOG_CORS_ORIGINS', reload: true },
];

/**
 * A setting's commander flags and help line: the variable and the default go in the help's
 * closing parenthesis, or in one of their own.
 * @example settingOption(port) // { flags: '-p, --port <port>', help: 'TCP port (0 picks a free one; env CATALOG_PORT; default 3000)' }
 */
export function settingOption(s: ServeSetting): { flags: string; help: string } {
  const extra = [s.env && `env ${s.env}`, s.fallback !== undefined && `default ${s.fallback}`].filter(Boolean).join('; ');
  const help = !extra ? s.help : s.help.endsWith(')') ? `${s.help.slice(0, -1)}; ${extra})` : `${s.help} (${extra})`;
  return { flags: `${s.short ? `-${s.short}, ` : ''}--${s.flag} <${s.value}>`, help };
}
