import { LINK_KEYS } from './links.js';

/**
 * What the service names or runs that the released migrations also wrote into the database
 * (migrations/*.sql hold it as text). The service's set-based link check
 * (src/server/link-batch.ts) must accept and store exactly what the migrations' triggers do, and
 * the OpenAPI document describes the removals table as migration 9 commented it: each value here
 * appears in its migration's file as it is written here (test/schema/in-database.test.ts).
 */

/** An id in canonical form (8-4-4-4-12 hex digits), as the link functions test one (with `~*`: either case). */
export const UUID_RE = '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';

/**
 * A credits list's elements that need more than a glance (jsonpath, evaluated without a query; lax,
 * so a missing key is an empty sequence rather than an error that would make the test unknown):
 * anything but an object of known keys without nulls, with a text name that is not blank, an id
 * (if any) in canonical form, a text role and a share from 0 to 100. Migrations 5 and 8's tracks
 * triggers send a list with one to the element-by-element check.
 */
export const CREDIT_SHAPE_PATH = `lax $[*] ? (@.type() != "object"
  || exists(@.keyvalue() ? (${LINK_KEYS.credits.map((k) => `@.key != "${k}"`).join(' && ')}))
  || exists(@.* ? (@.type() == "null"))
  || !exists(@.name) || @.name.type() != "string" || @.name like_regex "^[ ]*$"
  || (exists(@.id) && (@.id.type() != "string" || !(@.id like_regex "${UUID_RE}")))
  || (exists(@.role) && @.role.type() != "string")
  || (exists(@.share) && (@.share.type() != "number" || @.share < 0 || @.share > 100)))`;

/**
 * The common case of `releases.tracks` in one statement, as migration 5's releases trigger runs it:
 * a value already made of objects that fit, naming tracks that exist, comes back normalised;
 * anything else (a key to resolve, a problem to report with its path) gives NULL and goes through
 * `catalog_release_tracks`. `v` is the value's SQL (the trigger's `new.tracks`).
 */
export function fastTracks(v: string): string {
  const ok = `case when jsonb_typeof(x.e) = 'object' then (x.e - '{${LINK_KEYS.tracks.join(',')}}'::text[]) = '{}'::jsonb
      and t.id is not null and catalog_link_count(x.e->'position') is not null
      and (coalesce(jsonb_typeof(x.e->'disc'), 'null') = 'null' or catalog_link_count(x.e->'disc') is not null)
    else false end`;
  return `select case when jsonb_typeof(${v}) = 'array' then (
    select case when bool_and(y.ok) is not false and count(*) = count(distinct (y.d, y.p))
      then coalesce(jsonb_agg(y.item order by y.d, y.p), '[]'::jsonb) end
    from (select ${ok} as ok, coalesce(catalog_link_count(x.e->'disc'), 1) as d, catalog_link_count(x.e->'position') as p,
        jsonb_strip_nulls(jsonb_build_object('id', t.id, 'position', catalog_link_count(x.e->'position'), 'disc', catalog_link_count(x.e->'disc'))) as item
      from jsonb_array_elements(${v}) with ordinality as x(e, n) left join tracks t on t.id = catalog_link_uuid(x.e->'id')) as y) end`;
}

/** The setting a checked batch carries (the service sets it with set_config, transaction-local; migration 8's triggers skip its rows). */
export const CHECKED_BATCH_SETTING = 'catalog.checked_batch';

/** The schema of the catalogs' batch keys (one typed table per catalog schema, dropped with it; migration 8). */
export const CHECKED_BATCH_SCHEMA = 'catalog_private';

/** The removals table's comment (migration 9; PostgREST shows it as the path's summary). */
export const REMOVALS_COMMENT = 'What was removed from the catalog: one row per record, written by a trigger on each collection. Read-only.';
