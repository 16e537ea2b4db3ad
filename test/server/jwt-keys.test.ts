import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import { describe, expect, it } from 'vitest';
import { AuthError, authenticate, buildAuth } from '../../src/server/auth.js';
import { secretShapeProblem } from '../../src/server/jwt-keys.js';
import { parseClaimPath, roleAt } from '../../src/server/role-claim.js';
import { rejectionOf } from '../support/throws.js';

/** A key pair's public JWK (with `kid`) and a signer for it. */
async function pair(alg: 'RS256' | 'ES256' | 'EdDSA', kid: string) {
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true, ...(alg === 'EdDSA' ? { crv: 'Ed25519' } : {}) });
  const jwk: JWK = { ...(await exportJWK(publicKey)), kid };
  const sign = (claims: Record<string, unknown>, header: Record<string, unknown> = { kid }) =>
    new SignJWT(claims).setProtectedHeader({ alg, ...header }).setExpirationTime('1h').sign(privateKey);
  return { jwk, sign, privateJwk: { ...(await exportJWK(privateKey)), kid } };
}

// Issue 38 item 4: jwt-secret as a JWK or JWK Set (RS256, ES256, EdDSA), jwt-aud, jwt-role-claim-key.
describe('JWT secrets that are keys', () => {
  it('verifies RS256, ES256 and EdDSA tokens against a JWK Set, each by its kid', async () => {
    const keys = await Promise.all([pair('RS256', 'rsa'), pair('ES256', 'ec'), pair('EdDSA', 'ed')]);
    const auth = await buildAuth({ jwtSecret: JSON.stringify({ keys: keys.map((k) => k.jwk) }) });
    for (const [i, k] of keys.entries()) {
      const p = await authenticate(`Bearer ${await k.sign({ role: ['reader', 'editor', 'admin'][i] })}`, auth);
      expect(p.role).toBe(['reader', 'editor', 'admin'][i]);
    }
  });

  it('verifies with a single JWK, a private one as its public half, and a token without kid', async () => {
    const k = await pair('RS256', 'one');
    const auth = await buildAuth({ jwtSecret: JSON.stringify(k.privateJwk) });
    expect((await authenticate(`Bearer ${await k.sign({ role: 'editor' }, {})}`, auth)).role).toBe('editor');
  });

  it('refuses a token signed by a key that is not in the set, or whose alg the key does not fit', async () => {
    const [known, other] = await Promise.all([pair('RS256', 'known'), pair('RS256', 'other')]);
    const auth = await buildAuth({ jwtSecret: JSON.stringify({ keys: [known.jwk] }) });
    const err = await rejectionOf(AuthError, authenticate(`Bearer ${await other.sign({ role: 'admin' }, { kid: 'known' })}`, auth));
    expect(err).toMatchObject({ status: 401, code: 'PGRST301', message: 'JWSError JWSInvalidSignature' });
    const hs = await new SignJWT({ role: 'admin' }).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode('x'.repeat(32)));
    expect((await rejectionOf(AuthError, authenticate(`Bearer ${hs}`, auth))).status).toBe(401);
  });

  it('takes a symmetric JWK ("kty": "oct") for HS256', async () => {
    const bytes = new TextEncoder().encode('a-secret-of-at-least-thirty-two-bytes!');
    const auth = await buildAuth({ jwtSecret: JSON.stringify({ kty: 'oct', k: Buffer.from(bytes).toString('base64url') }) });
    const token = await new SignJWT({ role: 'editor' }).setProtectedHeader({ alg: 'HS256' }).sign(bytes);
    expect((await authenticate(`Bearer ${token}`, auth)).role).toBe('editor');
  });

  it('says what is wrong with a secret that is neither a passphrase nor a key, before serving', async () => {
    expect(secretShapeProblem('{"keys": 1}')).toMatch(/neither a JWK .* nor a JWK Set/);
    expect(secretShapeProblem('{not json')).toMatch(/starts with \{ but is not JSON/);
    expect(secretShapeProblem('short')).toMatch(/at least 32 characters/);
    expect(secretShapeProblem('{"kty":"RSA","n":"x","e":"AQAB"}')).toBeNull(); // the shape is right: the import says more
    await expect(buildAuth({ jwtSecret: '{"kty":"EC","crv":"P-256","x":"AA","y":"AA","kid":"bad"}' })).rejects.toThrow(/key "bad" cannot be used: Invalid keyData/);
  });
});

