import type { JWTPayload } from 'jose';
import { StoreError } from '../store/store.js';
import { keyVerifier, type Verify } from './jwt-keys.js';
import { parseClaimPath, roleAt, type ClaimStep } from './role-claim.js';

/** Who a request runs as. `anon` when no token was sent. */
export interface Principal {
  role: string;
  claims: JWTPayload | null;
  /**
   * With `--db-roles`: the PostgreSQL role the request's transaction runs as (the JWT's role, or
   * `db-anon-role`); the database's grants and policies then decide, not `roleAllows`.
   */
  dbRole?: string;
  /** With `--db-roles`: true when the role came from a JWT and is not the anonymous role (42501 is then 403, not 401). */
  authenticated?: boolean;
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

/**
 * How requests are authenticated, PostgREST's settings made ready once (`buildAuth`): the
 * `jwt-secret`'s verifier, `jwt-aud`, `jwt-role-claim-key`, and with `--db-roles` the
 * PostgreSQL roles requests run as.
 */
export interface AuthSettings {
  /** Null without a secret: tokens are not inspected. */
  verify: Verify | null;
  audience?: string;
  roleClaim: readonly ClaimStep[];
  /** Requests run as PostgreSQL roles (`SET LOCAL ROLE`). */
  dbRoles: boolean;
  /** The role of a request without a token, with `dbRoles`; none: such a request is refused (PGRST302). */
  anonRole?: string;
}

export interface AuthOptions {
  jwtSecret?: string;
  jwtAud?: string;
  /** PostgREST's JSPath; default `.role`. */
  jwtRoleClaimKey?: string;
  dbRoles?: boolean;
  dbAnonRole?: string;
}

/** Reads the authentication settings once: the secret's keys are imported, the claim path parsed (errors say what is wrong). */
export async function buildAuth(opts: AuthOptions): Promise<AuthSettings> {
  return {
    verify: opts.jwtSecret ? await keyVerifier(opts.jwtSecret) : null,
    ...(opts.jwtAud ? { audience: opts.jwtAud } : {}),
    roleClaim: parseClaimPath(opts.jwtRoleClaimKey ?? '.role'),
    dbRoles: opts.dbRoles ?? false,
    ...(opts.dbAnonRole ? { anonRole: opts.dbAnonRole } : {}),
  };
}

function invalid(message: string): AuthError {
  const escaped = message.replace(/"/g, '\\"');
  return new AuthError(401, 'PGRST301', message, {
    'WWW-Authenticate': `Bearer error="invalid_token", error_description="${escaped}"`,
  });
}

/** jose's failure as PostgREST 12.2.3 words it. */
async function verifyError(err: unknown): Promise<AuthError> {
  const { errors } = await import('jose');
  if (err instanceof AuthError) return err;
  if (err instanceof errors.JWTExpired) return invalid('JWT expired');
  if (err instanceof errors.JWSSignatureVerificationFailed || err instanceof errors.JWKSNoMatchingKey) return invalid('JWSError JWSInvalidSignature');
  if (err instanceof errors.JWTClaimValidationFailed) return invalid(`JWTClaimsError ${err.message}`);
  if (err instanceof errors.JOSEAlgNotAllowed || err instanceof errors.JOSENotSupported) return invalid('JWSError (JWSInvalidHeader "alg")');
  return invalid(`JWSError (CompactDecodeError ${err instanceof Error ? err.message : String(err)})`);
}

/** `jwt-aud` as PostgREST 12 checks it: a token without `aud` passes; one with it must name the audience. */
function checkAudience(payload: JWTPayload, audience: string | undefined): void {
  if (audience === undefined || payload.aud === undefined) return;
  const auds = Array.isArray(payload.aud) ? payload.aud : [payload.aud];
  if (!auds.includes(audience)) throw invalid('JWTClaimsError JWTNotInAudience');
}

/** The principal of a request without a (checked) token: anonymous, or under `--db-roles` the anonymous role (PGRST302 without one). */
function anonymous(auth: AuthSettings): Principal {
  if (!auth.dbRoles) return { role: 'anon', claims: null };
  if (!auth.anonRole) throw new AuthError(401, 'PGRST302', 'Anonymous access is disabled', { 'WWW-Authenticate': 'Bearer' });
  return { role: auth.anonRole, claims: null, dbRole: auth.anonRole, authenticated: false };
}

/**
 * Reads `Authorization: Bearer <jwt>` as PostgREST 12.2.3 does: no header or an empty token is
 * anonymous; otherwise the signature (a passphrase's HS256/384/512, or a JWK/JWKS's keys), `exp`
 * and `nbf` (30 s leeway) and `aud` (with `jwt-aud`) are checked, and the role is read at
 * `jwt-role-claim-key`. With no secret configured, tokens are not inspected: every request is
 * allowed (the embedded, loopback-only case), or under `--db-roles` runs as the anonymous role.
 * `auth` may be a passphrase alone (tests, token checks).
 *
 * @example await authenticate('Bearer eyJ...', 'a-32-character-or-longer-secret!!') // { role: 'editor', claims: {...} }
 */
export async function authenticate(authorization: string | null, auth: string | AuthSettings | undefined): Promise<Principal> {
  const settings = typeof auth === 'string' ? await buildAuth({ jwtSecret: auth }) : auth;
  if (!settings || (!settings.verify && !settings.dbRoles)) return { role: 'admin', claims: null };
  const m = /^bearer\s*(.*)$/i.exec(authorization?.trim() ?? '');
  const token = m ? m[1].trim() : '';
  if (!token || !settings.verify) return anonymous(settings);
  const parts = token.split('.').length;
  if (parts !== 3) throw invalid(`JWSError (CompactDecodeError Invalid number of parts: Expected 3 parts; got ${parts})`);
  let payload: JWTPayload;
  try {
    payload = await settings.verify(token);
  } catch (err) {
    throw await verifyError(err);
  }
  checkAudience(payload, settings.audience);
  const role = roleAt(payload, settings.roleClaim);
  if (!settings.dbRoles) return { role: role ?? 'anon', claims: payload };
  if (!role) return { ...anonymous(settings), claims: payload };
  return { role, claims: payload, dbRole: role, authenticated: role !== settings.anonRole };
}

/**
 * Under `--db-roles`, PostgreSQL's `42501` (permission denied) for a role that came from a JWT
 * is 403, as PostgREST answers it; anonymous stays 401. Anything else passes unchanged.
 */
export function asRefusal(err: unknown, principal: Principal | undefined): unknown {
  if (!principal?.authenticated || !(err instanceof StoreError) || err.code !== '42501') return err;
  return new AuthError(403, '42501', err.message);
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
  // under --db-roles the database's grants and policies decide; a read-only table stays read-only
  if (principal.dbRole !== undefined && (privilege === 'read' || !readOnly)) return;
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
