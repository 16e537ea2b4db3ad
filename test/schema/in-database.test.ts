import { describe, expect, it } from 'vitest';
import {
  CHECKED_BATCH_SCHEMA,
  CHECKED_BATCH_SETTING,
  CREDIT_SHAPE_PATH,
  fastTracks,
  REMOVALS_COMMENT,
  UUID_RE,
} from '../../src/schema/in-database.js';
import { MIGRATIONS } from '../../src/schema/migrations.js';

/** The migrations whose SQL holds `text` exactly. */
const holding = (text: string) => MIGRATIONS.filter((m) => m.sql.includes(text)).map((m) => m.version);

/**
 * The service runs or names these beside the database objects the released migrations made: the
 * set-based link check (src/server/link-batch.ts) must decide as migration 5 and 8's triggers do,
 * and the OpenAPI document quotes migration 9's comment. The migrations are text now, so nothing
 * else ties the two: a change to one of these values (or to LINK_KEYS, which two of them are built
 * from) fails here, and needs a migration that changes the database the same way.
 */
describe('what the service shares with the migrations is in their SQL as the service writes it', () => {
  it.each<[what: string, text: string, versions: number[]]>([
    ['the canonical id pattern', `~* '${UUID_RE}'`, [4, 5, 10]],
    ["a credits list's shape test, as the tracks triggers run it", `jsonb_path_exists(new.primary_artists, '${CREDIT_SHAPE_PATH}')`, [5, 8]],
    ["the releases trigger's fast path", fastTracks('new.tracks'), [5]],
    ["the checked batch's setting, as the triggers' WHEN reads it", `current_setting('${CHECKED_BATCH_SETTING}', true)`, [8, 15]],
    ["the batch keys' schema", `create schema if not exists ${CHECKED_BATCH_SCHEMA};`, [8]],
    ["the removals table's comment", `comment on table removals is '${REMOVALS_COMMENT}';`, [9]],
  ])('%s', (_what, text, versions) => {
    expect(holding(text)).toEqual(versions);
  });
});