describe('jwt-aud and jwt-role-claim-key', () => {
  const secret = 'reallyreallyreallyreallyverysafe';
  const sign = (claims: Record<string, unknown>) => new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode(secret));

  it('a token naming another audience is 401; one naming ours, or none, passes (PostgREST 12)', async () => {
    const auth = await buildAuth({ jwtSecret: secret, jwtAud: 'catalog' });
    expect((await authenticate(`Bearer ${await sign({ role: 'editor', aud: ['x', 'catalog'] })}`, auth)).role).toBe('editor');
    expect((await authenticate(`Bearer ${await sign({ role: 'editor' })}`, auth)).role).toBe('editor');
    expect(await rejectionOf(AuthError, authenticate(`Bearer ${await sign({ role: 'editor', aud: 'other' })}`, auth))).toMatchObject({ status: 401, message: 'JWTClaimsError JWTNotInAudience' });
  });

  it('reads the role where the claim key says', async () => {
    const auth = await buildAuth({ jwtSecret: secret, jwtRoleClaimKey: '.realm_access.roles[1]' });
    expect((await authenticate(`Bearer ${await sign({ realm_access: { roles: ['offline', 'editor'] } })}`, auth)).role).toBe('editor');
    expect((await authenticate(`Bearer ${await sign({ role: 'editor' })}`, auth)).role).toBe('anon'); // nothing there: anonymous
  });

  it.each([
    ['.role', { role: 'editor' }, 'editor'],
    ['."https://example.com/role"', { 'https://example.com/role': 'admin' }, 'admin'],
    ['.a.b[0].c', { a: { b: [{ c: 'reader' }] } }, 'reader'],
    ['.roles[?(@ ^== "db_")]', { roles: ['user', 'db_editor'] }, 'db_editor'],
    ['.roles[?(@ == "admin")]', { roles: ['user', 'admin'] }, 'admin'],
    ['.roles[?(@ *== "edit")]', { roles: ['user', 'x_editor'] }, 'x_editor'],
    ['.roles[?(@ ==^ "_rw")]', { roles: ['a_ro', 'b_rw'] }, 'b_rw'],
    ['.roles[?(@ != "user")]', { roles: ['user', 'other'] }, 'other'],
    ['.role', { role: 7 }, null],
    ['.roles[5]', { roles: ['a'] }, null],
  ])('%s in %j → %s', (path, claims, role) => {
    expect(roleAt(claims, parseClaimPath(path))).toBe(role);
  });

  it.each(['role', '.role[', '.role..x', ''])('refuses the claim key %j, showing how to write one', (path) => {
    expect(() => parseClaimPath(path)).toThrow(/role claim key/);
  });
});

describe('--db-roles: requests as PostgreSQL roles', () => {
  const secret = 'reallyreallyreallyreallyverysafe';
  const sign = (claims: Record<string, unknown>) => new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode(secret));

  it("runs a token as its role and no token as db-anon-role; the role's own privileges are the database's to decide", async () => {
    const auth = await buildAuth({ jwtSecret: secret, dbRoles: true, dbAnonRole: 'web_anon' });
    expect(await authenticate(null, auth)).toMatchObject({ role: 'web_anon', dbRole: 'web_anon', authenticated: false });
    expect(await authenticate(`Bearer ${await sign({ role: 'web_user', sub: 'u1' })}`, auth)).toMatchObject({ role: 'web_user', dbRole: 'web_user', authenticated: true });
    // a token without a role is the anonymous role, as in PostgREST (and its 42501 is then 401)
    expect(await authenticate(`Bearer ${await sign({ sub: 'u1' })}`, auth)).toMatchObject({ dbRole: 'web_anon', authenticated: false });
  });

  it('without db-anon-role, a request without a token is 401 PGRST302', async () => {
    const auth = await buildAuth({ jwtSecret: secret, dbRoles: true });
    expect(await rejectionOf(AuthError, authenticate(null, auth))).toMatchObject({ status: 401, code: 'PGRST302', message: 'Anonymous access is disabled' });
  });
});
