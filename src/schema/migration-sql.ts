import { readFileSync } from 'node:fs';

/**
 * The folder of the released migrations' SQL files, src/schema/migrations/, found the same way from
 * src/schema/ (vitest) and from dist/schema/ (tsc's output): both sit two levels below the package
 * root, and a checkout that runs dist/ has src/ beside it, so no build step copies the files and a
 * plain `tsc` never leaves dist/ reading an old copy. The package runs the bundle, which embeds
 * them instead: scripts/bundle.mjs replaces this module.
 */
const DIR = new URL('../../src/schema/migrations/', import.meta.url);

/** The text of one migration file of src/schema/migrations/, e.g. migrationSql('0002-lookup-indexes.sql'). */
export function migrationSql(file: string): string {
  return readFileSync(new URL(file, DIR), 'utf8');
}
