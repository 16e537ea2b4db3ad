import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TITLE_FIELDS } from '../../src/schema/facts.js';
import { ROOT, sources, SRC } from './sources.js';

/**
 * Issue 39 (item 3): a collection's title field is stated once, on the table model
 * (src/schema/facts.ts), and read from it (TableDef.title, titleOf). No other src/ file spells
 * one out in code: as a string literal ('stage_name') or a property read (row.track_title).
 * `name` (the title of the collections named by reference) is left out: it is also every
 * parent's column, TableDef's own member and a word used everywhere, so a grep cannot tell.
 */

/** Where a title field may be written out, and why. */
const ALLOWED: Readonly<Record<string, string>> = {
  'src/schema/facts.ts': 'the facts themselves',
  'src/schema/catalog.ts': 'the columns the tables have',
  'src/server/link-batch.ts': 'SQL that must do what migration 5\'s triggers do (the artists\' stage_name), held equal by test/server/link-batch.test.ts',
  'src/check/check.ts': 'the check rules name the fields they compare (duplicate-release: release titles; credits: artists\' stage names)',
  'src/check/rules.ts': 'the rule table\'s scope texts (releases.release_title), what `catalog check` lists',
};

/** Migrations are frozen text pinned by hash (test/schema/migrations-frozen.test.ts): their SQL (titles of removed records, collation columns, credit names) stays as released. */
const FROZEN = /^src\/schema\/migrations[\w-]*\.ts$/;

/** The text with comments blanked (a comment may name anything). */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, ' ').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

const distinct = TITLE_FIELDS.filter((f) => f !== 'name');
const SPELLED = new RegExp(`(['"\`])(?:${distinct.join('|')})\\1|\\.(?:${distinct.join('|')})\\b|\\[\\s*['"\`](?:${distinct.join('|')})['"\`]\\s*\\]`);

describe('a collection\'s title field is stated once', () => {
  it('the pattern finds a literal or a property read in code, and not a comment, a longer name or text around it', () => {
    expect(distinct).toEqual(['stage_name', 'release_title', 'track_title']);
    for (const hit of ["const t = 'stage_name';", 'select: ["id", "track_title"]', 'String(r.track_title)', "r['release_title']"]) expect(SPELLED.test(code(hit)), hit).toBe(true);
    for (const miss of ['// reads r.track_title', "/** 'stage_name' */", "'release_title=eq.Kind of Blue'", 'stage_names', "--key stage_name"]) expect(SPELLED.test(code(miss)), miss).toBe(false);
  });

  it('no src file but the model (and the frozen or rule-bound ones listed) spells out a title field', () => {
    const files = sources(SRC).map((f) => relative(ROOT, f));
    for (const f of Object.keys(ALLOWED)) expect(files, `${f} (listed as allowed) exists`).toContain(f);
    const offenders = files.filter((f) => !(f in ALLOWED) && !FROZEN.test(f) && SPELLED.test(code(readFileSync(`${ROOT}/${f}`, 'utf8'))));
    expect(offenders).toEqual([]);
  });
});
