import type { JWTPayload } from 'jose';

/** Who a request runs as. `anon` when no token was sent. */
export interface Principal {
  role: string;
  claims: JWTPayload | null;
}

/** An authentication or permission failure, shaped as PostgREST answers it. */
export class AuthError extends Error {
  constructor(
    readonly status: 401 | 403 | 500,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'AuthError';
  }
}

/** Roles the catalog knows, from least to most privileged. */
export const ROLES = ['anon', 'reader', 'editor', 'admin'] as const;

const ALGORITHMS = ['HS256', 'HS384', 'HS512'];

function invalid(message: string): AuthError {
  const escaped = message.replace(/"/g, '\\"');
  return new AuthError(401, 'PGRST301', message, {
    'WWW-Authenticate': `Bearer error="invalid_token", error_description="${escaped}"`,
  });
}

/**
 * Reads `Authorization: Bearer <jwt>` as PostgREST 12.2.3 does: no header or an empty token is
 * anonymous; otherwise the HS256/384/512 signature, `exp` and `nbf` (30 s leeway) are checked and
 * the `role` claim decides. With no secret configured every request is allowed (the embedded,
 * loopback-only case) and tokens are not inspected.
 *
 * @example await authenticate('Bearer eyJ...', 'a-32-character-or-longer-secret!!') // { role: 'editor', claims: {...} }
 */
export async function authenticate(authorization: string | null, secret: string | undefined): Promise<Principal> {
  if (!secret) return { role: 'admin', claims: null };
  const m = /^bearer\s*(.*)$/i.exec(authorization?.trim() ?? '');
  const token = m ? m[1].trim() : '';
  if (!token) return { role: 'anon', claims: null };
  const parts = token.split('.').length;
  if (parts !== 3) throw invalid(`JWSError (CompactDecodeError Invalid number of parts: Expected 3 parts; got ${parts})`);
  const { jwtVerify, errors } = await import('jose');
  try {
    const { payload } = await jwtVerify(token, new TextEncoder().encode(secret), { algorithms: ALGORITHMS, clockTolerance: 30 });
    const role = typeof payload.role === 'string' && payload.role ? payload.role : 'anon';
    return { role, claims: payload };
  } catch (err) {
    if (err instanceof errors.JWTExpired) throw invalid('JWT expired');
    if (err instanceof errors.JWSSignatureVerificationFailed) throw invalid('JWSError JWSInvalidSignature');
    if (err instanceof errors.JWTClaimValidationFailed) throw invalid(`JWTClaimsError ${err.message}`);
    if (err instanceof errors.JOSEAlgNotAllowed) throw invalid('JWSError (JWSInvalidHeader "alg")');
    throw invalid(`JWSError (CompactDecodeError ${err instanceof Error ? err.message : String(err)})`);
  }
}

/** The privilege a method needs on a table: reading, writing (insert/update/upsert) or deleting. */
export function privilegeFor(method: string): 'read' | 'write' | 'delete' {
  const m = method.toUpperCase();
  if (m === 'GET' || m === 'HEAD' || m === 'OPTIONS') return 'read';
  if (m === 'DELETE') return 'delete';
  return 'write';
}

/** Whether a role holds a privilege: everyone reads, `editor` writes, `admin` also deletes. */
export function roleAllows(role: string, privilege: 'read' | 'write' | 'delete'): boolean {
  if (privilege === 'read') return true;
  if (privilege === 'write') return role === 'editor' || role === 'admin';
  return role === 'admin';
}

/**
 * Refuses a request its principal may not make, as PostgREST does when a grant is missing:
 * anonymous → 401 with `WWW-Authenticate: Bearer`, an authenticated role → 403; body 42501.
 * A read-only table (`removals`: select granted, nothing else) refuses every write so.
 */
export function authorize(principal: Principal, method: string, table: string, schema = 'public', readOnly = false): void {
  const privilege = privilegeFor(method);
  if (roleAllows(principal.role, privilege) && (privilege === 'read' || !readOnly)) return;
  const message = `permission denied for table ${table}`;
  void schema;
  if (principal.role === 'anon') throw new AuthError(401, '42501', message, { 'WWW-Authenticate': 'Bearer' });
  throw new AuthError(403, '42501', message);
}

/** Mints an HS256 token for `catalog token create` (CI scripts): role claim, optional expiry like `1h`, `7d`. */
export async function mintToken(secret: string, role: string, expiresIn?: string): Promise<string> {
  const { SignJWT } = await import('jose');
  let jwt = new SignJWT({ role }).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setIssuedAt();
  if (expiresIn) jwt = jwt.setExpirationTime(expiresIn);
  return jwt.sign(new TextEncoder().encode(secret));
}
