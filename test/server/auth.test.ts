import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { AuthError, authenticate, authorize, mintToken } from '../../src/server/auth.js';
import { rejectionOf } from '../support/throws.js';

const SECRET = 'reallyreallyreallyreallyverysafe';
const key = new TextEncoder().encode(SECRET);

describe('authenticate', () => {
  it('allows everything when no secret is configured', async () => {
    expect((await authenticate('Bearer whatever', undefined)).role).toBe('admin');
  });

  it('treats a missing header or an empty bearer token as anonymous', async () => {
    expect((await authenticate(null, SECRET)).role).toBe('anon');
    expect((await authenticate('Bearer ', SECRET)).role).toBe('anon');
  });

  it('accepts a valid token (scheme case-insensitive) and reads its role claim', async () => {
    const token = await mintToken(SECRET, 'editor', '1h');
    expect((await authenticate(`bearer ${token}`, SECRET)).role).toBe('editor');
  });

  it('answers an expired token with PGRST301 "JWT expired" and the WWW-Authenticate header', async () => {
    const token = await new SignJWT({ role: 'admin' }).setProtectedHeader({ alg: 'HS256' }).setExpirationTime(Math.floor(Date.now() / 1000) - 3600).sign(key);
    const err = await rejectionOf(AuthError, authenticate(`Bearer ${token}`, SECRET));
    expect(err).toMatchObject({ status: 401, code: 'PGRST301', message: 'JWT expired' });
    expect(err.headers['WWW-Authenticate']).toBe('Bearer error="invalid_token", error_description="JWT expired"');
  });

  it('answers a two-part token with the CompactDecodeError text', async () => {
    const err = await rejectionOf(AuthError, authenticate('Bearer abc.def', SECRET));
    expect(err.message).toBe('JWSError (CompactDecodeError Invalid number of parts: Expected 3 parts; got 2)');
  });

  it('answers a wrongly signed token with JWSInvalidSignature', async () => {
    const token = await mintToken('another-secret-of-thirty-two-chars!', 'admin');
    const err = await rejectionOf(AuthError, authenticate(`Bearer ${token}`, SECRET));
    expect(err).toMatchObject({ status: 401, message: 'JWSError JWSInvalidSignature' });
  });

  it('refuses the none algorithm', async () => {
    const header = Buffer.from(JSON.stringify({ alg: 'none' })).toString('base64url');
    const body = Buffer.from(JSON.stringify({ role: 'admin' })).toString('base64url');
    const err = await rejectionOf(AuthError, authenticate(`Bearer ${header}.${body}.`, SECRET));
    expect(err.status).toBe(401);
  });
});

describe('authorize', () => {
  it('lets anyone read', () => {
    expect(() => authorize({ role: 'anon', claims: null }, 'GET', 'labels')).not.toThrow();
  });

  it('refuses anonymous writes with 401 and WWW-Authenticate: Bearer', () => {
    try {
      authorize({ role: 'anon', claims: null }, 'POST', 'labels');
      expect.unreachable();
    } catch (e) {
      expect(e).toMatchObject({ status: 401, code: '42501', message: 'permission denied for table labels', headers: { 'WWW-Authenticate': 'Bearer' } });
    }
  });

  it('lets an editor write but not delete (403), and an admin delete', () => {
    expect(() => authorize({ role: 'editor', claims: {} }, 'PATCH', 'labels')).not.toThrow();
    expect(() => authorize({ role: 'editor', claims: {} }, 'DELETE', 'labels')).toThrow(expect.objectContaining({ status: 403 }));
    expect(() => authorize({ role: 'admin', claims: {} }, 'DELETE', 'labels')).not.toThrow();
  });
});
