/**
 * PostgREST's `jwt-role-claim-key`: where in a JWT's claims the role is, in its JSPath subset:
 * keys (`.role`, `."https://example.com/role"`), array indexes (`[0]`), and an array filter
 * keeping the first string that compares (`[?(@ == "admin")]`, with `==`, `!=`, `^==` starts
 * with, `==^` ends with, `*==` contains).
 */
export type ClaimStep =
  | { key: string }
  | { index: number }
  | { op: '==' | '!=' | '^==' | '==^' | '*=='; value: string };

export class ClaimPathError extends Error {
  override readonly name = 'ClaimPathError';
}

const STEP = /^(?:\.([A-Za-z_$][\w$-]*)|\."((?:[^"\\]|\\.)*)"|\[(\d+)\]|\[\?\(@\s*(==|!=|\^==|==\^|\*==)\s*"((?:[^"\\]|\\.)*)"\s*\)\])/;

/**
 * Reads a role claim path.
 * @example parseClaimPath('.realm_access.roles[0]') // [{ key: 'realm_access' }, { key: 'roles' }, { index: 0 }]
 */
export function parseClaimPath(path: string): ClaimStep[] {
  const steps: ClaimStep[] = [];
  let rest = path.trim();
  while (rest) {
    const m = STEP.exec(rest);
    if (!m) {
      throw new ClaimPathError(
        `the role claim key ${JSON.stringify(path)} cannot be read at ${JSON.stringify(rest)}: write it as PostgREST does, e.g. .role, .realm_access.roles[0], ."https://example.com/role", .roles[?(@ ^== "db_")]`,
      );
    }
    const unescape = (s: string) => s.replace(/\\(.)/g, '$1');
    if (m[1] !== undefined) steps.push({ key: m[1] });
    else if (m[2] !== undefined) steps.push({ key: unescape(m[2]) });
    else if (m[3] !== undefined) steps.push({ index: Number(m[3]) });
    else steps.push({ op: m[4] as Extract<ClaimStep, { op: string }>['op'], value: unescape(m[5]) });
    rest = rest.slice(m[0].length);
  }
  if (!steps.length) throw new ClaimPathError('the role claim key is empty: the default is .role');
  return steps;
}

function compares(op: Extract<ClaimStep, { op: string }>['op'], s: string, value: string): boolean {
  if (op === '==') return s === value;
  if (op === '!=') return s !== value;
  if (op === '^==') return s.startsWith(value);
  if (op === '==^') return s.endsWith(value);
  return s.includes(value);
}

/**
 * The role the claims name at `path`, or null when there is none (or it is not a string).
 * @example roleAt({ realm_access: { roles: ['editor'] } }, parseClaimPath('.realm_access.roles[0]')) // 'editor'
 */
export function roleAt(claims: unknown, path: readonly ClaimStep[]): string | null {
  let at: unknown = claims;
  for (const step of path) {
    if ('key' in step) at = at !== null && typeof at === 'object' && !Array.isArray(at) ? (at as Record<string, unknown>)[step.key] : undefined;
    else if ('index' in step) at = Array.isArray(at) ? at[step.index] : undefined;
    else at = Array.isArray(at) ? at.find((s) => typeof s === 'string' && compares(step.op, s, step.value)) : undefined;
    if (at === undefined) return null;
  }
  return typeof at === 'string' && at !== '' ? at : null;
}
