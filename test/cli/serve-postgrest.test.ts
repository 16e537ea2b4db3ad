import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dumpServeConfig, redactDatabaseUrl, secretExposure, settleServe } from '../../src/cli/commands/serve-config.js';
import { fromPgrstEnv, isPostgrestFormat, parsePostgrestConfig, pgrstVariable, POSTGREST_KEYS } from '../../src/cli/commands/serve-postgrest.js';
import { UsageError } from '../../src/cli/errors.js';
import { tempDir } from '../support/stores.js';
import { rejectionOf, thrownBy } from '../support/throws.js';

// Issue 38 item 3: PostgREST's names (its config file and PGRST_* variables) where they mean what ours mean, refused by name where they do not.
describe("PostgREST's config file format", () => {
  it('reads key = value lines: strings with escapes and $(VAR), numbers, booleans, bare words, comments', () => {
    const text = [
      '# PostgREST 12',
      'db-uri = "postgres://app:$(PGPW)@db/catalog"',
      'db-pool = 10   # per host',
      'db-aggregates-enabled = true',
      'openapi-mode = follow-privileges',
      'jwt-role-claim-key = ".realm_access.roles[0]"',
      'jwt-aud = "say \\"hi\\""',
      '',
    ].join('\n');
    expect(isPostgrestFormat(text)).toBe(true);
    expect(parsePostgrestConfig(text, { PGPW: 's3cret' }, 'f')).toEqual({
      'db-uri': 'postgres://app:s3cret@db/catalog',
      'db-pool': '10',
      'db-aggregates-enabled': 'true',
      'openapi-mode': 'follow-privileges',
      'jwt-role-claim-key': '.realm_access.roles[0]',
      'jwt-aud': 'say "hi"',
    });
  });

  it('tells YAML and JSON from it by the first line', () => {
    expect(isPostgrestFormat('# x\nport: 3000\n')).toBe(false);
    expect(isPostgrestFormat('{"port": 3000}')).toBe(false);
    expect(isPostgrestFormat('server-port = 3000')).toBe(true);
  });

  it.each([
    ['db-uri "postgres://x"', /line 1: expected key = value/],
    ['db-uri = "postgres://x', /line 1: the string has no closing "/],
    ['db-uri = "$(NOT_SET_ANYWHERE)"', /\$\(NOT_SET_ANYWHERE\) names an environment variable that is not set/],
    ['db-pool = 10 20', /unexpected "20" after the value of db-pool/],
    ['db-pool = 1\ndb-pool = 2', /line 2: db-pool is given twice/],
  ])('refuses %j, saying where', (text, message) => {
    expect(thrownBy(UsageError, () => parsePostgrestConfig(text, {}, 'f')).message).toMatch(message);
  });

  it('settles a PostgREST file: its keys as ours (server-host *4 as 0.0.0.0), our own flag names too', async () => {
    const file = join(tempDir('pgrst-'), 'postgrest.conf');
    writeFileSync(file, 'db-uri = "postgres://db/x"\ndb-schemas = "api"\nserver-host = "*4"\nserver-port = 3001\ndb-max-rows = 50\ndb-tx-end = "commit"\nworkers = 2\n');
    const s = await settleServe({}, {}, file);
    expect(s).toMatchObject({ databaseUrl: 'postgres://db/x', dbSchema: 'api', host: '0.0.0.0', port: '3001', maxRows: '50', workers: '2' });
  });

  it.each([
    ['db-schemas = "api, v2"', /db-schemas = "api, v2" is not supported: catalog serves one schema/],
    ['db-tx-end = "rollback"', /db-tx-end = "rollback" is not supported: catalog commits every request/],
    ['db-channel-enabled = true', /db-channel-enabled = "true" is not supported: .*SIGUSR1/],
    ['app.settings.jwt_secret = "x"', /app.settings.jwt_secret is not supported/],
    ['server-unix-socket = "/tmp/pgrst.sock"', /server-unix-socket .* catalog listens on TCP only/],
    ['db-ur = "postgres://x"', /unknown setting 'db-ur' \(did you mean 'db-uri'\?\)/],
  ])('refuses %j by name, saying why', async (line, message) => {
    const file = join(tempDir('pgrst-'), 'postgrest.conf');
    writeFileSync(file, `${line}\n`);
    expect((await rejectionOf(UsageError, settleServe({}, {}, file))).message).toMatch(message);
  });

  it('a YAML file naming a PostgREST key gets a did-you-mean to ours', async () => {
    const file = join(tempDir('pgrst-'), 'serve.yaml');
    writeFileSync(file, 'db-uri: postgres://db/x\n');
    expect((await rejectionOf(UsageError, settleServe({}, {}, file))).message).toMatch(/unknown setting 'db-uri' \(did you mean 'database-url'\?, PostgREST's name for it/);
  });
});

describe('PGRST_* variables', () => {
  it('names every key as PostgREST does', () => {
    expect(pgrstVariable('db-uri')).toBe('PGRST_DB_URI');
    expect(pgrstVariable('db-pool-acquisition-timeout')).toBe('PGRST_DB_POOL_ACQUISITION_TIMEOUT');
    expect(Object.keys(POSTGREST_KEYS)).toEqual(expect.arrayContaining(['db-uri', 'db-anon-role', 'db-pool', 'jwt-secret', 'jwt-aud', 'jwt-role-claim-key', 'server-host', 'server-port', 'admin-server-port', 'log-level']));
  });

  it('reads the ones that mean what ours mean; PGRST_DB_URI is no longer ignored', async () => {
    expect(fromPgrstEnv({ PGRST_DB_URI: 'postgres://db/x', PGRST_SERVER_PORT: '3001', PGRST_DB_ANON_ROLE: 'web_anon', PATH: '/bin' })).toEqual({ databaseUrl: 'postgres://db/x', port: '3001', dbAnonRole: 'web_anon' });
    // precedence: a flag, then CATALOG_*, then PGRST_*, then the file
    const s = await settleServe({}, { PGRST_DB_URI: 'postgres://pgrst/x', PGRST_SERVER_PORT: '3001', CATALOG_PORT: '3002' });
    expect(s).toMatchObject({ databaseUrl: 'postgres://pgrst/x', port: '3002' });
  });

  it('refuses one that names nothing (with a did-you-mean) or a value catalog cannot follow', () => {
    expect(thrownBy(UsageError, () => fromPgrstEnv({ PGRST_DB_URL: 'postgres://x' })).message).toMatch(/PGRST_DB_URL is set, but it names no PostgREST setting catalog knows \(did you mean PGRST_DB_URI\?\)/);
    expect(thrownBy(UsageError, () => fromPgrstEnv({ PGRST_DB_SCHEMAS: 'a,b' })).message).toMatch(/PGRST_DB_SCHEMAS: db-schemas = "a,b" is not supported: catalog serves one schema/);
    expect(thrownBy(UsageError, () => fromPgrstEnv({ PGRST_APP_SETTINGS_KEY: 'x' })).message).toMatch(/app.settings.key is not supported/);
  });
});

// Issue 38 item 6: secrets are never printed, and the operator is told when they can be read.
describe('secrets in the settings', () => {
  it('--dump-config redacts the password of a URL in its user part and in its query string', () => {
    expect(redactDatabaseUrl('postgres://ana:pw@db/x?sslmode=require&password=p2&sslpassword=k3')).toBe('postgres://ana:<redacted>@db/x?sslmode=require&password=<redacted>&sslpassword=<redacted>');
    const dump = dumpServeConfig({ databaseUrl: 'postgres://db/x?PASSWORD=hunter2&application_name=c' });
    expect(dump).toContain('database-url: "postgres://db/x?PASSWORD=<redacted>&application_name=c"');
    expect(dump).not.toContain('hunter2');
  });

  it('warns of a secret on the command line, or in a config file others may read; not of one in a 0600 file or the environment', () => {
    const file = join(tempDir('secret-'), 'postgrest.conf');
    const secret = 'x'.repeat(40);
    writeFileSync(file, `jwt-secret = "${secret}"\n`);
    chmodSync(file, 0o644);
    expect(secretExposure({ jwtSecret: secret }, undefined, { jwtSecret: secret })).toMatch(/--jwt-secret on the command line can be read by any local user/);
    expect(secretExposure({ databaseUrl: 'postgres://a:pw@db/x' }, undefined, {})).toMatch(/the --database-url password on the command line/);
    expect(secretExposure({}, file, { jwtSecret: secret })).toMatch(/holds a secret and other users may read it \(mode 644\): chmod 600/);
    chmodSync(file, 0o600);
    expect(secretExposure({}, file, { jwtSecret: secret })).toBeNull();
    expect(secretExposure({}, undefined, { jwtSecret: secret })).toBeNull(); // from CATALOG_JWT_SECRET
    writeFileSync(file, 'jwt-secret = "$(JWT)"\n');
    chmodSync(file, 0o644);
    expect(secretExposure({}, file, { jwtSecret: secret })).toBeNull(); // the file names a variable, not the secret
    const keyFile = join(tempDir('secret-'), 'jwks.json');
    writeFileSync(keyFile, '{"keys": []}', { mode: 0o644 });
    expect(secretExposure({ jwtSecret: `@${keyFile}` }, undefined, { jwtSecret: `@${keyFile}` })).toMatch(/the JWT secret file .* may be read by other users: chmod 600/);
    chmodSync(keyFile, 0o600);
    expect(secretExposure({ jwtSecret: `@${keyFile}` }, undefined, { jwtSecret: `@${keyFile}` })).toBeNull(); // a file's name on the command line shows no secret
  });
});
