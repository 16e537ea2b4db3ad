import type { Preferences } from '../grammar/types.js';
import type { ColumnDef, TableDef } from '../schema/catalog.js';
import { MATCH_PREFERENCE, parseMatch, renderMatch, type MatchAlternative } from '../schema/match.js';
import { ApiError } from './errors.js';

/**
 * The `match=` preference (our extension; docs/service.md "Bulk extensions"), parsed and rendered
 * side by side: taken out of `Prefer` (takeMatch), resolved against the table when a write is
 * planned (planMatch), echoed in Preference-Applied (renderPlannedMatch). Its grammar is
 * src/schema/match.ts, which the import client shares; what it does is src/server/match.ts.
 */

/** An alternative resolved against the table: a source's id, or key columns. */
export type PlannedMatch = { kind: 'source'; source: string } | { kind: 'key'; columns: ColumnDef[] };

/**
 * The first `match=` token of `Prefer` and the preferences without any (the grammar's parser
 * knows no `match` and lists it as invalid: it is ours, and valid, even with handling=strict).
 * @example takeMatch({ invalid: ['match=isrc_code'] }) // { value: 'isrc_code', prefs: { invalid: [] } }
 */
export function takeMatch(prefs: Preferences): { value: string | null; prefs: Preferences } {
  const mine = (t: string) => t.startsWith(`${MATCH_PREFERENCE}=`);
  const token = prefs.invalid.find(mine);
  if (token === undefined) return { value: null, prefs };
  return { value: token.slice(MATCH_PREFERENCE.length + 1), prefs: { ...prefs, invalid: prefs.invalid.filter((t) => !mine(t)) } };
}

/** 400 PGRST100, as for any part of a request that does not parse. */
function matchError(value: string, details: string): ApiError {
  return new ApiError(400, 'PGRST100', `"failed to parse Prefer match (${value})"`, {
    details,
    hint: 'match=ALT|ALT…, each ALT source_ids.<source> or columns joined by +, e.g. match=source_ids.legacy|isrc_code',
  });
}

/**
 * A `match=` value resolved against the table: its columns must exist (42703 as in `select`), and
 * the write it steers must upsert on the primary key (it decides ids).
 */
export function planMatch(table: TableDef, value: string, conflictColumns: readonly string[]): PlannedMatch[] {
  const alts: MatchAlternative[] | { error: string } = parseMatch(value);
  if ('error' in alts) throw matchError(value, alts.error);
  const pk = table.primaryKey;
  if (pk.length !== 1 || conflictColumns.length !== 1 || conflictColumns[0] !== pk[0]) {
    throw matchError(value, `match= decides each row's ${pk.join(', ') || 'key'}: the upsert must be on the primary key (leave on_conflict out)`);
  }
  return alts.map((a): PlannedMatch => {
    if (a.kind === 'source') return a;
    return {
      kind: 'key',
      columns: a.columns.map((name) => {
        const c = table.columns.find((col) => col.name === name);
        if (!c) throw new ApiError(400, '42703', `column ${table.name}.${name} does not exist`, { hint: `match=${value}: a key is made of ${table.name}'s columns` });
        return c;
      }),
    };
  });
}

/** The `match=` value as Preference-Applied echoes it. */
export function renderPlannedMatch(alts: readonly PlannedMatch[]): string {
  return renderMatch(alts.map((a) => (a.kind === 'source' ? a : { kind: 'key', columns: a.columns.map((c) => c.name) })));
}
