import { readFileSync } from 'node:fs';

/**
 * The folder of the released migrations' SQL files, migrations/ at the package root (frozen text,
 * kept out of src/: data, not code), found the same way from src/schema/ (vitest) and from
 * dist/schema/ (tsc's output): both sit two levels below the package root, so no build step copies
 * the files and a plain `tsc` never leaves dist/ reading an old copy. The package runs the bundle,
 * which embeds them instead: scripts/bundle.mjs replaces this module.
 */
const DIR = new URL('../../migrations/', import.meta.url);

/** The text of one migration file of migrations/, e.g. migrationSql('0002-lookup-indexes.sql'). */
export function migrationSql(file: string): string {
  return readFileSync(new URL(file, DIR), 'utf8');
}
