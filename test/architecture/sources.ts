import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

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

/** Every relative import of a file (static, type-only and dynamic), as absolute .ts paths. */
export function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specs = [
    ...[...text.matchAll(/^(?:import|export)\s[^;]*?from\s+'(\.[^']+)'/gms)].map((m) => m[1]),
    ...[...text.matchAll(/import\('(\.[^']+)'\)/g)].map((m) => m[1]),
  ];
  // a .js specifier names the .ts source beside it, or a plain JavaScript file (the bench's generator)
  return specs.map((s) => {
    const path = resolve(dirname(file), s);
    const ts = path.replace(/\.js$/, '.ts');
    return ts !== path && !existsSync(ts) && existsSync(path) ? path : ts;
  });
}
