import { readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** The repository root and its src/ folder. */
export const ROOT = resolve(import.meta.dirname, '../..');
export const SRC = join(ROOT, 'src');

/** Every .ts file below `dir`, as absolute paths. */
export function sources(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir)) {
    const p = join(dir, e);
    if (statSync(p).isDirectory()) sources(p, out);
    else if (p.endsWith('.ts')) out.push(p);
  }
  return out;
}
