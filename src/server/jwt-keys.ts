import type { JWK, JWTPayload } from 'jose';

/**
 * `jwt-secret` as PostgREST reads it: a passphrase (HS256/384/512), or a JWK or JWK Set as JSON,
 * whose keys may be symmetric (`"kty": "oct"`, HS*) or public keys: RSA (RS*, PS*), EC P-256/384/521
 * (ES256/384/512) and Ed25519 (EdDSA), the algorithms PostgREST 12 verifies. Verification is
 * jose's; this module only chooses the key.
 */

/** PostgREST refuses a JWT secret under 32 characters (HS256 wants 256 bits); so do we. */
export const MIN_JWT_SECRET_LENGTH = 32;

const HMAC = ['HS256', 'HS384', 'HS512'];
const PUBLIC = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];
/** A private JWK's members: dropped, so a key pair's file verifies as its public half. */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth'];

/** Checks a token's signature, `exp` and `nbf` (30 s leeway) and returns its claims; throws jose's errors. */
export type Verify = (token: string) => Promise<JWTPayload>;

/** A JWT secret that cannot be used, said in words for the operator (exit 2). */
export class JwtSecretError extends Error {
  override readonly name = 'JwtSecretError';
}

/** The keys of a JSON secret, or null when the secret is a passphrase. */
function jsonKeys(secret: string): JWK[] | null {
  if (!secret.trimStart().startsWith('{')) return null;
  let doc: unknown;
  try {
    doc = JSON.parse(secret);
  } catch (err) {
    throw new JwtSecretError(`the JWT secret starts with { but is not JSON (${(err as Error).message}): give a JWK, a JWK Set ({"keys": […]}) or a passphrase`);
  }
  const keys = (doc as { keys?: unknown }).keys ?? [doc];
  if (!Array.isArray(keys) || keys.length === 0 || !keys.every((k) => typeof k === 'object' && k !== null && typeof (k as JWK).kty === 'string')) {
    throw new JwtSecretError('the JWT secret is JSON but neither a JWK (with "kty") nor a JWK Set ({"keys": [ … ]} of them)');
  }
  return keys as JWK[];
}

/**
 * Why a secret cannot be used, or null (none given counts as usable). Only what is seen without
 * importing a key: a short passphrase, JSON that is not a JWK or JWK Set.
 */
export function secretShapeProblem(secret: string | undefined): string | null {
  if (secret === undefined) return null;
  try {
    if (jsonKeys(secret)) return null;
  } catch (err) {
    return (err as Error).message;
  }
  if (secret.length >= MIN_JWT_SECRET_LENGTH) return null;
  return `the JWT secret must be at least ${MIN_JWT_SECRET_LENGTH} characters long (it has ${secret.length}), as PostgREST requires: make one with \`openssl rand -base64 32\``;
}

/** The algorithm a public JWK is checked with at start (its own `alg`, else its type's usual one). */
function usualAlg(jwk: JWK): string {
  if (jwk.alg) return jwk.alg;
  if (jwk.kty === 'RSA') return 'RS256';
  if (jwk.kty === 'OKP') return 'EdDSA';
  return ({ 'P-256': 'ES256', 'P-384': 'ES384', 'P-521': 'ES512' } as Record<string, string>)[jwk.crv ?? ''] ?? 'ES256';
}

/**
 * The verifier of a `jwt-secret`: a passphrase, or a JWK / JWK Set (each public key imported once
 * now, so a broken key stops the start rather than every request).
 */
export async function keyVerifier(secret: string): Promise<Verify> {
  const jose = await import('jose');
  const keys = jsonKeys(secret);
  const options = { clockTolerance: 30 };
  if (!keys) {
    const bytes = new TextEncoder().encode(secret);
    return async (token) => (await jose.jwtVerify(token, bytes, { ...options, algorithms: HMAC })).payload;
  }
  const secrets = keys.filter((k) => k.kty === 'oct').map((k) => ({ kid: k.kid, bytes: jose.base64url.decode(k.k ?? '') }));
  const publics = keys.filter((k) => k.kty !== 'oct').map((k) => Object.fromEntries(Object.entries(k).filter(([m]) => !PRIVATE_MEMBERS.includes(m))) as JWK);
  for (const [i, jwk] of publics.entries()) {
    await jose.importJWK(jwk, usualAlg(jwk)).catch((err: Error) => {
      throw new JwtSecretError(`the JWT secret's key ${jwk.kid ? `"${jwk.kid}"` : i + 1} cannot be used: ${err.message}`);
    });
  }
  const set = publics.length ? jose.createLocalJWKSet({ keys: publics }) : null;
  return async (token) => {
    const { alg, kid } = jose.decodeProtectedHeader(token);
    if (alg?.startsWith('HS')) {
      const candidates = secrets.filter((s) => kid === undefined || s.kid === undefined || s.kid === kid);
      if (!candidates.length) throw new jose.errors.JWKSNoMatchingKey();
      let last: unknown;
      for (const c of candidates) {
        try {
          return (await jose.jwtVerify(token, c.bytes, { ...options, algorithms: HMAC })).payload;
        } catch (err) {
          last = err;
        }
      }
      throw last;
    }
    if (!set) throw new jose.errors.JWKSNoMatchingKey();
    try {
      return (await jose.jwtVerify(token, set, { ...options, algorithms: PUBLIC })).payload;
    } catch (err) {
      if (!(err instanceof jose.errors.JWKSMultipleMatchingKeys)) throw err;
      // several keys fit (no kid): the first that verifies
      for await (const key of err as unknown as AsyncIterable<CryptoKey>) {
        const ok = await jose.jwtVerify(token, key, { ...options, algorithms: PUBLIC }).catch(() => null);
        if (ok) return ok.payload;
      }
      throw new jose.errors.JWSSignatureVerificationFailed();
    }
  };
}
