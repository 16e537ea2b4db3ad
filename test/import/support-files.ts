import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tableByName, type TableDef } from '../../src/schema/catalog.js';

/** A temp directory under the test root. */
export function tmp(prefix = 'import-'): string {
  return mkdtempSync(join(process.env.CATALOG_TEST_ROOT ?? '/tmp', prefix));
}

/** Writes a file in `dir` and returns its path. */
export function file(dir: string, name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

/** A table by name (throws if absent, so typos fail loudly). */
export function table(name: string): TableDef {
  const t = tableByName(name);
  if (!t) throw new Error(`no table ${name}`);
  return t;
}
