import { COLLECTION_FACTS } from './facts.js';

/**
 * The keys rows are compared by when looking for duplicates: `catalog check`'s duplicate rules,
 * import's dedupe and `import --sync`'s matching all use these, so they agree on what is "the same".
 */

/** White space as PostgreSQL's `\s` reads it (no-break spaces and U+FEFF are not), once NFKD has made most of it a plain space. */
const SPACES = /[\t\n\v\f\r \u1680\u2000-\u200a\u2028\u2029\u205f\u3000]+/g;

/**
 * Trimmed, case-folded, accents removed, runs of white space as one: the key duplicates compare
 * by. The same rule as the database's `catalog_name_key` (migration 4, migrations/0004-links.sql), which
 * resolves the names in credit lists, so the client and the service agree on what names a record
 * (a property test compares them): the accents removed are the combining diacritical marks
 * U+0300–U+036F after NFKD (so が stays apart from か), and case is folded one character at a time
 * (no final sigma).
 * @example nameKey('  Café   del Mar ') // 'cafe del mar'
 */
export function nameKey(s: string): string {
  return s.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').replace(SPACES, ' ').replace(/^ | $/g, '').replaceAll('Σ', 'σ').toLowerCase();
}

const ISRC = /^[A-Z]{2}[A-Z0-9]{3}\d{7}$/;

/**
 * An ISRC without spaces, dots, underscores and hyphens, in upper case: the form the database
 * also looks a track's key up by (catalog_track_by_key), valid or not.
 * @example isrcBare('us-00c-16-00121') // 'US00C1600121'
 */
export const isrcBare = (raw: string): string => raw.replace(/[\s\-_.]/g, '').toUpperCase();

/**
 * An ISRC's state: valid as it is, fixable (only separators and case are off: the fix), or invalid.
 * @example isrcState('us-00c-16-00121') // { ok: false, fix: 'US00C1600121' }
 */
export function isrcState(raw: string): { ok: true } | { ok: false; fix: string | null } {
  if (ISRC.test(raw)) return { ok: true };
  const bare = isrcBare(raw);
  return { ok: false, fix: ISRC.test(bare) ? bare : null };
}

/** The form two ISRCs are compared in: the fixed form when only separators or case differ. */
export function isrcKey(raw: string): string {
  const s = isrcState(raw);
  return s.ok ? raw : (s.fix ?? raw.trim().toUpperCase());
}

/** The form two UPCs are compared in: without spaces and hyphens. */
export const upcKey = (raw: string): string => raw.replace(/[\s-]/g, '');

/** The fields whose duplicates the duplicate rules look for, per collection: the name column of each collection named by reference (src/schema/facts.ts). */
export const NAME_FIELD: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(COLLECTION_FACTS).flatMap(([name, f]) => (f.nameColumn ? [[name, f.nameColumn]] : [])),
);
