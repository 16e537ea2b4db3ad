/**
 * The keys rows are compared by when looking for duplicates: `catalog check`'s duplicate rules,
 * import's dedupe and `import --sync`'s matching all use these, so they agree on what is "the same".
 */

/** Trimmed, case-folded, accents removed, runs of white space as one: the key duplicates compare by. */
export function nameKey(s: string): string {
  return s.normalize('NFKD').replace(/\p{M}/gu, '').toLocaleLowerCase('und').replace(/\s+/gu, ' ').trim();
}

const ISRC = /^[A-Z]{2}[A-Z0-9]{3}\d{7}$/;

/**
 * An ISRC's state: valid as it is, fixable (only separators and case are off: the fix), or invalid.
 * @example isrcState('us-00c-16-00121') // { ok: false, fix: 'US00C1600121' }
 */
export function isrcState(raw: string): { ok: true } | { ok: false; fix: string | null } {
  if (ISRC.test(raw)) return { ok: true };
  const bare = raw.replace(/[\s\-_.]/g, '').toUpperCase();
  return { ok: false, fix: ISRC.test(bare) ? bare : null };
}

/** The form two ISRCs are compared in: the fixed form when only separators or case differ. */
export function isrcKey(raw: string): string {
  const s = isrcState(raw);
  return s.ok ? raw : (s.fix ?? raw.trim().toUpperCase());
}

/** The form two UPCs are compared in: without spaces and hyphens. */
export const upcKey = (raw: string): string => raw.replace(/[\s-]/g, '');

/** The fields whose duplicates the duplicate rules look for, per collection. */
export const NAME_FIELD: Readonly<Record<string, string>> = {
  labels: 'name',
  genres: 'name',
  subgenres: 'name',
  countries: 'name',
  languages: 'name',
  artists: 'stage_name',
};
