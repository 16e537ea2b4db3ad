import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { PG_URL, tempDir } from '../support/stores.js';
import { catalog, ensureBuilt, startServe } from './support.js';

ensureBuilt();

const JSON_BODY = { 'Content-Type': 'application/json', Prefer: 'return=minimal' };

/** A statement as the database's superuser (the test's PostgreSQL URL). */
async function sql(text: string): Promise<Array<Record<string, unknown>>> {
  const c = new pg.Client({ connectionString: PG_URL });
  await c.connect();
  try {
    return (await c.query(text)).rows;
  } finally {
    await c.end();
  }
}

const names = async (res: Response) => ((await res.json()) as Array<{ name: string }>).map((r) => r.name);

// Issue 38 items 3 and 4 on PostgreSQL: what an operator moving from PostgREST 12.2 brings along.
describe.skipIf(!PG_URL)(`catalog serve as a PostgREST operator runs it${PG_URL ? '' : ' (SKIPPED: set CATALOG_TEST_DATABASE_URL)'}`, () => {
  it('a PostgREST config file and PGRST_DB_URI start the service on the same database; an RS256 token verified by a JWKS writes', async () => {
    const id = `${process.pid}_${Date.now().toString(36)}`;
    const schema = `catalog_pgrst_${id}`;
    const dir = tempDir('pgrst-');
    const rsa = await generateKeyPair('RS256', { extractable: true });
    const ec = await generateKeyPair('ES256', { extractable: true });
    const jwks = JSON.stringify({ keys: [{ ...(await exportJWK(ec.publicKey)), kid: 'ec-1' }, { ...(await exportJWK(rsa.publicKey)), kid: 'rsa-1', alg: 'RS256' }] });
    writeFileSync(join(dir, 'jwks.json'), jwks, { mode: 0o600 });
    // as an identity provider (Keycloak) issues it: the role in realm_access.roles, an audience
    const token = (aud: string) => new SignJWT({ realm_access: { roles: ['editor'] }, aud }).setProtectedHeader({ alg: 'RS256', kid: 'rsa-1' }).setExpirationTime('5m').sign(rsa.privateKey);
    const config = join(dir, 'postgrest.conf');
    writeFileSync(
      config,
      [
        'db-uri = "$(CATALOG_TEST_PGRST_URI)"',
        `db-schemas = "${schema}"`,
        `jwt-secret = "@${join(dir, 'jwks.json')}"`,
        'jwt-aud = "catalog-api"',
        'jwt-role-claim-key = ".realm_access.roles[0]"',
        'server-host = "127.0.0.1"',
        'db-pool = 3',
        'db-tx-end = "commit"',
        '',
      ].join('\n'),
      { mode: 0o600 },
    );
    const home = tempDir('pgrst-home-'); // were PGRST_DB_URI ignored, the embedded catalog here would answer (empty)
    const env = { XDG_DATA_HOME: home, CATALOG_DATABASE_URL: undefined, CATALOG_DATA: undefined };
    const first = await startServe(['--config', config], { ...env, CATALOG_TEST_PGRST_URI: PG_URL });
    try {
      expect(first.stderr()).toMatch(/\(PostgreSQL\)/);
      const write = (auth: string | null) => fetch(`${first.url}/labels`, { method: 'POST', headers: { ...JSON_BODY, ...(auth ? { Authorization: `Bearer ${auth}` } : {}) }, body: JSON.stringify({ name: `Written by RS256 ${id}` }) });
      expect((await write(await token('catalog-api'))).status).toBe(201);
      const wrongAudience = await write(await token('another-api'));
      expect([wrongAudience.status, ((await wrongAudience.json()) as { message: string }).message]).toEqual([401, 'JWTClaimsError JWTNotInAudience']);
      expect((await write(null)).status).toBe(401); // anonymous: read-only
    } finally {
      expect(await first.stop()).toBe(0);
    }
    // the same database through PostgREST's variables alone
    const second = await startServe([], { ...env, PGRST_DB_URI: PG_URL, PGRST_DB_SCHEMAS: schema, PGRST_JWT_SECRET: jwks });
    try {
      const res = await fetch(`${second.url}/labels?select=name&name=like.*${id}`);
      expect(await names(res)).toEqual([`Written by RS256 ${id}`]);
    } finally {
      expect(await second.stop()).toBe(0);
      await sql(`drop schema if exists ${schema} cascade`);
    }
  });

  it('--db-roles: a row-level security policy restricts a role to its rows; grants decide 401/403 as in PostgREST', async () => {
    const id = `${process.pid}_${Date.now().toString(36)}`;
    const [schema, anon, user] = [`catalog_rls_${id}`, `catalog_rls_anon_${id}`, `catalog_rls_user_${id}`];
    const secret = 'a-jwt-secret-of-at-least-32-characters';
    const sign = (claims: Record<string, unknown>) => new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setExpirationTime('5m').sign(new TextEncoder().encode(secret));
    // the service creates and migrates the schema as the login user; the DBA's grants and policies come after
    const serve = await startServe(['--database-url', PG_URL!, '--db-schema', schema, '--db-roles', 'on', '--db-anon-role', anon], { CATALOG_JWT_SECRET: secret });
    try {
      await sql(`
        create role ${anon} nologin; create role ${user} nologin;
        grant usage on schema ${schema} to ${anon}, ${user};
        grant select on ${schema}.labels to ${anon};
        grant select, insert on ${schema}.labels to ${user};
        alter table ${schema}.labels enable row level security;
        create policy public_rows on ${schema}.labels for select to ${anon} using (name like 'Public%');
        create policy own_rows on ${schema}.labels for select to ${user} using (name like (current_setting('request.jwt.claims', true)::json->>'sub') || ':%');
        create policy own_inserts on ${schema}.labels for insert to ${user} with check (name like (current_setting('request.jwt.claims', true)::json->>'sub') || ':%');
        insert into ${schema}.labels (name) values ('Public one'), ('ana: first'), ('ana: second'), ('bob: first');`);
      const ana = await sign({ role: user, sub: 'ana' });
      const bob = await sign({ role: user, sub: 'bob' });
      const as = (token: string | null, path: string, init: RequestInit = {}) =>
        fetch(`${serve.url}${path}`, { ...init, headers: { ...(init.headers as Record<string, string>), ...(token ? { Authorization: `Bearer ${token}` } : {}) } });
      expect(await names(await as(null, '/labels?select=name&order=name'))).toEqual(['Public one']);
      expect(await names(await as(ana, '/labels?select=name&order=name'))).toEqual(['ana: first', 'ana: second']);
      expect(await names(await as(bob, '/labels?select=name&order=name'))).toEqual(['bob: first']);
      // writes: the policy's check, then the grants; an authenticated role is 403, anonymous 401 (PostgREST's split)
      expect((await as(ana, '/labels', { method: 'POST', headers: JSON_BODY, body: '{"name":"ana: third"}' })).status).toBe(201);
      const sneaky = await as(ana, '/labels', { method: 'POST', headers: JSON_BODY, body: '{"name":"bob: not ana"}' });
      expect([sneaky.status, ((await sneaky.json()) as { code: string }).code]).toEqual([403, '42501']);
      const anonWrite = await as(null, '/labels', { method: 'POST', headers: JSON_BODY, body: '{"name":"Public two"}' });
      expect([anonWrite.status, anonWrite.headers.get('www-authenticate')]).toEqual([401, 'Bearer']);
      expect((await as(ana, '/tracks?select=id')).status).toBe(403); // no grant on tracks
      expect((await as(await sign({ role: `no_such_role_${id}` }), '/labels')).status).toBe(400); // as PostgREST 12 (22023)
      // a COPY read cannot take the role: refused, and catalog export falls back to JSON pages, which do
      expect((await as(ana, '/labels', { headers: { Accept: 'application/vnd.catalog.copy+csv' } })).status).toBe(406);
      const exported = await catalog(['labels', 'export', '--format', 'csv', '--select', 'name', '--order', 'name', '--url', serve.url, '--token', ana]);
      expect([exported.code, exported.stdout.trim().split('\n')], exported.stderr).toEqual([0, ['name', 'ana: first', 'ana: second', 'ana: third']]);
      // and a session goes back to the pool as itself: the login user still sees every row
      expect((await sql(`select count(*)::int as n from ${schema}.labels`))[0].n).toBe(5);
    } finally {
      expect(await serve.stop()).toBe(0);
      await sql(`drop schema if exists ${schema} cascade; drop owned by ${anon}, ${user}; drop role if exists ${anon}; drop role if exists ${user}`).catch(() => sql(`drop role if exists ${anon}; drop role if exists ${user}`));
    }
  });
});
