import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, sources, SRC } from './sources.js';

/**
 * Issue 25: one table model (src/schema/model.ts), built from the compiled catalog or from a
 * service's root description, and engines that take it as input.
 */

const MODEL = 'src/schema/model.ts';


/** The text with comments blanked (a comment may name anything). */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, ' ').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

/** The body of a brace block starting at `open` (the index of its `{`), nested braces kept. */
function block(text: string, open: number): string {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === '{') depth++;
    else if (text[i] === '}' && --depth === 0) return text.slice(open + 1, i);
  }
  return text.slice(open + 1);
}

/** The body's own members (nested object types blanked), as `key: type` texts. */
function members(body: string): string[] {
  let flat = '';
  let depth = 0;
  for (const ch of body) {
    if (ch === '{') depth++;
    if (depth === 0) flat += ch;
    else if (ch === '}' && --depth === 0) flat += '{}';
  }
  return flat.split(/[;\n]/).map((m) => m.trim()).filter(Boolean);
}

/** An array of something other than plain strings: `X[]`, `readonly X[]`, `Array<X>`, `ReadonlyArray<X>`, `{…}[]`. */
const OBJECT_ARRAY = /^(?:readonly\s+)?(?:(?!string\b)[\w.]+(?:<[^>]*>)?|\{\})\[\]$|^(?:Readonly)?Array<(?!string>).+>$/;

/**
 * The names of the table-model types a text declares: an interface or object type with its own
 * `name` member and a `columns` or `fields` member that is an array of objects (not of strings).
 */
function tableModelTypes(text: string): string[] {
  const found: string[] = [];
  const src = code(text);
  for (const m of src.matchAll(/\b(?:interface\s+(\w+)(?:<[^>]*>)?(?:\s+extends\s+[^{]+)?|type\s+(\w+)(?:<[^>]*>)?\s*=)\s*\{/g)) {
    const own = members(block(src, m.index + m[0].length - 1));
    const hasName = own.some((x) => /^(?:readonly\s+)?name\??\s*:/.test(x));
    const hasColumns = own.some((x) => {
      const col = /^(?:readonly\s+)?(?:columns|fields)\??\s*:\s*(.+)$/.exec(x);
      return col !== null && OBJECT_ARRAY.test(col[1].trim());
    });
    if (hasName && hasColumns) found.push(m[1] ?? m[2]);
  }
  return found;
}

/** Lookups of the compiled catalog an engine must not make (it takes the model instead). */
const COMPILED_LOOKUP = /\b(?:tableByName|TABLES|COLLECTIONS|builtinSchema)\b/;

describe('one table model', () => {
  const files = sources(SRC);

  it('the pattern finds the model and a second model written the old way, and passes look-alikes', () => {
    expect(tableModelTypes(readFileSync(join(ROOT, MODEL), 'utf8'))).toEqual(['TableDef']);
    const old = `export interface TableInfo {\n  name: string;\n  fields: FieldInfo[];\n  primaryKey: string[];\n}`;
    expect(tableModelTypes(old)).toEqual(['TableInfo']);
    expect(tableModelTypes('type Sheet = { readonly name: string; columns: ReadonlyArray<{ key: string }> }')).toEqual(['Sheet']);
    expect(tableModelTypes('interface T { name?: string; columns: { name: string; type: string }[] }')).toEqual(['T']);
    // names with string arrays (a key spec, a sheet's header) are not table models
    expect(tableModelTypes('interface KeySpec { name: string; columns: string[] }')).toEqual([]);
    expect(tableModelTypes('interface Opts { table: TableDef; columns: ColumnDef[] }')).toEqual([]);
    // a nested object's `name` is not the type's own
    expect(tableModelTypes('interface P { ref: { name: string }; fields: ColumnDef[] }')).toEqual([]);
    expect(tableModelTypes('// interface TableInfo { name: string; fields: FieldInfo[] }')).toEqual([]);
  });

  it('no src file but the model module declares a table-model type', () => {
    const offenders = files
      .filter((f) => relative(ROOT, f) !== MODEL)
      .flatMap((f) => tableModelTypes(readFileSync(f, 'utf8')).map((t) => `${relative(ROOT, f)}: ${t}`));
    expect(offenders).toEqual([]);
  });

  it('the compiled-lookup pattern finds a lookup in code and not in a comment', () => {
    expect(COMPILED_LOOKUP.test(code("import { tableByName } from '../schema/catalog.js';"))).toBe(true);
    expect(COMPILED_LOOKUP.test(code('const order = TABLES.map((t) => t.name);'))).toBe(true);
    expect(COMPILED_LOOKUP.test(code('// the TABLES of the binary are not read here'))).toBe(false);
    expect(COMPILED_LOOKUP.test(code('/** not tableByName: the caller hands the table in */'))).toBe(false);
  });

  it('engines (import/, export/, check/) take the model: no tableByName, TABLES, COLLECTIONS or builtinSchema', () => {
    const engines = files.filter((f) => /^src\/(import|export|check)\//.test(relative(ROOT, f)));
    expect(engines.length).toBeGreaterThan(20);
    const offenders = engines.filter((f) => COMPILED_LOOKUP.test(code(readFileSync(f, 'utf8')))).map((f) => relative(ROOT, f));
    expect(offenders).toEqual([]);
  });
});
